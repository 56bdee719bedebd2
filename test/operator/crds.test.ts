// The CRDs in crds/ are what an SRE applies: their schemas must accept every example under
// crds/examples/ and reject the invalid specs the operator would otherwise have to catch.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { SERVER_NAMES as OPERATOR_SERVER_NAMES } from '../../operator/api/types.ts';
import { validateMcpServer } from '../../operator/builders/validate.ts';
import { CRD_DIR, loadCrd, loadYaml, structuralProblems, validate } from './support/crd-schema.ts';

const mcpCrd = loadCrd('mcpservers.cryptomcp.dev.yaml');
const planCrd = loadCrd('planpolicies.cryptomcp.dev.yaml');
const examplesDir = path.join(CRD_DIR, 'examples');
const examples = fs.readdirSync(examplesDir).map((f) => ({ file: f, obj: loadYaml(path.join(examplesDir, f)) }));

const baseServer = () => ({
  apiVersion: 'cryptomcp.dev/v1alpha1',
  kind: 'MCPServer',
  metadata: { name: 'mi', namespace: 'default' },
  spec: { server: 'market-intelligence', database: { secretRef: { name: 'db' } } } as Record<string, unknown>,
});
const basePlan = () => ({
  apiVersion: 'cryptomcp.dev/v1alpha1',
  kind: 'PlanPolicy',
  metadata: { name: 'team' },
  spec: { plan: 'team', credits: 1000, renewal: 'Monthly', rateLimit: { requestsPerMinute: 60, burst: 10 } } as Record<string, unknown>,
});

describe('CRD definitions', () => {
  it('are structural schemas (typed nodes, no $ref) with a status subresource, group cryptomcp.dev/v1alpha1 and the keep policy', () => {
    for (const crd of [mcpCrd, planCrd]) {
      expect(crd.spec.group).toBe('cryptomcp.dev');
      expect(crd.spec.versions.map((v) => v.name)).toEqual(['v1alpha1']);
      expect(crd.spec.versions[0]!.subresources?.status).toEqual({});
      expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      expect(structuralProblems(crd.spec.versions[0]!.schema.openAPIV3Schema)).toEqual([]);
    }
  });

  it('print the columns kubectl get shows (Ready/Replicas/URL/Age; Plan/Credits/Renewal/Synced/Age) and have short names', () => {
    const cols = (crd: typeof mcpCrd) => crd.spec.versions[0]!.additionalPrinterColumns!.map((c) => c.name);
    expect(cols(mcpCrd)).toEqual(expect.arrayContaining(['Ready', 'Replicas', 'URL', 'Age']));
    expect(cols(planCrd)).toEqual(expect.arrayContaining(['Plan', 'Credits', 'Renewal', 'Synced', 'Age']));
    expect(mcpCrd.spec.names.shortNames).toContain('mcps');
    expect(planCrd.spec.names.shortNames).toContain('plan');
  });

  it('list exactly the nine servers the gateway knows, which are the operator\'s list too', () => {
    const serverEnum = (mcpCrd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.server as { enum: string[] }).enum;
    expect(serverEnum).toEqual([...SERVER_NAMES]);
    expect([...OPERATOR_SERVER_NAMES]).toEqual(serverEnum);
    const planServers = planCrd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.servers!.items as { enum: string[] };
    expect(planServers.enum).toEqual([...SERVER_NAMES]);
  });
});

describe('examples', () => {
  it('cover the nine servers and the four plans of DESIGN §5', () => {
    const servers = examples.filter((e) => e.obj.kind === 'MCPServer').map((e) => (e.obj.spec as { server: string }).server);
    expect(servers.sort()).toEqual([...SERVER_NAMES].sort());
    const plans = examples.filter((e) => e.obj.kind === 'PlanPolicy').map((e) => e.obj.spec as Record<string, unknown>);
    expect(plans.map((p) => [p.plan, p.credits, p.renewal, (p.rateLimit as Record<string, number>).requestsPerMinute, (p.rateLimit as Record<string, number>).burst, p.maxKeys]).sort()).toEqual(
      [
        ['basic', 5000, 'Monthly', 60, 20, 10],
        ['free', 150, 'OneTime', 30, 10, 3],
        ['premium', 35000, 'Monthly', 600, 100, 50],
        ['pro', 15000, 'Monthly', 180, 40, 25],
      ],
    );
  });

  it.each(examples.map((e) => [e.file, e.obj] as const))('%s is accepted by its CRD schema', (_file, obj) => {
    const crd = obj.kind === 'MCPServer' ? mcpCrd : planCrd;
    expect(validate(crd, obj)).toEqual([]);
  });
});

describe('MCPServer schema rejects invalid specs', () => {
  const cases: [string, (s: Record<string, unknown>) => void, RegExp][] = [
    ['an unknown server', (s) => (s.server = 'weather'), /allowed values|enum/],
    ['no database secret', (s) => delete s.database, /database/],
    ['replicas beside enabled autoscaling', (s) => Object.assign(s, { replicas: 2, autoscaling: { enabled: true } }), /either spec.replicas/],
    ['minReplicas above maxReplicas', (s) => (s.autoscaling = { minReplicas: 5, maxReplicas: 2 }), /minReplicas must not exceed/],
    ['replicas above 100', (s) => (s.replicas = 101), /<= 100/],
    ['TLS without a host', (s) => (s.ingress = { enabled: true, tls: { secretName: 'x' } }), /tls needs spec.ingress.host/],
    ['an invalid host', (s) => (s.ingress = { enabled: true, host: 'Not A Host' }), /pattern/],
    ['a negative tool cost', (s) => (s.toolCostOverrides = { get_prices: -1 }), />= 0/],
    ['an RPC with both url and secretRef', (s) => (s.providers = { evm: { base: { url: 'https://x.example', secretRef: { name: 'a', key: 'b' } } } }), /exactly one of url and secretRef/],
    ['an unknown market data mode', (s) => (s.providers = { marketData: 'cache' }), /allowed values|enum/],
    ['a bad quantity', (s) => (s.resources = { requests: { cpu: 'lots' } }), /pattern/],
    ['tracing without an endpoint', (s) => (s.tracing = { sampleRatio: 0.1 }), /endpoint/],
    ['a tracing endpoint that is not an HTTP(S) URL', (s) => (s.tracing = { endpoint: 'otel-collector:4317' }), /pattern/],
    ['a sample ratio above 1', (s) => (s.tracing = { endpoint: 'http://c:4318', sampleRatio: 10 }), /<= 1/],
    ['an unknown OTLP protocol', (s) => (s.tracing = { endpoint: 'http://c:4318', protocol: 'udp' }), /allowed values|enum/],
    ['a label value with a space', (s) => (s.labels = { team: 'the platform' }), /pattern/],
    ['a label value over 63 characters', (s) => (s.labels = { team: 'x'.repeat(64) }), /63/],
    ['a node selector value with a slash', (s) => (s.nodeSelector = { pool: 'a/b' }), /pattern/],
    ['a pull secret that is not a name', (s) => (s.imagePullSecrets = [{ name: 'Registry Creds' }]), /pattern/],
    ['an unknown toleration effect', (s) => (s.tolerations = [{ key: 'dedicated', operator: 'Exists', effect: 'Sometimes' }]), /allowed values|enum/],
    ['a spread constraint without whenUnsatisfiable', (s) => (s.topologySpreadConstraints = [{ topologyKey: 'kubernetes.io/hostname' }]), /whenUnsatisfiable/],
  ];
  it.each(cases)('%s', (_name, mutate, message) => {
    const obj = baseServer();
    mutate(obj.spec);
    const errors = validate(mcpCrd, obj);
    expect(errors.join('\n')).toMatch(message);
  });

  it.each([
    ['72 characters starting with a digit (the issue\'s example)', `7${'a'.repeat(71)}`],
    ['64 characters', `a${'b'.repeat(63)}`],
    ['a leading digit', '9lives'],
    ['a dot (fine for a ConfigMap, not for a Service)', 'market.intelligence'],
    ['upper case', 'Market'],
  ])('refuses a name a Service could not have: %s', (_what, name) => {
    const obj = { ...baseServer(), metadata: { name, namespace: 'default' } };
    expect(validate(mcpCrd, obj).join('\n')).toMatch(/metadata\/name: must (match pattern|NOT have more than 63)/);
    // The operator checks again, for objects stored before this rule (Accepted=False, no children).
    expect(validateMcpServer(obj.spec as never, name).join('\n')).toMatch(/DNS-1035 label/);
  });

  it('accepts the scheduling and identity fields, and a 63-character name', () => {
    const obj = baseServer();
    obj.metadata.name = `a${'b'.repeat(62)}`;
    Object.assign(obj.spec, {
      imagePullSecrets: [{ name: 'registry-creds' }],
      serviceAccountName: 'cryptomcp-workload',
      priorityClassName: 'high-priority',
      nodeSelector: { 'node.kubernetes.io/pool': 'mcp' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'mcp', effect: 'NoSchedule' }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }] } } },
      topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', maxSkew: 1 }],
    });
    expect(validate(mcpCrd, obj)).toEqual([]);
    expect(validateMcpServer(obj.spec as never, obj.metadata.name)).toEqual([]);
  });

  it('label, annotation and node selector keys are checked by the operator (no CEL on map keys)', () => {
    const spec = { ...baseServer().spec, labels: { 'bad key': 'x', [`${'p'.repeat(10)}/${'n'.repeat(64)}`]: 'y' }, annotations: { 'example.com/ok': 'any value at all', '/no-name': 'z' }, nodeSelector: { 'Not_A/prefix/x': 'a' } };
    const problems = validateMcpServer(spec as never, 'mi');
    expect(problems).toEqual([
      'spec.labels: "bad key" is not a valid key ([prefix/]name, name at most 63 characters)',
      `spec.labels: "${'p'.repeat(10)}/${'n'.repeat(64)}" is not a valid key ([prefix/]name, name at most 63 characters)`,
      'spec.annotations: "/no-name" is not a valid key ([prefix/]name, name at most 63 characters)',
      'spec.nodeSelector: "Not_A/prefix/x" is not a valid key ([prefix/]name, name at most 63 characters)',
    ]);
  });

  it('exposes the scale subresource on spec.replicas / status.replicas / status.selector', () => {
    expect((mcpCrd.spec.versions[0]!.subresources as Record<string, unknown>).scale).toEqual({ specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' });
  });

  it('defaults: HPA 2..10 at 70% CPU, PDB maxUnavailable 1, snapshot data, secret key "url"', () => {
    // validate() applies defaults to its own copy; a valid object yields no errors, and the
    // defaults are what the builders assume when fields are absent (operator/builders tests).
    const obj = { ...baseServer(), spec: { ...baseServer().spec, autoscaling: {} } };
    expect(validate(mcpCrd, obj)).toEqual([]);
    const schema = mcpCrd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!;
    expect(schema.autoscaling!.properties!.minReplicas!.default).toBe(2);
    expect(schema.autoscaling!.properties!.maxReplicas!.default).toBe(10);
    expect(schema.disruption!.properties!.maxUnavailable!.default).toBe(1);
  });

  it('keeps every CEL rule off unbounded map keys (tool names and label keys are checked by the operator instead)', () => {
    const rules = JSON.stringify(mcpCrd.spec.versions[0]!.schema.openAPIV3Schema);
    expect(rules).not.toMatch(/matches\(|startsWith\(/);
    expect(validateMcpServer({ server: 'market-intelligence', database: { secretRef: { name: 'db' } }, toolCostOverrides: { 'market-intelligence.get_prices': 2 } })).toEqual([
      'spec.toolCostOverrides: "market-intelligence.get_prices" is not a tool name',
    ]);
  });

  it('spec.server is immutable on update', () => {
    const old = baseServer();
    const next = baseServer();
    next.spec.server = 'kol-analytics';
    expect(validate(mcpCrd, next, old).join('\n')).toMatch(/immutable/);
    expect(validate(mcpCrd, old, old)).toEqual([]);
  });
});

describe('PlanPolicy schema rejects invalid specs', () => {
  const cases: [string, (s: Record<string, unknown>) => void, RegExp][] = [
    ['an invalid plan name', (s) => (s.plan = 'Team Plan'), /pattern/],
    ['negative credits', (s) => (s.credits = -5), />= 0/],
    ['an unknown renewal', (s) => (s.renewal = 'Weekly'), /allowed values|enum/],
    ['burst above the rate', (s) => (s.rateLimit = { requestsPerMinute: 10, burst: 20 }), /burst must not exceed/],
    ['a zero rate', (s) => (s.rateLimit = { requestsPerMinute: 0 }), />= 1/],
    ['an unknown server', (s) => (s.servers = ['weather']), /allowed values|enum/],
    ['no servers', (s) => (s.servers = []), /fewer than 1|minItems|NOT have fewer/],
    ['zero keys', (s) => (s.maxKeys = 0), />= 1/],
    ['no rate limit', (s) => delete s.rateLimit, /rateLimit/],
  ];
  it.each(cases)('%s', (_name, mutate, message) => {
    const obj = basePlan();
    mutate(obj.spec);
    expect(validate(planCrd, obj).join('\n')).toMatch(message);
  });

  it('a rate of 5 a minute with no burst is accepted (burst defaults to min(10, rate) in the operator, not 10 in the schema)', () => {
    const obj = basePlan();
    obj.spec.rateLimit = { requestsPerMinute: 5 };
    expect(validate(planCrd, obj)).toEqual([]);
  });

  it('spec.plan is immutable on update', () => {
    const next = basePlan();
    next.spec.plan = 'team2';
    expect(validate(planCrd, next, basePlan()).join('\n')).toMatch(/immutable/);
  });
});
