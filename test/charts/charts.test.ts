// Both Helm charts, checked with the real helm 4 binary (.tools/helm, fetched by
// scripts/fetch-tools.sh): lint --strict, and template with the default values and the files in
// test/charts/values/, asserting on the rendered objects — each valid against its schema
// (upstream Kubernetes schemas for built-in kinds, our CRDs for MCPServer/PlanPolicy).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { desiredChildren } from '../../operator/builders/mcpserver.ts';
import { syncPlan, valuesSchemaText, VALUES_SCHEMA } from '../../scripts/charts-sync.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { ROOT, loadCrd, validate } from '../operator/support/crd-schema.ts';
import { validateBuiltin } from '../operator/support/k8s-schema.ts';

const run = promisify(execFile);
const HELM = path.join(ROOT, '.tools/helm');
const PLATFORM = path.join(ROOT, 'charts/cryptomcp');
const CRDS_CHART = path.join(ROOT, 'charts/cryptomcp-crds');
const VALUES = path.join(ROOT, 'test/charts/values');
const valueFiles = fs.readdirSync(VALUES).filter((f) => f.endsWith('.yaml')).sort();
/** The defaults plus the one value they lack: where clients reach the service (the chart refuses web without it). */
const PUBLIC = ['--set', 'web.publicBaseUrl=https://mcp.example.com'];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run(HELM, args, { maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

async function render(chart: string, ...args: string[]): Promise<K8sObject[]> {
  const out = await helm('template', 'rel', chart, '--namespace', 'cryptomcp', ...args);
  return YAML.parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const mcpCrd = loadCrd('mcpservers.cryptomcp.dev.yaml');
const planCrd = loadCrd('planpolicies.cryptomcp.dev.yaml');

async function expectAllValid(objects: K8sObject[]): Promise<void> {
  for (const o of objects) {
    if (o.kind === 'MCPServer') expect(validate(mcpCrd, o), `${o.kind}/${o.metadata.name}`).toEqual([]);
    else if (o.kind === 'PlanPolicy') expect(validate(planCrd, o), `${o.kind}/${o.metadata.name}`).toEqual([]);
    else if (o.apiVersion === 'monitoring.coreos.com/v1') expect(o.spec, `${o.kind}/${o.metadata.name}`).toBeTypeOf('object');
    else expect(await validateBuiltin(o), `${o.kind}/${o.metadata.name} has a known schema`).toBe(true);
  }
}

describe('cryptomcp-crds chart', () => {
  it('passes helm lint --strict', async () => {
    await expect(helm('lint', '--strict', CRDS_CHART)).resolves.toMatch(/0 chart\(s\) failed/);
  });

  it('templates/ is byte-identical to crds/ (run npm run charts:sync after editing crds/)', () => {
    const crdCopies = syncPlan().filter((p) => p.to.startsWith(CRDS_CHART));
    expect(crdCopies.length).toBe(2);
    for (const { from, to } of crdCopies) expect(fs.readFileSync(to, 'utf8'), path.basename(to)).toBe(fs.readFileSync(from, 'utf8'));
    expect(fs.readdirSync(path.join(CRDS_CHART, 'templates')).sort()).toEqual(crdCopies.map((c) => path.basename(c.to)).sort());
  });

  it('renders exactly the two CRDs, kept on uninstall, valid CustomResourceDefinitions', async () => {
    const objects = await render(CRDS_CHART);
    expect(objects.map((o) => o.metadata.name).sort()).toEqual(['mcpservers.cryptomcp.dev', 'planpolicies.cryptomcp.dev']);
    for (const o of objects) {
      expect(o.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      expect(await validateBuiltin(o)).toBe(true);
    }
  });
});

describe('cryptomcp chart', () => {
  it.each([['(defaults)'], ...valueFiles.map((f) => [f])])('passes helm lint --strict with %s', async (file) => {
    const args = file === '(defaults)' ? PUBLIC : ['-f', path.join(VALUES, file)];
    await expect(helm('lint', '--strict', PLATFORM, ...args)).resolves.toMatch(/0 chart\(s\) failed/);
  });

  it.each([['(defaults)'], ...valueFiles.map((f) => [f])])('renders only schema-valid objects with %s', async (file) => {
    const objects = await render(PLATFORM, ...(file === '(defaults)' ? PUBLIC : ['-f', path.join(VALUES, file)]));
    expect(objects.length).toBeGreaterThan(0);
    await expectAllValid(objects);
  });

  it('defaults: operator with least-privilege RBAC, web, the four DESIGN §5 plans and the nine servers', async () => {
    const objects = await render(PLATFORM, ...PUBLIC);
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining(['ServiceAccount/rel-cryptomcp-operator', 'ClusterRole/cryptomcp-rel-cryptomcp-operator-planpolicies', 'Role/rel-cryptomcp-operator', 'Role/rel-cryptomcp-operator-own', 'Deployment/rel-cryptomcp-operator', 'Deployment/rel-cryptomcp-web', 'Service/rel-cryptomcp-web']),
    );
    expect(objects.filter((o) => o.kind === 'PlanPolicy').map((o) => o.spec)).toEqual([
      { plan: 'free', displayName: 'Free', credits: 150, renewal: 'OneTime', rateLimit: { requestsPerMinute: 30, burst: 10 }, maxKeys: 3 },
      { plan: 'basic', displayName: 'Basic', credits: 5000, renewal: 'Monthly', rateLimit: { requestsPerMinute: 60, burst: 20 }, maxKeys: 10, priceUsdCents: 2900 },
      { plan: 'pro', displayName: 'Pro', credits: 15000, renewal: 'Monthly', rateLimit: { requestsPerMinute: 180, burst: 40 }, maxKeys: 25, priceUsdCents: 7900 },
      { plan: 'premium', displayName: 'Premium', credits: 35000, renewal: 'Monthly', rateLimit: { requestsPerMinute: 600, burst: 100 }, maxKeys: 50, priceUsdCents: 19900 },
    ]);
    const servers = objects.filter((o) => o.kind === 'MCPServer');
    expect(servers.map((o) => (o.spec as { server: string }).server)).toEqual([...SERVER_NAMES]);
    for (const s of servers) expect(s.spec).toMatchObject({ database: { secretRef: { name: 'cryptomcp-database', key: 'url' } } });

    // RBAC (enforced against the operator in test/operator/rbac.test.ts): no wildcards; by
    // default a Role in the release namespace only; Secrets by name (get), never list or watch;
    // cluster-wide only PlanPolicies (cluster-scoped); Leases and Events in its own Role.
    const rbac = objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
    for (const role of rbac) {
      for (const r of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
        expect(r.verbs).not.toContain('*');
        expect(r.resources).not.toContain('*');
        if (r.resources.includes('secrets')) expect(r.verbs).toEqual(['get']);
      }
    }
    const operatorRole = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'rel-cryptomcp-operator')!;
    expect(operatorRole.metadata.namespace).toBe('cryptomcp');
    const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole' && !o.metadata.annotations?.['helm.sh/hook']);
    expect(clusterRoles.map((c) => c.metadata.name)).toEqual(['cryptomcp-rel-cryptomcp-operator-planpolicies']);
    expect((objects.find((o) => o.kind === 'Role' && o.metadata.name === 'rel-cryptomcp-operator-own')!.rules as { resources: string[] }[]).map((r) => r.resources)).toEqual([['leases'], ['events']]);
  });

  it('with watchNamespaces set, a Role and RoleBinding in each of those namespaces (Secrets by name only), nothing namespaced cluster-wide', async () => {
    const objects = await render(PLATFORM, ...PUBLIC, '--set', 'operator.watchNamespaces={team-a,team-b}');
    await expectAllValid(objects);
    const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole' && !o.metadata.annotations?.['helm.sh/hook']);
    expect(clusterRoles.map((c) => c.metadata.name)).toEqual(['cryptomcp-rel-cryptomcp-operator-planpolicies']);
    const roles = objects.filter((o) => o.kind === 'Role' && o.metadata.name === 'rel-cryptomcp-operator');
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    for (const role of roles) expect((role.rules as { resources: string[]; verbs: string[] }[]).find((r) => r.resources.includes('secrets'))!.verbs).toEqual(['get']);
    const bindings = objects.filter((o) => o.kind === 'RoleBinding' && (o.roleRef as { name: string }).name === 'rel-cryptomcp-operator');
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    for (const b of bindings) expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: 'rel-cryptomcp-operator', namespace: 'cryptomcp' }]);
  });

  it('every workload runs non-root, read-only, without privilege escalation, with liveness and readiness probes and the database from the existing secret', async () => {
    const objects = await render(PLATFORM, '-f', path.join(VALUES, 'production.yaml'));
    const deployments = objects.filter((o) => o.kind === 'Deployment') as unknown as { metadata: { name: string }; spec: { template: { spec: { securityContext: Record<string, unknown>; containers: Record<string, unknown>[]; imagePullSecrets?: unknown[] } } } }[];
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['rel-cryptomcp-gateway', 'rel-cryptomcp-operator', 'rel-cryptomcp-web']);
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
      for (const c of pod.containers) {
        expect(c.image).toBe('registry.example.com/cryptomcp:0.1.0');
        expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/healthz' } });
        expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz' } });
        expect(c.env).toContainEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'prod-db', key: 'dsn' } } });
      }
    }
    const operator = deployments.find((d) => d.metadata.name.endsWith('operator'))!.spec.template.spec.containers[0]!;
    expect(operator.command).toEqual(['node', 'operator/main.ts']);
    expect(operator.env).toEqual(
      expect.arrayContaining([
        { name: 'OPERATOR_IMAGE', value: 'registry.example.com/cryptomcp:0.1.0' },
        { name: 'WATCH_NAMESPACES', value: 'cryptomcp,cryptomcp-staging' },
        { name: 'LEADER_ELECTION', value: 'true' },
      ]),
    );
  });

  it('the web pods get PUBLIC_BASE_URL from the ingress host (or web.publicBaseUrl), DASHBOARD_ORIGIN only when set apart, and trust one proxy hop; with neither the chart refuses to render', async () => {
    const webEnv = async (...args: string[]) =>
      ((await render(PLATFORM, ...args)).find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('web')) as unknown as { spec: { template: { spec: { containers: { env: unknown[] }[] } } } }).spec.template.spec.containers[0]!.env;
    const viaIngress = await webEnv('--set', 'web.ingress.enabled=true', '--set', 'web.ingress.host=mcp.example.com', '--set', 'web.ingress.tlsSecretName=tls');
    expect(viaIngress).toEqual(expect.arrayContaining([{ name: 'PUBLIC_BASE_URL', value: 'https://mcp.example.com' }, { name: 'TRUST_PROXY_HOPS', value: '1' }]));
    // The service takes the dashboard's origin from PUBLIC_BASE_URL.
    expect(viaIngress).not.toContainEqual(expect.objectContaining({ name: 'DASHBOARD_ORIGIN' }));
    expect(await webEnv('--set', 'web.ingress.enabled=true', '--set', 'web.ingress.host=mcp.example.com')).toContainEqual({ name: 'PUBLIC_BASE_URL', value: 'http://mcp.example.com' });
    const set = await webEnv('--set', 'web.publicBaseUrl=https://api.example.com', '--set', 'web.dashboardOrigin=https://app.example.com', '--set', 'web.trustProxyHops=2');
    expect(set).toEqual(
      expect.arrayContaining([
        { name: 'PUBLIC_BASE_URL', value: 'https://api.example.com' },
        { name: 'DASHBOARD_ORIGIN', value: 'https://app.example.com' },
        { name: 'TRUST_PROXY_HOPS', value: '2' },
      ]),
    );
    // No origin where the dashboard and OAuth run: no render (the service would otherwise fall back to its pod address).
    for (const args of [[], ['--set', 'web.ingress.enabled=true'], ['--set', 'web.ingress.host=mcp.example.com']]) {
      await expect(render(PLATFORM, ...args), args.join(' ') || '(defaults)').rejects.toThrow(/set web.ingress.enabled=true with web.ingress.host, or web.publicBaseUrl/);
    }
    // Without web nothing needs an origin.
    expect((await render(PLATFORM, '--set', 'web.enabled=false')).some((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('web'))).toBe(false);
    await expect(render(PLATFORM, '--set', 'web.publicBaseUrl=https://mcp.example.com/?x=1')).rejects.toThrow(/schema|publicBaseUrl/);
  });

  it("the web pods get OAuth's registration limit, and the cookie key always from a Secret: the one named, else one the chart makes (random, kept), never derived from DATABASE_URL", async () => {
    const webEnv = async (...args: string[]) =>
      ((await render(PLATFORM, ...PUBLIC, ...args)).find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('web')) as unknown as { spec: { template: { spec: { containers: { env: unknown[] }[] } } } }).spec.template.spec.containers[0]!.env;
    const defaults = await webEnv();
    expect(defaults).toContainEqual({ name: 'OAUTH_REGISTER_LIMIT', value: '30' });
    expect(defaults).toContainEqual({ name: 'OAUTH_COOKIE_SECRET', valueFrom: { secretKeyRef: { name: 'rel-cryptomcp-oauth', key: 'key' } } });
    const made = (await render(PLATFORM, ...PUBLIC)).find((o) => o.kind === 'Secret' && o.metadata.name === 'rel-cryptomcp-oauth')!;
    expect(made.metadata.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
    expect(Buffer.from((made.data as { key: string }).key, 'base64').toString('utf8')).toMatch(/^[A-Za-z0-9]{48}$/);
    expect((await render(PLATFORM, ...PUBLIC, '--set', 'web.oauth.cookieSecretRef.name=oauth')).some((o) => o.kind === 'Secret')).toBe(false);
    const set = await webEnv('--set', 'web.oauth.cookieSecretRef.name=oauth', '--set', 'web.oauth.registerLimit=120');
    expect(set).toEqual(
      expect.arrayContaining([
        { name: 'OAUTH_REGISTER_LIMIT', value: '120' },
        { name: 'OAUTH_COOKIE_SECRET', valueFrom: { secretKeyRef: { name: 'oauth', key: 'key' } } },
      ]),
    );
    await expect(render(PLATFORM, ...PUBLIC, '--set', 'web.oauth.registerLimit=0')).rejects.toThrow(/registerLimit/);
  });

  it('the web pods and the gateway both get the x402 settings (the gateway serves /x402, the catalog on web names it)', async () => {
    const payTo = '0x1111111111111111111111111111111111111111';
    const objects = await render(PLATFORM, '--set', 'web.ingress.enabled=true', '--set', 'web.ingress.host=mcp.example.com', '--set', `web.payments.x402.payTo=${payTo}`);
    for (const name of ['rel-cryptomcp-web', 'rel-cryptomcp-gateway']) {
      const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as unknown as { spec: { template: { spec: { containers: { env: unknown[] }[] } } } };
      expect(d.spec.template.spec.containers[0]!.env, name).toContainEqual({ name: 'X402_PAY_TO', value: payTo });
    }
  });

  it('commonLabels and commonAnnotations reach every rendered object, and the MCPServers pass them to their children', async () => {
    const objects = await render(PLATFORM, '-f', path.join(VALUES, 'production.yaml'));
    for (const o of objects) {
      expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).toMatchObject({ team: 'platform', 'cost-center': '4711', 'app.kubernetes.io/part-of': 'cryptomcp' });
      expect(o.metadata.annotations, `${o.kind}/${o.metadata.name}`).toMatchObject({ 'example.com/owner': 'sre@example.com' });
    }
    const mcp = objects.filter((o) => o.kind === 'MCPServer');
    expect(mcp.map((o) => o.metadata.name)).toEqual(['price-prediction', 'market-intelligence', 'portfolio-analytics']);
    for (const o of mcp) {
      expect(o.spec).toMatchObject({ labels: { team: 'platform' }, annotations: { 'example.com/owner': 'sre@example.com' } });
      // servers.defaults.tracing reaches every server (the operator turns it into OTEL_* env).
      expect(o.spec).toMatchObject({ tracing: { endpoint: 'http://otel-collector.observability:4318', sampleRatio: 0.02, headersSecretRef: { name: 'otlp', key: 'headers' } } });
    }
    // A fixed count drops the HPA settings inherited from servers.defaults (the CRD forbids both).
    const pa = mcp.find((o) => o.metadata.name === 'portfolio-analytics')!.spec!;
    expect(pa.replicas).toBe(4);
    expect(pa).not.toHaveProperty('autoscaling');
    expect(mcp.find((o) => o.metadata.name === 'market-intelligence')!.spec).toMatchObject({ providers: { marketData: 'live' }, toolCostOverrides: { get_prices: 2 }, autoscaling: { minReplicas: 3, maxReplicas: 20 } });
  });

  it('monitoring values render a ServiceMonitor on the metrics ports, a PrometheusRule per rules file and a dashboard ConfigMap per dashboard', async () => {
    // Rendered from a copy of the chart synced from dashboards/ as it is now, so the check
    // covers the current rules and dashboards even while the committed copies lag behind
    // (npm run charts:sync refreshes them).
    const chart = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-chart-'));
    fs.cpSync(PLATFORM, chart, { recursive: true });
    fs.rmSync(path.join(chart, 'files'), { recursive: true, force: true });
    for (const { from, to } of syncPlan().filter((p) => p.to.startsWith(PLATFORM))) {
      const dest = path.join(chart, path.relative(PLATFORM, to));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.copyFileSync(from, dest);
    }
    const objects = await render(chart, '-f', path.join(VALUES, 'monitoring.yaml'));
    const sm = objects.find((o) => o.kind === 'ServiceMonitor')!;
    expect(sm.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    expect(sm.spec).toMatchObject({ endpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }] });
    const list = (dir: string, ext: string) => (fs.existsSync(path.join(chart, dir)) ? fs.readdirSync(path.join(chart, dir)).filter((f) => f.endsWith(ext)) : []);
    const rulesFiles = list('files/rules', '.yaml');
    expect(rulesFiles.length).toBeGreaterThan(0);
    const rules = objects.filter((o) => o.kind === 'PrometheusRule');
    expect(rules).toHaveLength(rulesFiles.length);
    for (const r of rules) expect((r.spec as { groups: unknown[] }).groups.length).toBeGreaterThan(0);
    const dashboards = list('files/dashboards', '.json');
    const maps = objects.filter((o) => o.kind === 'ConfigMap');
    expect(maps).toHaveLength(dashboards.length);
    for (const m of maps) {
      expect(m.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
      for (const json of Object.values(m.data as Record<string, string>)) expect(() => JSON.parse(json)).not.toThrow();
    }
    // Every runbook_url is absolute (a receiver can open it): the configured base plus the anchor.
    const alerts = (objs: K8sObject[]) => objs.filter((o) => o.kind === 'PrometheusRule').flatMap((r) => (r.spec as { groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[] }).groups.flatMap((g) => g.rules.filter((x) => x.alert)));
    expect(alerts(objects).map((a) => a.alert)).toEqual(expect.arrayContaining(['CryptomcpOperatorRetryStorm', 'CryptomcpOperatorNoLeader', 'CryptomcpAvailabilityBudgetBurn']));
    for (const a of alerts(objects)) expect(a.annotations!.runbook_url, a.alert).toBe(`https://github.com/cryptomcp/cryptomcp/blob/main/dashboards/runbook.md#${a.alert!.toLowerCase()}`);
    const custom = await render(chart, '-f', path.join(VALUES, 'monitoring.yaml'), '--set', 'monitoring.prometheusRule.runbookBaseUrl=https://wiki.example.com/sre/cryptomcp/');
    for (const a of alerts(custom)) expect(a.annotations!.runbook_url, a.alert).toBe(`https://wiki.example.com/sre/cryptomcp#${a.alert!.toLowerCase()}`);
    await expect(helm('template', 'rel', chart, '--set', 'monitoring.prometheusRule.runbookBaseUrl=dashboards/runbook.md')).rejects.toThrow(/schema/);
    // Off by default: the Prometheus Operator's CRDs may not exist in the cluster.
    expect((await render(chart, ...PUBLIC)).some((o) => o.apiVersion === 'monitoring.coreos.com/v1')).toBe(false);
    fs.rmSync(chart, { recursive: true, force: true });
  });

  it('the operator and web pods survive a node drain and a zone loss: PDBs, topology spread, and an operator startupProbe', async () => {
    const objects = await render(PLATFORM, ...PUBLIC);
    const pdbs = objects.filter((o) => o.kind === 'PodDisruptionBudget');
    expect(pdbs.map((p) => [p.metadata.name, p.spec])).toEqual([
      ['rel-cryptomcp-operator', { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'cryptomcp', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'operator' } } }],
      ['rel-cryptomcp-web', { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'cryptomcp', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'web' } } }],
      ['rel-cryptomcp-gateway', { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'cryptomcp', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'gateway' } } }],
    ]);
    for (const name of ['rel-cryptomcp-operator', 'rel-cryptomcp-web', 'rel-cryptomcp-gateway']) {
      const pod = (objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name)!.spec as { template: { metadata: { labels: Record<string, string> }; spec: { topologySpreadConstraints: { topologyKey: string; whenUnsatisfiable: string; labelSelector: { matchLabels: Record<string, string> } }[]; containers: { startupProbe?: unknown }[] } } }).template;
      expect(pod.spec.topologySpreadConstraints.map((c) => [c.topologyKey, c.whenUnsatisfiable])).toEqual([['kubernetes.io/hostname', 'ScheduleAnyway'], ['topology.kubernetes.io/zone', 'ScheduleAnyway']]);
      // Each constraint counts exactly this component's pods.
      for (const c of pod.spec.topologySpreadConstraints) for (const [k, v] of Object.entries(c.labelSelector.matchLabels)) expect(pod.metadata.labels[k]).toBe(v);
      expect(pod.spec.containers[0]!.startupProbe, name).toBeDefined();
    }
    // One replica: no budget that would block a drain.
    const single = await render(PLATFORM, ...PUBLIC, '--set', 'operator.replicas=1', '--set', 'web.autoscaling.minReplicas=1', '--set', 'gateway.autoscaling.enabled=false', '--set', 'gateway.replicas=1');
    expect(single.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
  });

  it('NetworkPolicies let the platform\'s pods be reached only on the ports they serve, from the peers given', async () => {
    const objects = await render(PLATFORM, ...PUBLIC, '--set', 'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring');
    await expectAllValid(objects);
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const ports = (p: K8sObject) => (p.spec as { ingress: { ports: { port: number }[] }[] }).ingress.flatMap((i) => i.ports.map((x) => x.port));
    expect(policies.map((p) => [p.metadata.name, ports(p)])).toEqual([
      ['rel-cryptomcp-operator', [9465]],
      ['rel-cryptomcp-web', [8080, 9464]],
      ['rel-cryptomcp-gateway', [8080, 9464]],
      ['rel-cryptomcp-mcp-servers', [8080, 9464]],
    ]);
    // The MCP server pods the operator creates match their policy's selector.
    const mcpPolicy = policies.find((p) => p.metadata.name === 'rel-cryptomcp-mcp-servers')!.spec as { podSelector: { matchLabels: Record<string, string> }; ingress: { ports: { port: number }[]; from?: unknown[] }[] };
    const pod = desiredChildren({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'kol-analytics', namespace: 'cryptomcp', uid: 'u' }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } } } }, { image: 'x', secretValues: {} }).children.find((c) => c.kind === 'Deployment') as { spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { containerPort: number }[] }[] } } } };
    for (const [k, v] of Object.entries(mcpPolicy.podSelector.matchLabels)) expect(pod.spec.template.metadata.labels[k], k).toBe(v);
    expect(pod.spec.template.spec.containers[0]!.ports.map((p) => p.containerPort)).toEqual([8080, 9464]);
    expect(mcpPolicy.ingress[1]!.from).toEqual([{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }]);
    expect(mcpPolicy.ingress[0]!.from).toBeUndefined();
    expect((await render(PLATFORM, ...PUBLIC, '--set', 'networkPolicy.enabled=false')).some((o) => o.kind === 'NetworkPolicy')).toBe(false);
  });

  it('migrations run as their own step: a pre-install/pre-upgrade hook Job running cryptomcp migrate, hardened like the other pods', async () => {
    const objects = await render(PLATFORM, '-f', path.join(VALUES, 'production.yaml'));
    const job = objects.find((o) => o.kind === 'Job' && o.metadata.name === 'rel-cryptomcp-migrate')!;
    expect(job.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    const pod = (job.spec as { template: { spec: { automountServiceAccountToken: boolean; imagePullSecrets: unknown[]; securityContext: Record<string, unknown>; containers: { command: string[]; args: string[]; env: { name: string; valueFrom?: unknown }[]; securityContext: Record<string, unknown> }[] } } }).template.spec;
    const c = pod.containers[0]!;
    expect([...c.command, ...c.args]).toEqual(['node', 'server/cli.ts', 'migrate']);
    expect(c.env.find((e) => e.name === 'DATABASE_URL')!.valueFrom).toEqual({ secretKeyRef: { name: 'prod-db', key: 'dsn' } });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod).toMatchObject({ automountServiceAccountToken: false, imagePullSecrets: [{ name: 'registry-creds' }], securityContext: { runAsNonRoot: true } });
    // The operator's own command never migrates (operator/ imports nothing of server/).
    const operator = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'rel-cryptomcp-operator')!.spec as { template: { spec: { containers: { command: string[] }[]; initContainers?: unknown[] } } };
    expect(operator.template.spec.containers[0]!.command).toEqual(['node', 'operator/main.ts']);
    expect((await render(PLATFORM, ...PUBLIC, '--set', 'migrations.job=false')).some((o) => o.metadata.name === 'rel-cryptomcp-migrate')).toBe(false);
  });

  it('the MCPServers get the chart\'s imagePullSecrets (as the operator and web pods do) unless they set their own', async () => {
    const objects = await render(PLATFORM, '-f', path.join(VALUES, 'production.yaml'), '--set', 'servers.overrides.price-prediction.imagePullSecrets[0].name=other-creds');
    const servers = objects.filter((o) => o.kind === 'MCPServer');
    expect(servers.length).toBe(3);
    for (const s of servers) {
      const want = s.metadata.name === 'price-prediction' ? [{ name: 'other-creds' }] : [{ name: 'registry-creds' }];
      expect((s.spec as { imagePullSecrets?: unknown }).imagePullSecrets, s.metadata.name).toEqual(want);
    }
    expect((await render(PLATFORM, ...PUBLIC)).filter((o) => o.kind === 'MCPServer').some((o) => 'imagePullSecrets' in (o.spec ?? {}))).toBe(false);
  });

  it('values.schema.json carries the MCPServer spec schema of crds/ (run npm run charts:sync after editing crds/)', () => {
    expect(fs.readFileSync(VALUES_SCHEMA, 'utf8')).toBe(valuesSchemaText());
  });

  it('values.schema.json refuses what the CRDs would refuse later, and two operator replicas without leader election', async () => {
    const cases: [string[], RegExp][] = [
      [['--set', 'operator.replicas=2', '--set', 'operator.leaderElection.enabled=false'], /leaderElection\/enabled': value must be true/],
      [['--set', 'servers.defaults.replicas=101'], /servers\/defaults\/replicas': maximum/],
      [['--set', 'servers.overrides.kol-analytics.labels.team=a b'], /labels\/team': .* does not match pattern/],
      [['--set', 'servers.defaults.nodeSelector.pool=a/b'], /nodeSelector\/pool/],
      [['--set', 'servers.defaults.tracing.endpoint=otel:4317'], /tracing\/endpoint/],
      [['--set', 'servers.defaults.replica=3'], /additional properties 'replica' not allowed/],
      [['--set', 'servers.overrides.kol-analytics.tolerations[0].effect=Sometimes'], /tolerations\/0\/effect/],
    ];
    for (const [args, message] of cases) await expect(helm('template', 'rel', PLATFORM, ...args), args.join(' ')).rejects.toThrow(message);
    // One replica without leader election is fine, and so is the production file.
    await expect(helm('template', 'rel', PLATFORM, ...PUBLIC, '--set', 'operator.replicas=1', '--set', 'operator.leaderElection.enabled=false')).resolves.toContain('kind: Deployment');
  });

  it('values.schema.json refuses wrong values before anything renders', async () => {
    for (const bad of [['--set', 'operator.replicas=0'], ['--set', 'plans.items[0].renewal=Weekly', '--set', 'plans.items[0].plan=x', '--set', 'plans.items[0].credits=1', '--set', 'plans.items[0].requestsPerMinute=1'], ['--set', 'servers.names[0]=weather'], ['--set', 'unknownKey=1'], ['--set', 'database.existingSecret=']]) {
      await expect(helm('template', 'rel', PLATFORM, ...bad), bad.join(' ')).rejects.toThrow(/values don't meet the specifications of the schema|schema/);
    }
  });
});
