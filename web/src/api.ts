// The dashboard's one HTTP client for its JSON API (/api). Mutating requests carry the session's
// CSRF token; errors arrive as the service's envelope and are thrown as ApiFailure.

export interface ApiErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly error: ApiErrorBody;
  constructor(status: number, error: ApiErrorBody) {
    super(error.message);
    this.status = status;
    this.error = error;
  }
}

let csrfToken: string | undefined;
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
  }
  const res = await fetch(`/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
  });
  const json = (await res.json().catch(() => ({}))) as { error?: ApiErrorBody };
  if (!res.ok) {
    throw new ApiFailure(res.status, json.error ?? { code: 'INTERNAL_ERROR', message: `HTTP ${res.status}`, details: {} });
  }
  return json as T;
}

export interface Wallet {
  chain: string;
  address: string;
  created_at: string;
}

export interface SessionInfo {
  account: { id: string; plan: string; status: string; balance: number; created: boolean; wallets: Wallet[] };
  wallet: { family: 'evm' | 'solana'; address: string };
  csrf_token: string;
  expires_at: string;
}

export interface DashboardConfig {
  mcp_base_url: string;
  servers: { name: string; description: string }[];
  chains: { id: number; network: string }[];
  walletconnect_project_id: string | null;
}

export interface NonceInfo {
  nonce: string;
  expires_at: string;
  domain: string;
  uri: string;
}

export interface KeyInfo {
  id: string;
  name: string;
  description: string | null;
  prefix: string;
  servers: string[] | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  rotated_from: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export interface UsageInfo {
  plan: string;
  status: string;
  balance: number;
  renewal: 'one-time' | 'monthly';
  period_start: string;
  renews_at: string | null;
  allowance: number;
  calls: number;
  credits_used: number;
  by_server: { server: string; calls: number; credits: number }[];
  by_tool: { server: string; tool: string; calls: number; credits: number }[];
  days: number;
  daily: { day: string; server: string; tool: string; calls: number; credits: number }[];
}

export interface PlanInfo {
  name: string;
  display_name: string;
  credits: number;
  renewal: 'one-time' | 'monthly';
  requests_per_minute: number;
  burst: number;
  servers: string[];
  max_keys: number;
  current: boolean;
}

export function describeError(err: unknown): string {
  if (err instanceof ApiFailure) {
    if (err.error.code === 'KEY_LIMIT_REACHED') {
      return `Your plan allows ${String(err.error.details.max_keys)} active keys. Revoke a key you no longer use, or change plan (see Plans).`;
    }
    if (err.error.code === 'SIGN_IN_REJECTED') return `Sign-in refused (${String(err.error.details.reason)}). Try again.`;
    if (err.error.code === 'INVALID_PARAMS') {
      const issues = (err.error.details.issues as { path: string; message: string }[] | undefined) ?? [];
      return issues.length ? issues.map((i) => `${i.path || 'input'}: ${i.message}`).join('; ') : err.message;
    }
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
