// The operator's view of its two custom resources (crds/*.yaml is the source of truth; these
// types follow it field by field) and the condition vocabulary it writes into their status.

export const GROUP = 'cryptomcp.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/**
 * The nine MCP servers, in the catalog's order: the enum of the MCPServer CRD's spec.server
 * (crds/ is the contract with the gateway; test/operator/crds.test.ts keeps the two equal).
 */
export const SERVER_NAMES = [
  'price-prediction',
  'market-intelligence',
  'blockchain-explorer',
  'token-intelligence',
  'portfolio-analytics',
  'whale-intelligence',
  'social-intelligence',
  'kol-analytics',
  'project-intelligence',
] as const;

/** The one server-side apply field manager for every object the operator writes. */
export const FIELD_MANAGER = 'cryptomcp-operator';
/** Guards plan rows: removed only once no account is on the plan any more. */
export const PLAN_FINALIZER = 'cryptomcp.dev/plan-in-use';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface RpcSetting {
  url?: string;
  secretRef?: SecretKeyRef;
}

export interface MCPServerSpec {
  server: string;
  image?: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  replicas?: number;
  autoscaling?: { enabled?: boolean; minReplicas?: number; maxReplicas?: number; targetCPUUtilizationPercentage?: number };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  podSecurityContext?: Record<string, unknown>;
  securityContext?: Record<string, unknown>;
  imagePullSecrets?: { name: string }[];
  serviceAccountName?: string;
  priorityClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
  topologySpreadConstraints?: (Record<string, unknown> & { topologyKey: string; whenUnsatisfiable: string; maxSkew?: number; labelSelector?: unknown })[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** PUBLIC_BASE_URL of the pods (a shared Ingress routes {origin}/mcp/{server} to them). */
  publicBaseUrl?: string;
  ingress?: { enabled?: boolean; host?: string; className?: string; annotations?: Record<string, string>; tls?: { secretName: string } };
  database: { secretRef: { name: string; key?: string }; poolMax?: number };
  providers?: {
    marketData?: 'snapshot' | 'live';
    coingecko?: { baseUrl?: string; apiKeySecretRef?: SecretKeyRef; timeoutMs?: number };
    evm?: { ethereum?: RpcSetting; base?: RpcSetting; polygon?: RpcSetting; bsc?: RpcSetting; timeoutMs?: number; retries?: number };
  };
  toolCostOverrides?: Record<string, number>;
  tracing?: { endpoint: string; protocol?: 'http/protobuf' | 'http/json' | 'grpc'; sampleRatio?: number; headersSecretRef?: SecretKeyRef };
  logLevel?: string;
  disruption?: { maxUnavailable?: number | string };
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface MCPServerStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  replicaSummary?: string;
  /** The pods' label selector, for the scale subresource. */
  selector?: string;
  url?: string;
  configHash?: string;
  conditions?: Condition[];
}

export interface MCPServer {
  apiVersion: typeof API_VERSION;
  kind: 'MCPServer';
  metadata: ObjectMeta;
  spec: MCPServerSpec;
  status?: MCPServerStatus;
}

export interface PlanPolicySpec {
  plan: string;
  displayName?: string;
  credits: number;
  renewal: 'OneTime' | 'Monthly';
  rateLimit: { requestsPerMinute: number; burst?: number };
  servers?: string[];
  maxKeys?: number;
  /** Monthly price in integer USD cents; absent or 0: not for sale. */
  priceUsdCents?: number;
}

export interface PlanPolicyStatus {
  observedGeneration?: number;
  syncedAt?: string;
  accounts?: number;
  conditions?: Condition[];
}

export interface PlanPolicy {
  apiVersion: typeof API_VERSION;
  kind: 'PlanPolicy';
  metadata: ObjectMeta;
  spec: PlanPolicySpec;
  status?: PlanPolicyStatus;
}

/** Condition types and reasons, declared once (kstatus reads Ready; Accepted says the spec is usable). */
export const Conditions = {
  Accepted: 'Accepted',
  Available: 'Available',
  Ready: 'Ready',
  Synced: 'Synced',
  /** False while another operator installation manages the object's children (or the object). */
  Owned: 'Owned',
} as const;

export const Reasons = {
  Valid: 'Valid',
  InvalidSpec: 'InvalidSpec',
  PlanConflict: 'PlanConflict',
  Progressing: 'Progressing',
  RolledOut: 'RolledOut',
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  Upserted: 'Upserted',
  DatabaseError: 'DatabaseError',
  PlanInUse: 'PlanInUse',
  ApplyFailed: 'ApplyFailed',
  ManagedByAnotherOperator: 'ManagedByAnotherOperator',
  ChildNotControlled: 'ChildNotControlled',
} as const;
