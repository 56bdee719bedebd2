// The operator's own check of a spec before acting on it. The CRD schema already rejects these
// at admission; the operator checks again because it may meet objects stored under an older CRD
// (or a cluster without CEL validation), and an invalid spec must stop with a False Accepted
// condition rather than a crash-looping Deployment or a half-written plan row.
import { SERVER_NAMES, type MCPServerSpec, type PlanPolicySpec } from '../api/types.ts';
import type { PlanRow } from '../db/plans.ts';

const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A label or annotation key as Kubernetes requires: [prefix/]name, prefix a DNS subdomain (253), name 63. */
export function isQualifiedName(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_1123_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

/**
 * Problems with an MCPServer's name and spec, as one message per problem; empty when usable. The
 * name becomes the name of its Service, so it must be a DNS-1035 label.
 */
export function validateMcpServer(spec: MCPServerSpec | undefined, name?: string): string[] {
  if (!spec) return ['spec is missing'];
  const problems: string[] = [];
  if (name !== undefined && (name.length > 63 || !DNS_1035_LABEL.test(name))) {
    problems.push(`metadata.name "${name}" must be a DNS-1035 label (at most 63 lower-case letters, digits or '-', starting with a letter), as its Service is named after it`);
  }
  for (const [field, map, checkValues] of [['labels', spec.labels, true], ['annotations', spec.annotations, false], ['nodeSelector', spec.nodeSelector, true]] as const) {
    for (const [key, value] of Object.entries(map ?? {})) {
      if (!isQualifiedName(key)) problems.push(`spec.${field}: "${key}" is not a valid key ([prefix/]name, name at most 63 characters)`);
      else if (checkValues && (value.length > 63 || !LABEL_VALUE.test(value))) problems.push(`spec.${field}.${key}: "${value}" is not a valid label value`);
    }
  }
  if (!(SERVER_NAMES as readonly string[]).includes(spec.server)) {
    problems.push(`spec.server "${spec.server}" is not one of ${SERVER_NAMES.join(', ')}`);
  }
  if (!spec.database?.secretRef?.name) problems.push('spec.database.secretRef.name is required');
  if (spec.replicas !== undefined && spec.autoscaling && spec.autoscaling.enabled !== false) {
    problems.push('set either spec.replicas or spec.autoscaling, not both');
  }
  const a = spec.autoscaling;
  if (a && (a.minReplicas ?? 2) > (a.maxReplicas ?? 10)) problems.push('spec.autoscaling.minReplicas exceeds maxReplicas');
  if (spec.ingress?.enabled && spec.ingress.tls && !spec.ingress.host) problems.push('spec.ingress.tls needs spec.ingress.host');
  for (const [tool, credits] of Object.entries(spec.toolCostOverrides ?? {})) {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(tool)) problems.push(`spec.toolCostOverrides: "${tool}" is not a tool name`);
    if (!Number.isInteger(credits) || credits < 0) problems.push(`spec.toolCostOverrides.${tool} must be a non-negative integer`);
  }
  return problems;
}

const RENEWAL = { OneTime: 'one-time', Monthly: 'monthly' } as const;

/**
 * The plans row a PlanPolicy stands for, or the problems that stop it. Defaults match the CRD's
 * (burst min(10, requests per minute), max keys 3, all nine servers), so an object stored before defaulting means the same.
 */
export function planFromPolicy(spec: PlanPolicySpec | undefined): { ok: true; plan: PlanRow } | { ok: false; problems: string[] } {
  if (!spec) return { ok: false, problems: ['spec is missing'] };
  const problems: string[] = [];
  if (typeof spec.plan !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(spec.plan)) problems.push(`spec.plan "${String(spec.plan)}" must match ^[a-z][a-z0-9-]{0,31}$`);
  if (!Number.isInteger(spec.credits) || spec.credits < 0) problems.push('spec.credits must be a non-negative integer');
  if (!(spec.renewal in RENEWAL)) problems.push(`spec.renewal must be OneTime or Monthly, not "${String(spec.renewal)}"`);
  const rpm = spec.rateLimit?.requestsPerMinute;
  // The CRD cannot default one field from another: an omitted burst is min(10, requestsPerMinute).
  const burst = spec.rateLimit?.burst ?? Math.min(10, Number.isInteger(rpm) && (rpm ?? 0) >= 1 ? rpm! : 10);
  if (!Number.isInteger(rpm) || (rpm ?? 0) < 1) problems.push('spec.rateLimit.requestsPerMinute must be an integer of at least 1');
  if (!Number.isInteger(burst) || burst < 1) problems.push('spec.rateLimit.burst must be an integer of at least 1');
  else if (rpm !== undefined && burst > rpm) problems.push('spec.rateLimit.burst must not exceed requestsPerMinute');
  const servers = spec.servers ?? [...SERVER_NAMES];
  const unknown = servers.filter((s) => !(SERVER_NAMES as readonly string[]).includes(s));
  if (unknown.length) problems.push(`spec.servers: unknown ${unknown.join(', ')}`);
  if (servers.length === 0) problems.push('spec.servers must name at least one server');
  const maxKeys = spec.maxKeys ?? 3;
  if (!Number.isInteger(maxKeys) || maxKeys < 1) problems.push('spec.maxKeys must be an integer of at least 1');
  const price = spec.priceUsdCents;
  if (price !== undefined && (!Number.isInteger(price) || price < 0)) problems.push('spec.priceUsdCents must be a non-negative integer (USD cents)');
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    plan: {
      name: spec.plan,
      display_name: spec.displayName ?? spec.plan.charAt(0).toUpperCase() + spec.plan.slice(1),
      credits: spec.credits,
      renewal: RENEWAL[spec.renewal],
      requests_per_minute: rpm!,
      burst,
      // In the catalog's order, so the row does not change when only the list order does.
      servers: SERVER_NAMES.filter((s) => servers.includes(s)),
      max_keys: maxKeys,
      price_cents: price === undefined || price === 0 ? null : price,
    },
  };
}
