// The pure builders decide every child an MCPServer gets. These tests pin the exact children of
// representative specs, the label/annotation propagation, who owns replicas, and that the
// config hash moves exactly when the pods' configuration does.
import path from 'node:path';
import type { V1Deployment, V1Ingress, V1PodDisruptionBudget, V1Service, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { MCPServer, PlanPolicySpec } from '../../operator/api/types.ts';
import { mergeConditions } from '../../operator/builders/conditions.ts';
import { CONFIG_HASH_ANNOTATION, desiredChildren, referencedSecretKeys, type BuildOptions } from '../../operator/builders/mcpserver.ts';
import { acceptedStatus, rejectedStatus, rolloutOf } from '../../operator/builders/status.ts';
import { planFromPolicy, validateMcpServer } from '../../operator/builders/validate.ts';
import { CRD_DIR, loadYaml } from './support/crd-schema.ts';
import { validateBuiltin } from './support/k8s-schema.ts';

const IMAGE = 'ghcr.io/example/cryptomcp:0.1.0';
const opts = (secretValues: Record<string, string | undefined> = { 'db/url': 'postgres://a' }): BuildOptions => ({ image: IMAGE, secretValues });

function server(spec: Partial<MCPServer['spec']> = {}, name = 'mi'): MCPServer {
  return {
    apiVersion: 'cryptomcp.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: { name, namespace: 'prod', uid: 'uid-1', generation: 3 },
    spec: { server: 'market-intelligence', database: { secretRef: { name: 'db' } }, ...spec },
  };
}

function byKind<T>(mcp: MCPServer, kind: string, o = opts()): T | undefined {
  return desiredChildren(mcp, o).children.find((c) => c.kind === kind) as T | undefined;
}

const owner = { apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', name: 'mi', uid: 'uid-1', controller: true, blockOwnerDeletion: true };
const selector = { 'app.kubernetes.io/name': 'cryptomcp', 'app.kubernetes.io/instance': 'mi' };
const labels = { ...selector, 'app.kubernetes.io/component': 'mcp-server', 'app.kubernetes.io/managed-by': 'cryptomcp-operator', 'cryptomcp.dev/server': 'market-intelligence' };

describe('MCPServer children', () => {
  it('a minimal spec gets Deployment, Service, HPA and PDB (no Ingress), all named after the resource and owned by it', () => {
    const kids = desiredChildren(server(), opts()).children;
    expect(kids.map((c) => c.kind)).toEqual(['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']);
    for (const c of kids) {
      expect(c.metadata).toMatchObject({ name: 'mi', namespace: 'prod', labels, ownerReferences: [owner] });
    }
  });

  it('every child is valid against the upstream Kubernetes schema, for every example in crds/examples', async () => {
    const files = ['mcpserver-market-intelligence.yaml', 'mcpserver-portfolio-analytics.yaml', 'mcpserver-blockchain-explorer.yaml', 'mcpserver-project-intelligence.yaml', 'mcpserver-price-prediction.yaml'];
    let checked = 0;
    for (const f of files) {
      const mcp = loadYaml(path.join(CRD_DIR, 'examples', f)) as unknown as MCPServer;
      mcp.metadata.uid = 'u';
      for (const child of desiredChildren(mcp, opts()).children) {
        expect(await validateBuiltin(child)).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it('the Deployment runs the shared image with MCP_SERVERS=<server>, probes /healthz and /readyz, the metrics port and the database secret', () => {
    const dep = byKind<V1Deployment>(server(), 'Deployment')!;
    const pod = dep.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.image).toBe(IMAGE);
    expect(c.command).toEqual(['node', 'server/cli.ts']);
    expect(c.args).toEqual(['serve']);
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    expect(c.env).toEqual([
      { name: 'MCP_SERVERS', value: 'market-intelligence' },
      { name: 'HOST', value: '0.0.0.0' },
      { name: 'PORT', value: '8080' },
      { name: 'METRICS_PORT', value: '9464' },
      { name: 'DATA_DIR', value: '/tmp/cryptomcp' },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'db', key: 'url' } } },
      { name: 'DATABASE_POOL_MAX', value: '20' },
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'MARKET_DATA', value: 'snapshot' },
      { name: 'TOOL_COST_OVERRIDES', value: '{}' },
      { name: 'DRAIN_DELAY_MS', value: '2000' },
    ]);
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(dep.spec!.selector.matchLabels).toEqual(selector);
    expect(dep.spec!.template.metadata!.labels).toEqual(labels);
  });

  it('pods run non-root with a read-only root, no privilege escalation and no capabilities; the settings of the spec merge over these, never replace them', () => {
    const pod = byKind<V1Deployment>(server(), 'Deployment')!.spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(pod.automountServiceAccountToken).toBe(false);
    const custom = byKind<V1Deployment>(server({ securityContext: { runAsUser: 2000 }, podSecurityContext: { fsGroup: 7 } }), 'Deployment')!.spec!.template.spec!;
    expect(custom.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, runAsUser: 2000 });
    expect(custom.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 7, seccompProfile: { type: 'RuntimeDefault' } });
  });

  it('scheduling and identity fields reach the pods; topology spread over zones and nodes by default, a constraint of the spec replacing its key', async () => {
    const plain = byKind<V1Deployment>(server(), 'Deployment')!.spec!.template.spec!;
    expect(plain.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
    ]);
    for (const field of ['imagePullSecrets', 'serviceAccountName', 'priorityClassName', 'nodeSelector', 'tolerations', 'affinity']) expect(plain, field).not.toHaveProperty(field);

    const toleration = { key: 'dedicated', operator: 'Equal', value: 'mcp', effect: 'NoSchedule' };
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }] } } };
    const dep = byKind<V1Deployment>(
      server({
        imagePullSecrets: [{ name: 'registry-creds' }],
        serviceAccountName: 'mcp-workload',
        priorityClassName: 'high',
        nodeSelector: { 'node.kubernetes.io/pool': 'mcp' },
        tolerations: [toleration],
        affinity,
        topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }],
      }),
      'Deployment',
    )!;
    const pod = dep.spec!.template.spec!;
    expect(pod).toMatchObject({ imagePullSecrets: [{ name: 'registry-creds' }], serviceAccountName: 'mcp-workload', priorityClassName: 'high', nodeSelector: { 'node.kubernetes.io/pool': 'mcp' }, tolerations: [toleration], affinity });
    // The hardened defaults stay: no token even with a service account, non-root, read-only.
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: selector } },
    ]);
    expect(await validateBuiltin(dep)).toBe(true);
  });

  it('provider settings become env: literal RPC URLs as values, secret-held ones and API keys as secretKeyRefs; tool costs are prefixed with the server', () => {
    const env = byKind<V1Deployment>(
      server({
        providers: {
          marketData: 'live',
          coingecko: { baseUrl: 'https://pro.example/api', apiKeySecretRef: { name: 'prov', key: 'cg' }, timeoutMs: 5000 },
          evm: { ethereum: { secretRef: { name: 'prov', key: 'eth' } }, base: { url: 'https://base.example' }, retries: 4 },
        },
        toolCostOverrides: { get_prices: 2, compare_tokens: 0 },
      }),
      'Deployment',
    )!.spec!.template.spec!.containers[0]!.env!;
    const get = (n: string) => env.find((e) => e.name === n);
    expect(get('MARKET_DATA')?.value).toBe('live');
    expect(get('COINGECKO_BASE_URL')?.value).toBe('https://pro.example/api');
    expect(get('COINGECKO_API_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 'prov', key: 'cg' } });
    expect(get('COINGECKO_TIMEOUT_MS')?.value).toBe('5000');
    expect(get('ETHEREUM_RPC_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'prov', key: 'eth' } });
    expect(get('BASE_RPC_URL')?.value).toBe('https://base.example');
    expect(get('POLYGON_RPC_URL')).toBeUndefined();
    expect(get('EVM_RETRIES')?.value).toBe('4');
    expect(JSON.parse(get('TOOL_COST_OVERRIDES')!.value!)).toEqual({ 'market-intelligence.compare_tokens': 0, 'market-intelligence.get_prices': 2 });
  });

  it('spec.tracing becomes the standard OTEL_* env (the headers from a secret) and a resource naming the pod; without it no OTEL_* at all', () => {
    const envOf = (mcp: MCPServer) => byKind<V1Deployment>(mcp, 'Deployment')!.spec!.template.spec!.containers[0]!.env!;
    expect(envOf(server()).filter((e) => e.name.startsWith('OTEL_'))).toEqual([]);
    const env = envOf(server({ tracing: { endpoint: 'http://otel-collector.observability:4318', sampleRatio: 0.05, headersSecretRef: { name: 'otlp', key: 'headers' } } }));
    const get = (n: string) => env.find((e) => e.name === n);
    expect(get('OTEL_EXPORTER_OTLP_ENDPOINT')?.value).toBe('http://otel-collector.observability:4318');
    expect(get('OTEL_EXPORTER_OTLP_PROTOCOL')?.value).toBe('http/protobuf');
    expect(get('OTEL_TRACES_SAMPLER')?.value).toBe('parentbased_traceidratio');
    expect(get('OTEL_TRACES_SAMPLER_ARG')?.value).toBe('0.05');
    expect(get('OTEL_EXPORTER_OTLP_HEADERS')?.valueFrom).toEqual({ secretKeyRef: { name: 'otlp', key: 'headers' } });
    // Dependent variables: the pod's name and namespace are defined before the attribute list that uses them.
    const names = env.map((e) => e.name);
    expect(names.indexOf('OTEL_POD_NAME')).toBeLessThan(names.indexOf('OTEL_RESOURCE_ATTRIBUTES'));
    expect(get('OTEL_POD_NAME')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(get('OTEL_RESOURCE_ATTRIBUTES')?.value).toBe(
      'k8s.pod.name=$(OTEL_POD_NAME),k8s.namespace.name=$(OTEL_POD_NAMESPACE),k8s.deployment.name=mi,cryptomcp.server=market-intelligence',
    );
    expect(envOf(server({ tracing: { endpoint: 'http://c:4317', protocol: 'grpc' } })).find((e) => e.name === 'OTEL_TRACES_SAMPLER_ARG')?.value).toBe('0.01');
    // The headers secret is configuration: its value rolls the pods.
    expect(referencedSecretKeys(server({ tracing: { endpoint: 'http://c:4318', headersSecretRef: { name: 'otlp', key: 'headers' } } }).spec)).toEqual(['db/url', 'otlp/headers']);
  });

  it('extra labels and annotations reach every child and the pod template; operator labels win over user labels', () => {
    const mcp = server({ labels: { team: 'data', 'app.kubernetes.io/instance': 'spoofed' }, annotations: { 'example.com/owner': 'sre' }, ingress: { enabled: true, host: 'mcp.example.com', annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1m' } } });
    const kids = desiredChildren(mcp, opts()).children;
    expect(kids).toHaveLength(5);
    for (const c of kids) {
      expect(c.metadata!.labels).toMatchObject({ team: 'data', 'app.kubernetes.io/instance': 'mi' });
      expect(c.metadata!.annotations).toMatchObject({ 'example.com/owner': 'sre' });
    }
    const dep = kids.find((c) => c.kind === 'Deployment') as V1Deployment;
    expect(dep.spec!.template.metadata!.labels).toMatchObject({ team: 'data' });
    expect(dep.spec!.template.metadata!.annotations).toMatchObject({ 'example.com/owner': 'sre' });
    // Selectors never carry user labels: they are immutable on a Deployment.
    expect(dep.spec!.selector.matchLabels).toEqual(selector);
    const ing = kids.find((c) => c.kind === 'Ingress') as V1Ingress;
    expect(ing.metadata!.annotations).toEqual({ 'example.com/owner': 'sre', 'nginx.ingress.kubernetes.io/proxy-body-size': '1m' });
    expect(kids.find((c) => c.kind === 'Service')!.metadata!.annotations).toEqual({ 'example.com/owner': 'sre' });
  });

  it('with replicas unset the HPA owns the count (the Deployment leaves replicas out); with replicas set there is no HPA', () => {
    const hpaDep = byKind<V1Deployment>(server(), 'Deployment')!;
    expect(hpaDep.spec).not.toHaveProperty('replicas');
    expect(byKind<V2HorizontalPodAutoscaler>(server({ autoscaling: { minReplicas: 3, maxReplicas: 7, targetCPUUtilizationPercentage: 55 } }), 'HorizontalPodAutoscaler')!.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'mi' },
      minReplicas: 3,
      maxReplicas: 7,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 55 } } }],
    });
    const fixed = server({ replicas: 4 });
    expect(byKind<V1Deployment>(fixed, 'Deployment')!.spec!.replicas).toBe(4);
    expect(byKind(fixed, 'HorizontalPodAutoscaler')).toBeUndefined();
    const off = server({ autoscaling: { enabled: false } });
    expect(byKind<V1Deployment>(off, 'Deployment')!.spec!.replicas).toBe(1);
    expect(byKind(off, 'HorizontalPodAutoscaler')).toBeUndefined();
  });

  it('Service, Ingress (path /mcp/<server>, TLS) and PDB are exactly as specified', () => {
    const mcp = server({ ingress: { enabled: true, host: 'mcp.example.com', className: 'nginx', tls: { secretName: 'tls' } }, disruption: { maxUnavailable: '50%' } });
    expect(byKind<V1Service>(mcp, 'Service')!.spec).toEqual({
      type: 'ClusterIP',
      selector,
      ports: [
        { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
        { name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP' },
      ],
    });
    expect(byKind<V1Ingress>(mcp, 'Ingress')!.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['mcp.example.com'], secretName: 'tls' }],
      rules: [{ host: 'mcp.example.com', http: { paths: [{ path: '/mcp/market-intelligence', pathType: 'Prefix', backend: { service: { name: 'mi', port: { name: 'http' } } } }] } }],
    });
    expect(byKind<V1PodDisruptionBudget>(mcp, 'PodDisruptionBudget')!.spec).toEqual({ maxUnavailable: '50%', selector: { matchLabels: selector } });
    expect(desiredChildren(mcp, opts()).url).toBe('https://mcp.example.com/mcp/market-intelligence');
    expect(desiredChildren(server(), opts()).url).toBe('http://mi.prod.svc:8080/mcp/market-intelligence');
  });

  it('the config hash changes when a referenced secret value, the env or the image changes, and not otherwise', () => {
    const hashOf = (mcp: MCPServer, o: BuildOptions) => desiredChildren(mcp, o).configHash;
    const podHash = (mcp: MCPServer, o: BuildOptions) => (desiredChildren(mcp, o).children[0] as V1Deployment).spec!.template.metadata!.annotations![CONFIG_HASH_ANNOTATION];
    const base = hashOf(server(), opts());
    expect(podHash(server(), opts())).toBe(base);
    expect(hashOf(server(), opts())).toBe(base);
    expect(hashOf(server(), opts({ 'db/url': 'postgres://b' }))).not.toBe(base);
    expect(hashOf(server(), opts({}))).not.toBe(base); // secret missing, then created: rolls
    expect(hashOf(server({ toolCostOverrides: { get_prices: 3 } }), opts())).not.toBe(base);
    expect(hashOf(server(), { ...opts(), image: 'other:1' })).not.toBe(base);
    // Secrets the spec does not reference do not roll the pods.
    expect(hashOf(server(), opts({ 'db/url': 'postgres://a', 'unrelated/key': 'x' }))).toBe(base);
    // Scaling is not configuration.
    expect(hashOf(server({ autoscaling: { maxReplicas: 20 } }), opts())).toBe(base);
    expect(referencedSecretKeys(server({ providers: { coingecko: { apiKeySecretRef: { name: 'p', key: 'k' } } } }).spec)).toEqual(['db/url', 'p/k']);
  });
});

describe('MCPServer status', () => {
  const now = new Date('2026-11-21T10:00:00Z');
  const dep = (status: V1Deployment['status'], generation = 1): V1Deployment => ({ metadata: { generation }, spec: { replicas: 2, selector: {}, template: {} }, status });

  it('is Ready only once every replica is updated and available (kubectl rollout status semantics)', () => {
    expect(rolloutOf(undefined).ready).toBe(false);
    expect(rolloutOf(dep({ observedGeneration: 0, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 })).ready).toBe(false);
    expect(rolloutOf(dep({ observedGeneration: 1, replicas: 3, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 })).message).toMatch(/old replicas/);
    expect(rolloutOf(dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 1, readyReplicas: 1 })).ready).toBe(false);
    const done = rolloutOf(dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] }));
    expect(done).toMatchObject({ ready: true, available: true, replicas: 2, readyReplicas: 2 });
  });

  it('conditions carry observedGeneration, and an unchanged pass keeps lastTransitionTime (no status loop)', () => {
    const rollout = rolloutOf(undefined);
    const first = acceptedStatus(server(), { rollout, url: 'u', configHash: 'h' }, now);
    expect(first.conditions!.map((c) => [c.type, c.status, c.observedGeneration])).toEqual([
      ['Accepted', 'True', 3],
      ['Available', 'False', 3],
      ['Ready', 'False', 3],
    ]);
    const again = acceptedStatus({ ...server(), status: first }, { rollout, url: 'u', configHash: 'h' }, new Date('2026-11-21T11:00:00Z'));
    expect(again).toEqual(first);
    const flipped = mergeConditions(first.conditions, [{ type: 'Ready', status: 'True', reason: 'RolledOut', message: 'm' }], 3, new Date('2026-11-21T12:00:00Z'));
    expect(flipped.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe('2026-11-21T12:00:00Z');
    expect(flipped.find((c) => c.type === 'Accepted')!.lastTransitionTime).toBe('2026-11-21T10:00:00Z');
  });

  it('an invalid spec yields Accepted=False with the reason and every problem', () => {
    const bad = server({ server: 'weather', replicas: 2, autoscaling: { enabled: true } });
    const problems = validateMcpServer(bad.spec);
    expect(problems).toHaveLength(2);
    const status = rejectedStatus(bad, problems, now);
    expect(status.conditions!.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'InvalidSpec', observedGeneration: 3 });
    expect(status.conditions!.find((c) => c.type === 'Accepted')!.message).toMatch(/weather.*replicas or spec.autoscaling/);
    expect(validateMcpServer(server().spec)).toEqual([]);
  });
});

describe('PlanPolicy → plans row', () => {
  const spec: PlanPolicySpec = { plan: 'team', credits: 9000, renewal: 'Monthly', rateLimit: { requestsPerMinute: 120, burst: 30 }, servers: ['kol-analytics', 'price-prediction'], maxKeys: 5 };
  it('maps every field onto the gateway schema (renewal spelling, catalog order of servers)', () => {
    expect(planFromPolicy(spec)).toEqual({
      ok: true,
      plan: { name: 'team', display_name: 'Team', credits: 9000, renewal: 'monthly', requests_per_minute: 120, burst: 30, servers: ['price-prediction', 'kol-analytics'], max_keys: 5, price_cents: null },
    });
  });
  it('carries the monthly price in integer USD cents (0 or absent: not for sale) and refuses a fractional or negative one', () => {
    const priced = planFromPolicy({ ...spec, priceUsdCents: 4900 });
    expect(priced.ok && priced.plan.price_cents).toBe(4900);
    const zero = planFromPolicy({ ...spec, priceUsdCents: 0 });
    expect(zero.ok && zero.plan.price_cents).toBe(null);
    for (const bad of [12.5, -1]) {
      const r = planFromPolicy({ ...spec, priceUsdCents: bad });
      expect(!r.ok && r.problems.join()).toMatch(/priceUsdCents/);
    }
  });
  it('applies the defaults (burst min(10, rate), 3 keys, all nine servers) when fields are absent', () => {
    const r = planFromPolicy({ plan: 'free', credits: 150, renewal: 'OneTime', rateLimit: { requestsPerMinute: 30 } });
    expect(r.ok && r.plan).toMatchObject({ burst: 10, max_keys: 3, renewal: 'one-time', display_name: 'Free' });
    expect(r.ok && r.plan.servers).toHaveLength(9);
    // The case: 5 a minute and no burst was refused because a defaulted burst of 10 exceeded it.
    const slow = planFromPolicy({ plan: 'trial', credits: 10, renewal: 'OneTime', rateLimit: { requestsPerMinute: 5 } });
    expect(slow.ok && slow.plan.burst).toBe(5);
  });
  it('refuses invalid specs with every problem named', () => {
    const r = planFromPolicy({ ...spec, plan: 'Bad Name', credits: -1, rateLimit: { requestsPerMinute: 10, burst: 11 }, servers: ['weather'] });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems.join('\n')).toMatch(/spec.plan[\s\S]*credits[\s\S]*burst must not exceed[\s\S]*unknown weather/);
  });
});
