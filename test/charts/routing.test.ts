// The chart as an SRE would sign it off (issue 34), from `helm template` with the real helm and
// the operator's own builders for what it renders from each MCPServer:
// - every public path reaches the pods meant for it, and those pods autoscale: /mcp/{server} the
//   server's own Deployment, /mcp and /x402 the gateway, the rest the web pods;
// - the database connection budget of the defaults fits max_connections=100, by the formula in
//   docs/kubernetes.md computed here from the rendered objects, and the chart refuses one that
//   does not fit;
// - every `serve` pod drains (preStop, DRAIN_DELAY_MS, no unavailable pod during a rollout), has
//   requests above its measured use and probes with a 3 s timeout;
// - image digests, the Secret checksum, monitoring and network policies of the watched namespaces.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { MCPServer } from '../../operator/api/types.ts';
import { desiredChildren } from '../../operator/builders/mcpserver.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { ROOT } from '../operator/support/crd-schema.ts';

const run = promisify(execFile);
const HELM = path.join(ROOT, '.tools/helm');
const PLATFORM = path.join(ROOT, 'charts/cryptomcp');
const ORIGIN = 'https://mcp.example.com';
const INGRESS = ['--set', 'web.ingress.enabled=true', '--set', 'web.ingress.host=mcp.example.com', '--set', 'web.ingress.tlsSecretName=tls'];
/** operator/db/pool.ts's fixed pool size, read from the source so the budget follows it. */
const OPERATOR_POOL = Number(/max: (\d+),/.exec(fs.readFileSync(path.join(ROOT, 'operator/db/pool.ts'), 'utf8'))![1]);

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  [k: string]: unknown;
}

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { timeoutSeconds?: number };
  livenessProbe?: { timeoutSeconds?: number };
  startupProbe?: { timeoutSeconds?: number };
}

async function render(...args: string[]): Promise<Obj[]> {
  const { stdout } = await run(HELM, ['template', 'rel', PLATFORM, '--namespace', 'cryptomcp', ...args], { maxBuffer: 32 * 1024 * 1024 });
  return YAML.parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/** The rendered objects plus what the operator builds from each rendered MCPServer. */
async function cluster(...args: string[]): Promise<Obj[]> {
  const objects = await render(...args);
  const children = objects
    .filter((o) => o.kind === 'MCPServer')
    .flatMap((m) => desiredChildren({ ...(m as unknown as MCPServer), metadata: { ...m.metadata, uid: `uid-${m.metadata.name}` } }, { image: 'img', secretValues: {} }).children as unknown as Obj[]);
  return [...objects, ...children];
}

const find = (objects: Obj[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const env = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;
const containerOf = (d: Obj): Container => d.spec.template.spec.containers[0];

/** Which Service an HTTP path reaches through the Ingresses, as a controller decides: the longest matching prefix. */
function backendOf(objects: Obj[], requestPath: string): string | undefined {
  const candidates = objects
    .filter((o) => o.kind === 'Ingress')
    .flatMap((i) => (i.spec.rules as { host?: string; http: { paths: { path: string; pathType: string; backend: { service: { name: string } } }[] } }[]).flatMap((r) => r.http.paths))
    .filter((p) => (p.pathType === 'Exact' ? requestPath === p.path : p.path === '/' || requestPath === p.path || requestPath.startsWith(`${p.path}/`)))
    .sort((a, b) => b.path.length - a.path.length);
  return candidates[0]?.backend.service.name;
}

/** The Deployment a Service sends to (its selector matches the pod template's labels), and the HPA scaling it. */
function podsBehind(objects: Obj[], service: string): { deployment: Obj; hpa: Obj | undefined } {
  const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === service);
  expect(svc, `Service ${service}`).toBeDefined();
  const selector = svc!.spec.selector as Record<string, string>;
  const deployments = objects.filter((o) => o.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => o.spec.template.metadata.labels[k] === v));
  expect(deployments.map((d) => d.metadata.name), `Deployments behind ${service}`).toHaveLength(1);
  const deployment = deployments[0]!;
  const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === deployment.metadata.name);
  return { deployment, hpa };
}

describe('public routing: path routing on one host', () => {
  it('/mcp/{server} reaches that server\'s own autoscaled pods, /mcp and /x402 the autoscaled gateway, and the dashboard, /api, /oauth and the well-known documents the autoscaled web pods', async () => {
    const objects = await cluster(...INGRESS);
    const ingresses = objects.filter((o) => o.kind === 'Ingress');
    // One Ingress, one host: the operator renders none of its own for the chart's servers.
    expect(ingresses.map((i) => i.metadata.name)).toEqual(['rel-cryptomcp-web']);
    expect(ingresses[0]!.spec.rules.map((r: { host: string }) => r.host)).toEqual(['mcp.example.com']);

    const routes: [string, string][] = [
      ...SERVER_NAMES.map((s): [string, string] => [`/mcp/${s}`, s]),
      ['/mcp', 'rel-cryptomcp-gateway'],
      ...SERVER_NAMES.map((s): [string, string] => [`/x402/mcp/${s}`, 'rel-cryptomcp-gateway']),
      ['/', 'rel-cryptomcp-web'],
      ['/app/', 'rel-cryptomcp-web'],
      ['/api/account', 'rel-cryptomcp-web'],
      ['/oauth/authorize', 'rel-cryptomcp-web'],
      ['/oauth/token', 'rel-cryptomcp-web'],
      ['/.well-known/oauth-authorization-server', 'rel-cryptomcp-web'],
      ['/.well-known/oauth-protected-resource/mcp/kol-analytics', 'rel-cryptomcp-web'],
      ['/v1/catalog', 'rel-cryptomcp-web'],
    ];
    for (const [p, service] of routes) expect(backendOf(objects, p), p).toBe(service);

    for (const [p, service] of routes) {
      const { deployment, hpa } = podsBehind(objects, service);
      // Autoscaled: an HPA owns the count and may add pods.
      expect(hpa, `${p}: HPA of ${deployment.metadata.name}`).toBeDefined();
      expect(hpa!.spec.maxReplicas, p).toBeGreaterThan(hpa!.spec.minReplicas);
      expect(deployment.spec.replicas, `${p}: replicas left to the HPA`).toBeUndefined();
      const c = containerOf(deployment);
      if (p.startsWith('/mcp/')) expect(env(c, 'MCP_SERVERS'), p).toBe(p.slice('/mcp/'.length));
      else expect(env(c, 'MCP_SERVERS'), `${p}: all nine servers`).toBeUndefined();
      // Every pod names the public origin, never its own address (a 401's resource metadata URL).
      expect(env(c, 'PUBLIC_BASE_URL'), p).toBe(ORIGIN);
    }
  });

  it('the server pods name the public origin also without the chart\'s ingress (web.publicBaseUrl), and a server with an ingress of its own is left to it', async () => {
    const objects = await cluster('--set', `web.publicBaseUrl=${ORIGIN}`, '--set', 'servers.overrides.kol-analytics.ingress.enabled=true', '--set', 'servers.overrides.kol-analytics.ingress.host=kol.example.com', ...INGRESS.slice(0, 2));
    for (const s of SERVER_NAMES) {
      const d = find(objects, 'Deployment', s)!;
      expect(env(containerOf(d), 'PUBLIC_BASE_URL'), s).toBe(ORIGIN);
      expect(find(objects, 'MCPServer', s)!.spec.publicBaseUrl).toBe(ORIGIN);
    }
    const paths = objects.filter((o) => o.kind === 'Ingress' && o.metadata.name === 'rel-cryptomcp-web').flatMap((i) => i.spec.rules[0].http.paths.map((p: { path: string }) => p.path));
    expect(paths).not.toContain('/mcp/kol-analytics');
    expect(backendOf(objects, '/mcp/kol-analytics')).toBe('kol-analytics');
  });
});

/** docs/kubernetes.md's formula, from the rendered objects: every pool at its maximum scale during a rolling update. */
function connectionBudget(objects: Obj[]): { total: number; parts: Record<string, number> } {
  const parts: Record<string, number> = {};
  for (const d of objects.filter((o) => o.kind === 'Deployment')) {
    const c = containerOf(d);
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === d.metadata.name);
    const most = hpa ? (hpa.spec.maxReplicas as number) : (d.spec.replicas as number);
    const surge = String(d.spec.strategy?.rollingUpdate?.maxSurge ?? '25%');
    const surged = most + (surge.endsWith('%') ? Math.ceil((most * Number(surge.slice(0, -1))) / 100) : Number(surge));
    const isOperator = c.name === 'operator';
    const pool = isOperator ? OPERATOR_POOL : Number(env(c, 'DATABASE_POOL_MAX') ?? 20);
    parts[d.metadata.name] = surged * pool;
  }
  return { total: Object.values(parts).reduce((a, b) => a + b, 0), parts };
}

describe('database connection budget', () => {
  it('the defaults fit max_connections=100 (97 after the 3 superuser slots): 96 connections at the maximum, as docs/kubernetes.md\'s table says', async () => {
    const { total, parts } = connectionBudget(await cluster(...INGRESS));
    expect(parts).toMatchObject({ 'rel-cryptomcp-web': 8, 'rel-cryptomcp-gateway': 8, 'rel-cryptomcp-operator': 8 });
    for (const s of SERVER_NAMES) expect(parts[s], s).toBe(8);
    expect(total).toBe(96);
    expect(total).toBeLessThanOrEqual(97);
    expect(fs.readFileSync(path.join(ROOT, 'docs/kubernetes.md'), 'utf8')).toMatch(/\| \*\*total\*\* \| \| \| \| \*\*96\*\* \|/);
  });

  it('the chart refuses to render a budget above database.maxConnections, naming the total; behind a pooler, raising it renders', async () => {
    await expect(render(...INGRESS, '--set', 'servers.defaults.autoscaling.maxReplicas=10')).rejects.toThrow(/may open 258 connections .* database.maxConnections is 97/);
    await expect(render(...INGRESS, '--set', 'web.databasePoolMax=20')).rejects.toThrow(/database connection budget/);
    const big = await cluster(...INGRESS, '--set', 'servers.defaults.autoscaling.maxReplicas=10', '--set', 'database.maxConnections=400');
    expect(connectionBudget(big).total).toBe(258);
  });
});

describe('rollouts, resources and probes', () => {
  it('every serve pod (web, gateway, each server) waits in preStop (node, no shell), keeps accepting DRAIN_DELAY_MS after SIGTERM, rolls with no pod unavailable, and has time for all of it', async () => {
    const objects = await cluster(...INGRESS);
    const serve = objects.filter((o) => o.kind === 'Deployment' && containerOf(o).name !== 'operator');
    expect(serve).toHaveLength(SERVER_NAMES.length + 2);
    for (const d of serve) {
      const c = containerOf(d);
      const cmd = c.lifecycle?.preStop?.exec?.command;
      expect(cmd?.[0], d.metadata.name).toBe('node');
      const preStopMs = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(cmd!.join(' '))![1]);
      expect(preStopMs, d.metadata.name).toBeGreaterThanOrEqual(5000);
      const drain = Number(env(c, 'DRAIN_DELAY_MS'));
      expect(drain, d.metadata.name).toBeGreaterThan(0);
      expect(d.spec.strategy.rollingUpdate.maxUnavailable, d.metadata.name).toBe(0);
      // preStop + drain delay + SHUTDOWN_TIMEOUT_MS (10 s) within the grace period.
      expect(d.spec.template.spec.terminationGracePeriodSeconds * 1000, d.metadata.name).toBeGreaterThan(preStopMs + drain + 10_000);
    }
  });

  it('requests cover measured use (server pods 273-379 MiB, operator 148-195 MiB idle); web probes time out after 3 s, not 1', async () => {
    const mib = (q: string) => (q.endsWith('Gi') ? Number(q.slice(0, -2)) * 1024 : Number(q.replace(/Mi$/, '')));
    const objects = await cluster(...INGRESS);
    for (const d of objects.filter((o) => o.kind === 'Deployment')) {
      const c = containerOf(d);
      const request = mib(c.resources!.requests!.memory!);
      const limit = mib(c.resources!.limits!.memory!);
      if (c.name === 'operator') expect(request, d.metadata.name).toBeGreaterThanOrEqual(200);
      else expect(request, d.metadata.name).toBeGreaterThanOrEqual(380);
      expect(limit, d.metadata.name).toBeGreaterThan(request);
      if (c.name !== 'operator') for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) expect(probe?.timeoutSeconds, d.metadata.name).toBeGreaterThanOrEqual(3);
    }
  });

  it('web and gateway wait for the hook Job to migrate (MIGRATE_ON_START=false); without the Job they migrate at start', async () => {
    const withJob = await render(...INGRESS);
    const withoutJob = await render(...INGRESS, '--set', 'migrations.job=false');
    for (const name of ['rel-cryptomcp-web', 'rel-cryptomcp-gateway']) {
      expect(env(containerOf(find(withJob, 'Deployment', name)!), 'MIGRATE_ON_START'), name).toBe('false');
      expect(env(containerOf(find(withoutJob, 'Deployment', name)!), 'MIGRATE_ON_START'), name).toBeUndefined();
    }
  });
});

describe('images, secrets, monitoring and policies', () => {
  it('image.digest pins every pod by digest, the operator\'s MCPServer pods included', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const objects = await render(...INGRESS, '--set', 'image.repository=registry.example.com/cryptomcp', '--set', 'image.tag=0.1.0', '--set', `image.digest=${digest}`);
    const pinned = `registry.example.com/cryptomcp@${digest}`;
    const pods = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job').map((o) => [o.metadata.name, containerOf(o).image]);
    expect(pods.length).toBeGreaterThanOrEqual(4);
    for (const [name, image] of pods) expect(image, name).toBe(pinned);
    expect(env(containerOf(find(objects, 'Deployment', 'rel-cryptomcp-operator')!), 'OPERATOR_IMAGE')).toBe(pinned);
    await expect(render(...INGRESS, '--set', 'image.digest=latest')).rejects.toThrow(/digest/);
  });

  it('web and gateway pods carry a checksum of the Secrets they read, so a rotated Secret rolls them on upgrade (the server pods roll by the operator\'s config-hash)', async () => {
    const checksum = async (...args: string[]) => {
      const objects = await render(...INGRESS, ...args);
      return ['rel-cryptomcp-web', 'rel-cryptomcp-gateway'].map((n) => find(objects, 'Deployment', n)!.spec.template.metadata.annotations['checksum/secrets'] as string);
    };
    const [web, gateway] = await checksum();
    expect(web).toMatch(/^[a-f0-9]{64}$/);
    expect(gateway).toBe(web);
    expect((await checksum('--set', 'database.existingSecret=other'))[0]).not.toBe(web);
    expect((await checksum('--set', 'web.oauth.cookieSecretRef.name=oauth'))[0]).not.toBe(web);
    expect((await checksum('--set', 'web.payments.x402.payTo=0x1111111111111111111111111111111111111111', '--set', 'web.payments.x402.settlementKeySecretRef.name=x402'))[0]).not.toBe(web);
    expect(fs.readFileSync(path.join(PLATFORM, 'templates/_helpers.tpl'), 'utf8')).toMatch(/lookup "v1" "Secret"/);
  });

  it('with watchNamespaces, the ServiceMonitor scrapes and the MCP server NetworkPolicy covers each watched namespace too', async () => {
    const objects = await render(...INGRESS, '--set', 'operator.watchNamespaces={team-a,cryptomcp}', '--set', 'monitoring.serviceMonitor.enabled=true');
    const sm = objects.find((o) => o.kind === 'ServiceMonitor')!;
    expect(sm.spec.namespaceSelector.matchNames).toEqual(['cryptomcp', 'team-a']);
    // The absence alerts select on `component`, copied from each Service's label.
    expect(sm.spec.endpoints[0].relabelings).toEqual([{ sourceLabels: ['__meta_kubernetes_service_label_app_kubernetes_io_component'], targetLabel: 'component' }]);
    const rules = fs.readFileSync(path.join(ROOT, 'dashboards/rules/cryptomcp.rules.yaml'), 'utf8') + fs.readFileSync(path.join(ROOT, 'dashboards/rules/cryptomcp-operator.rules.yaml'), 'utf8');
    const components = [...rules.matchAll(/up\{component="([a-z-]+)"\}/g)].map((m) => m[1]);
    expect(new Set(components)).toEqual(new Set(['web', 'gateway', 'mcp-server', 'operator']));
    const services = (await cluster(...INGRESS)).filter((o) => o.kind === 'Service');
    for (const c of new Set(components)) expect(services.some((s) => s.metadata.labels?.['app.kubernetes.io/component'] === c), `a Service labelled ${c}`).toBe(true);
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-cryptomcp-mcp-servers');
    expect(policies.map((p) => p.metadata.namespace)).toEqual(['cryptomcp', 'team-a']);
  });
});

describe('dashboards the chart ships', () => {
  it('each has cluster and namespace variables (and server where its metrics have one), and every query of a raw metric filters by them', () => {
    const dir = path.join(PLATFORM, 'files/dashboards');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBe(5);
    for (const file of files) {
      const model = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { templating: { list: { name: string; type: string; includeAll?: boolean; allValue?: string }[] }; panels: { targets?: { expr: string }[] }[] };
      const vars = model.templating.list.map((v) => v.name);
      const server = file.includes('overview') || file.includes('servers');
      expect(vars, file).toEqual(['datasource', 'cluster', 'namespace', ...(server ? ['server'] : [])]);
      for (const v of model.templating.list.filter((x) => x.type === 'query')) expect([v.includeAll, v.allValue], `${file} ${v.name}`).toEqual([true, '.*']);
      const exprs = model.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
      expect(exprs.length, file).toBeGreaterThan(3);
      for (const expr of exprs) {
        for (const m of expr.matchAll(/\b((?:cryptomcp|mcp_server)_[a-z0-9_]+)(\{[^}]*\})?/g)) {
          expect(m[2], `${file}: ${expr}`).toContain('cluster=~"$cluster"');
          expect(m[2], `${file}: ${expr}`).toContain('namespace=~"$namespace"');
        }
      }
      if (server) expect(exprs.some((e) => e.includes('server=~"$server"')), file).toBe(true);
    }
  });
});
