// Pure builders: an MCPServer (plus the values of the secrets it references) in, the exact
// children the operator wants out. No I/O here, so every decision is unit-tested
// (test/operator/builders.test.ts) and a reconcile pass is just "build, apply, prune".
import { createHash } from 'node:crypto';
import type {
  V1Deployment,
  V1EnvVar,
  V1Ingress,
  V1OwnerReference,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1Service,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { API_VERSION, type MCPServer, type MCPServerSpec, type RpcSetting, type SecretKeyRef } from '../api/types.ts';

export const HTTP_PORT = 8080;
export const METRICS_PORT = 9464;
export const CONFIG_HASH_ANNOTATION = 'cryptomcp.dev/config-hash';
export const MANAGED_BY = 'cryptomcp-operator';
/**
 * On a Deployment whose replicas the operator applies (a fixed spec.replicas): the next pass that
 * finds it while an HPA should own the count performs the handoff (reconcile/mcpserver.ts).
 */
export const REPLICAS_FROM_SPEC_ANNOTATION = 'cryptomcp.dev/replicas-from-spec';

export type Child = V1Deployment | V1Service | V1Ingress | V2HorizontalPodAutoscaler | V1PodDisruptionBudget;

/** The kinds an MCPServer may own, with their API versions: the operator prunes among exactly these. */
export const CHILD_KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments' },
  { apiVersion: 'v1', kind: 'Service', plural: 'services' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses' },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets' },
] as const;

export interface BuildOptions {
  /** The shared server image the operator runs (its --image / OPERATOR_IMAGE). */
  image: string;
  /**
   * Values of the secret keys the spec references, "secret/key" → value (undefined when the
   * secret or key is missing). Only their hash reaches the children: a rotated database password
   * changes the pod template annotation and so rolls the pods.
   */
  secretValues: Record<string, string | undefined>;
}

export interface Desired {
  children: Child[];
  configHash: string;
  url: string;
}

const DEFAULT_RESOURCES = {
  // Measured: 273-379 MiB RSS under load (V8's old generation capped at 256 MB by NODE_OPTIONS).
  requests: { cpu: '100m', memory: '384Mi' },
  limits: { memory: '512Mi' },
};

const DEFAULT_POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

const DEFAULT_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

export const EVM_NETWORKS = ['ethereum', 'base', 'polygon', 'bsc'] as const;

/** Labels the operator owns; selectors use only the first two, which never change. */
export function selectorLabels(mcp: MCPServer): Record<string, string> {
  return { 'app.kubernetes.io/name': 'cryptomcp', 'app.kubernetes.io/instance': mcp.metadata.name };
}

function labels(mcp: MCPServer): Record<string, string> {
  return {
    ...mcp.spec.labels,
    ...selectorLabels(mcp),
    'app.kubernetes.io/component': 'mcp-server',
    'app.kubernetes.io/managed-by': MANAGED_BY,
    'cryptomcp.dev/server': mcp.spec.server,
  };
}

export function ownerReference(mcp: MCPServer): V1OwnerReference {
  if (!mcp.metadata.uid) throw new Error(`MCPServer ${mcp.metadata.name} has no uid`);
  return { apiVersion: API_VERSION, kind: 'MCPServer', name: mcp.metadata.name, uid: mcp.metadata.uid, controller: true, blockOwnerDeletion: true };
}

function meta(mcp: MCPServer, extraAnnotations: Record<string, string> = {}) {
  const annotations = { ...mcp.spec.annotations, ...extraAnnotations };
  return {
    name: mcp.metadata.name,
    namespace: mcp.metadata.namespace,
    labels: labels(mcp),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ownerReferences: [ownerReference(mcp)],
  };
}

/** Every secret key the spec references, as "secret/key", sorted. */
export function referencedSecretKeys(spec: MCPServerSpec): string[] {
  const refs: SecretKeyRef[] = [{ name: spec.database.secretRef.name, key: spec.database.secretRef.key ?? 'url' }];
  const cg = spec.providers?.coingecko?.apiKeySecretRef;
  if (cg) refs.push(cg);
  if (spec.tracing?.headersSecretRef) refs.push(spec.tracing.headersSecretRef);
  for (const net of EVM_NETWORKS) {
    const ref = spec.providers?.evm?.[net]?.secretRef;
    if (ref) refs.push(ref);
  }
  return [...new Set(refs.map((r) => `${r.name}/${r.key}`))].sort();
}

/** HPA owns the count when replicas is unset and autoscaling is not switched off. */
export function hpaOwnsReplicas(spec: MCPServerSpec): boolean {
  return spec.replicas === undefined && spec.autoscaling?.enabled !== false;
}

/** Where clients reach the pods: spec.publicBaseUrl, else the own Ingress's host, else none. */
export function publicOrigin(spec: MCPServerSpec): string | undefined {
  if (spec.publicBaseUrl) return spec.publicBaseUrl.replace(/\/+$/, '');
  const ing = spec.ingress;
  if (ing?.enabled && ing.host) return `${ing.tls ? 'https' : 'http'}://${ing.host}`;
  return undefined;
}

export function serviceUrl(mcp: MCPServer): string {
  const origin = publicOrigin(mcp.spec);
  if (origin) return `${origin}/mcp/${mcp.spec.server}`;
  return `http://${mcp.metadata.name}.${mcp.metadata.namespace}.svc:${HTTP_PORT}/mcp/${mcp.spec.server}`;
}

/**
 * Seconds a terminating pod keeps running untouched before SIGTERM (preStop), then keeps
 * accepting after it (DRAIN_DELAY_MS): Kubernetes removes the pod's endpoints as termination
 * starts, and kube-proxy and ingress controllers take a few seconds to stop sending it traffic.
 * A `node -e` sleep, not `sleep`: the image needs no shell or coreutils.
 */
export const PRE_STOP_SECONDS = 5;
export const DRAIN_DELAY_MS = 2000;

function secretEnv(name: string, ref: SecretKeyRef): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

function rpcEnv(name: string, rpc: RpcSetting | undefined): V1EnvVar[] {
  if (rpc?.secretRef) return [secretEnv(name, rpc.secretRef)];
  if (rpc?.url) return [{ name, value: rpc.url }];
  return [];
}

/** The server's environment (server/config.ts reads exactly these names). */
export function buildEnv(mcp: MCPServer): V1EnvVar[] {
  const spec = mcp.spec;
  const p = spec.providers ?? {};
  const overrides = Object.fromEntries(
    Object.entries(spec.toolCostOverrides ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([tool, credits]) => [`${spec.server}.${tool}`, credits]),
  );
  const env: V1EnvVar[] = [
    { name: 'MCP_SERVERS', value: spec.server },
    { name: 'HOST', value: '0.0.0.0' },
    { name: 'PORT', value: String(HTTP_PORT) },
    { name: 'METRICS_PORT', value: String(METRICS_PORT) },
    // The root filesystem is read-only; local state (none with DATABASE_URL set) goes to /tmp.
    { name: 'DATA_DIR', value: '/tmp/cryptomcp' },
    secretEnv('DATABASE_URL', { name: spec.database.secretRef.name, key: spec.database.secretRef.key ?? 'url' }),
    { name: 'DATABASE_POOL_MAX', value: String(spec.database.poolMax ?? 20) },
    { name: 'LOG_LEVEL', value: spec.logLevel ?? 'info' },
    { name: 'MARKET_DATA', value: p.marketData ?? 'snapshot' },
    { name: 'TOOL_COST_OVERRIDES', value: JSON.stringify(overrides) },
  ];
  env.push({ name: 'DRAIN_DELAY_MS', value: String(DRAIN_DELAY_MS) });
  const origin = publicOrigin(spec);
  if (origin) env.push({ name: 'PUBLIC_BASE_URL', value: origin });
  if (p.coingecko?.baseUrl) env.push({ name: 'COINGECKO_BASE_URL', value: p.coingecko.baseUrl });
  if (p.coingecko?.apiKeySecretRef) env.push(secretEnv('COINGECKO_API_KEY', p.coingecko.apiKeySecretRef));
  if (p.coingecko?.timeoutMs !== undefined) env.push({ name: 'COINGECKO_TIMEOUT_MS', value: String(p.coingecko.timeoutMs) });
  for (const net of EVM_NETWORKS) env.push(...rpcEnv(`${net.toUpperCase()}_RPC_URL`, p.evm?.[net]));
  if (p.evm?.timeoutMs !== undefined) env.push({ name: 'EVM_TIMEOUT_MS', value: String(p.evm.timeoutMs) });
  if (p.evm?.retries !== undefined) env.push({ name: 'EVM_RETRIES', value: String(p.evm.retries) });
  env.push(...tracingEnv(mcp));
  return env;
}

/**
 * Tracing's standard OTEL_* variables (server/telemetry/start.ts: the SDK reads them itself), or
 * none: without spec.tracing the pods load no tracing code. Each span's resource names the pod,
 * its namespace and the MCPServer, so a trace leads to the pod that served it.
 */
function tracingEnv(mcp: MCPServer): V1EnvVar[] {
  const t = mcp.spec.tracing;
  if (!t) return [];
  const env: V1EnvVar[] = [
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: t.endpoint },
    { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: t.protocol ?? 'http/protobuf' },
    { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
    { name: 'OTEL_TRACES_SAMPLER_ARG', value: String(t.sampleRatio ?? 0.01) },
    { name: 'OTEL_SERVICE_NAME', value: 'cryptomcp' },
    { name: 'OTEL_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'OTEL_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    // $(VAR) expands variables defined above it in the same list (Kubernetes dependent variables).
    {
      name: 'OTEL_RESOURCE_ATTRIBUTES',
      value: `k8s.pod.name=$(OTEL_POD_NAME),k8s.namespace.name=$(OTEL_POD_NAMESPACE),k8s.deployment.name=${mcp.metadata.name},cryptomcp.server=${mcp.spec.server}`,
    },
  ];
  if (t.headersSecretRef) env.push(secretEnv('OTEL_EXPORTER_OTLP_HEADERS', t.headersSecretRef));
  return env;
}

/**
 * Hash of everything the pods run with that the pod template alone does not show: the values
 * of referenced secret keys (a missing one hashes as missing, so its arrival rolls the pods too)
 * plus the image and environment, so the annotation is a single "what config is this" value.
 */
export function configHash(mcp: MCPServer, opts: BuildOptions): string {
  const secrets = referencedSecretKeys(mcp.spec).map((k) => [k, opts.secretValues[k] ?? null]);
  const input = JSON.stringify({ image: mcp.spec.image ?? opts.image, env: buildEnv(mcp), secrets });
  return createHash('sha256').update(input).digest('hex').slice(0, 16);
}

export function buildDeployment(mcp: MCPServer, opts: BuildOptions, hash: string): V1Deployment {
  const spec = mcp.spec;
  const podAnnotations = { ...spec.annotations, [CONFIG_HASH_ANNOTATION]: hash };
  // Leaving replicas out of the applied object releases the field to the HPA: the operator
  // never fights the autoscaler for it.
  const replicas = hpaOwnsReplicas(spec) ? {} : { replicas: spec.replicas ?? 1 };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(mcp, hpaOwnsReplicas(spec) ? {} : { [REPLICAS_FROM_SPEC_ANNOTATION]: 'true' }),
    spec: {
      ...replicas,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selectorLabels(mcp) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: {
        metadata: { labels: labels(mcp), annotations: podAnnotations },
        spec: {
          // The gateway never talks to the Kubernetes API.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // Longer than preStop (5 s) + DRAIN_DELAY_MS (2 s) + the server's drain (SHUTDOWN_TIMEOUT_MS, 10 s).
          terminationGracePeriodSeconds: 30,
          // The spec's settings go over the hardened defaults field by field: setting fsGroup
          // does not drop runAsNonRoot.
          securityContext: { ...DEFAULT_POD_SECURITY, ...spec.podSecurityContext },
          ...scheduling(mcp),
          containers: [
            {
              name: 'server',
              image: spec.image ?? opts.image,
              imagePullPolicy: spec.imagePullPolicy ?? 'IfNotPresent',
              // The image's two entry points are node + a .ts file (type stripping, no build step).
              command: ['node', 'server/cli.ts'],
              args: ['serve'],
              ports: [
                { name: 'http', containerPort: HTTP_PORT, protocol: 'TCP' },
                { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
              ],
              env: buildEnv(mcp),
              resources: spec.resources ? quantities(spec.resources) : DEFAULT_RESOURCES,
              securityContext: { ...DEFAULT_CONTAINER_SECURITY, ...spec.securityContext },
              // Loading the snapshot takes a few seconds on a cold pod; liveness waits for it.
              startupProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 30 },
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
              // /readyz checks the database and migrations: an unready pod leaves the Service.
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 3 },
              lifecycle: { preStop: { exec: { command: ['node', '-e', `setTimeout(() => {}, ${PRE_STOP_SECONDS * 1000})`] } } },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }],
        },
      },
    },
  };
}

/**
 * Where and as whom the pods run: pull secrets, service account, priority, node selection and
 * tolerations as the spec gives them; topology spread over zones and nodes by default, a
 * constraint of the spec replacing the default of its topologyKey (ScheduleAnyway, so a
 * one-zone cluster still schedules).
 */
export function scheduling(mcp: MCPServer): Partial<V1PodSpec> {
  const spec = mcp.spec;
  const own = { matchLabels: selectorLabels(mcp) };
  const given = (spec.topologySpreadConstraints ?? []).map((c) => ({ maxSkew: 1, labelSelector: own, ...c }));
  const defaults = ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']
    .filter((key) => !given.some((c) => c.topologyKey === key))
    .map((topologyKey) => ({ maxSkew: 1, topologyKey, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: own }));
  return {
    ...(spec.imagePullSecrets?.length ? { imagePullSecrets: spec.imagePullSecrets.map((s) => ({ name: s.name })) } : {}),
    // The token stays unmounted (automountServiceAccountToken false above): a service account
    // here is for workload identity, which works through projected tokens of its own.
    ...(spec.serviceAccountName ? { serviceAccountName: spec.serviceAccountName } : {}),
    ...(spec.priorityClassName ? { priorityClassName: spec.priorityClassName } : {}),
    ...(spec.nodeSelector && Object.keys(spec.nodeSelector).length ? { nodeSelector: spec.nodeSelector } : {}),
    ...(spec.tolerations?.length ? { tolerations: spec.tolerations as V1PodSpec['tolerations'] } : {}),
    ...(spec.affinity && Object.keys(spec.affinity).length ? { affinity: spec.affinity as V1PodSpec['affinity'] } : {}),
    topologySpreadConstraints: [...defaults, ...given] as V1PodSpec['topologySpreadConstraints'],
  };
}

/** Quantities as strings: `cpu: 2` and `cpu: "2"` are the same quantity to the API server. */
function quantities(r: NonNullable<MCPServerSpec['resources']>): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const str = (m: Record<string, string | number> | undefined) => (m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)])) : undefined);
  return { ...(r.requests ? { requests: str(r.requests) } : {}), ...(r.limits ? { limits: str(r.limits) } : {}) };
}

export function buildService(mcp: MCPServer): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(mcp),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(mcp),
      ports: [
        { name: 'http', port: HTTP_PORT, targetPort: 'http', protocol: 'TCP' },
        { name: 'metrics', port: METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}

export function buildIngress(mcp: MCPServer): V1Ingress | undefined {
  const ing = mcp.spec.ingress;
  if (!ing?.enabled) return undefined;
  const rule = {
    ...(ing.host ? { host: ing.host } : {}),
    http: {
      paths: [
        { path: `/mcp/${mcp.spec.server}`, pathType: 'Prefix', backend: { service: { name: mcp.metadata.name, port: { name: 'http' } } } },
      ],
    },
  };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: meta(mcp, ing.annotations),
    spec: {
      ...(ing.className ? { ingressClassName: ing.className } : {}),
      ...(ing.tls && ing.host ? { tls: [{ hosts: [ing.host], secretName: ing.tls.secretName }] } : {}),
      rules: [rule],
    },
  };
}

export function buildHpa(mcp: MCPServer): V2HorizontalPodAutoscaler | undefined {
  if (!hpaOwnsReplicas(mcp.spec)) return undefined;
  const a = mcp.spec.autoscaling ?? {};
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: meta(mcp),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: mcp.metadata.name },
      minReplicas: a.minReplicas ?? 2,
      maxReplicas: a.maxReplicas ?? 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: a.targetCPUUtilizationPercentage ?? 70 } } }],
    },
  };
}

export function buildPdb(mcp: MCPServer): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(mcp),
    spec: { maxUnavailable: mcp.spec.disruption?.maxUnavailable ?? 1, selector: { matchLabels: selectorLabels(mcp) } },
  };
}

/** Everything an MCPServer should own right now; anything else it owns is pruned. */
export function desiredChildren(mcp: MCPServer, opts: BuildOptions): Desired {
  const hash = configHash(mcp, opts);
  const children: (Child | undefined)[] = [buildDeployment(mcp, opts, hash), buildService(mcp), buildIngress(mcp), buildHpa(mcp), buildPdb(mcp)];
  return { children: children.filter((c): c is Child => c !== undefined), configHash: hash, url: serviceUrl(mcp) };
}
