// The dashboard's one HTTP client for its JSON API (/api). Mutating requests carry the session's
// CSRF token; errors arrive as the service's envelope and are thrown as ApiFailure.
import type { Plan } from '../../server/public-types.ts';

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

let onSessionEnded: (() => void) | undefined;
/** Called when a signed-in request answers SESSION_REQUIRED: the session expired or was ended elsewhere. */
export function whenSessionEnds(handler: (() => void) | undefined): void {
  onSessionEnded = handler;
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders };
  const withBody = method !== 'GET';
  if (withBody) {
    headers['content-type'] = 'application/json';
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
  }
  let res: Response;
  try {
    res = await fetch(`/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: withBody ? JSON.stringify(body ?? {}) : undefined,
    });
  } catch {
    throw new ApiFailure(0, { code: 'NETWORK', message: 'The dashboard could not reach the service. Check your connection and try again.', details: {} });
  }
  const json = (await res.json().catch(() => ({}))) as { error?: ApiErrorBody };
  if (!res.ok) {
    const failure = new ApiFailure(res.status, json.error ?? { code: 'INTERNAL_ERROR', message: `HTTP ${res.status}`, details: {} });
    if (failure.error.code === 'SESSION_REQUIRED' && path !== '/session') onSessionEnded?.();
    throw failure;
  }
  return json as T;
}

/** A fresh Idempotency-Key: one per user action, reused if that same action is retried. */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export interface Wallet {
  chain: string;
  address: string;
  created_at: string;
}

export interface SessionInfo {
  account: { id: string; plan: string; status: string; balance: number; allowance: number | null; created: boolean; wallets: Wallet[] };
  wallet: { family: 'evm' | 'solana'; address: string };
  csrf_token: string;
  expires_at: string;
}

export interface DashboardConfig {
  mcp_base_url: string;
  servers: { name: string; description: string }[];
  chains: { id: number; network: string }[];
  walletconnect_project_id: string | null;
  request_log_retention_days: number;
}

/**
 * A wallet proven by signature that could not simply be linked: one with no account met at sign-in
 * while signed in ('link'), or one with an account of its own ('merge', which both wallets sign).
 */
export interface WalletOffer {
  id: string;
  kind: 'link' | 'merge';
  wallet: { family: 'evm' | 'solana'; chain: string; address: string };
  expires_at: string;
  statement?: string;
  source?: {
    id: string;
    plan: string | null;
    balance: number;
    active_keys: number;
    wallets: Wallet[];
    /** Why the merge cannot happen now (the plan's key cap), said before any wallet signs. */
    blocked?: { reason: string; message: string } | null;
  };
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
  /** A paused key is refused (KEY_PAUSED) until resumed; it still counts as active. */
  paused: boolean;
  paused_at: string | null;
  read_only: boolean;
  credit_cap: number | null;
  cap_period: 'day' | 'month';
  /** Credits spent in the cap's current period (0 without a cap). */
  cap_spent: number;
  rate_limit_per_minute: number | null;
}

// The API's JSON shapes, declared once beside the server that builds them.
export type { Outcomes, UsageBreakdown } from '../../server/public-types.ts';
import type { UsageReport } from '../../server/mcp/tool.ts';
import type { PaymentChainName, UsageOutlookJson } from '../../server/public-types.ts';

/** GET /api/usage: get_usage's report (the same interface the tool answers) over a range of days. */
export interface UsageInfo extends UsageReport {
  from: string;
  to: string;
  days: number;
  daily: { day: string; server: string; tool: string; calls: number; credits: number }[];
  outlook: UsageOutlookJson;
}

export interface PlanInfo extends Plan {
  current: boolean;
}

/** A credit pack for top-ups (credits that survive renewal, spent after the plan allowance). */
export interface CreditPack {
  name: string;
  credits: number;
  price_cents: number;
}

/** A chain the service takes USDC on. */
export interface PaymentChain {
  chain: PaymentChainName;
  chain_id: number | null;
  token: string;
  decimals: number;
  confirmations: number;
}

export interface PlansInfo {
  plans: PlanInfo[];
  contact: string | null;
  current: string;
  paid_until: string | null;
  topup: number;
  packs: CreditPack[];
  chains: PaymentChain[];
}

export type { OrderJson as OrderInfo } from '../../server/public-types.ts';

export type { PurchaseJson as PurchaseInfo } from '../../server/public-types.ts';

/** Integer cents as dollars, e.g. 2900 -> "$29.00" (no floating point). */
export function formatCents(cents: number): string {
  const whole = Math.trunc(cents / 100);
  return `$${whole.toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;
}

const SIGN_IN_REFUSALS: Record<string, string> = {
  nonce_expired: 'The sign-in request expired before your wallet signed it. Click your wallet again and approve the signature within a few minutes.',
  nonce_used: 'This sign-in request was already used. Click your wallet again to start a new one.',
  nonce_unknown: 'This sign-in request is no longer valid. Click your wallet again to start a new one.',
  nonce_mismatch: 'This sign-in request was started in another tab or window. Click your wallet again here to start a new one.',
  bad_signature: 'The signature does not belong to the address your wallet shared. Choose that account in your wallet and try again.',
  wrong_domain: 'Your wallet signed a message for another site. Reload this page and try again.',
  wrong_uri: 'Your wallet signed a message for another site. Reload this page and try again.',
  unsupported_chain: 'That network is not supported for sign-in. Pick Ethereum, Base, Polygon or BNB Smart Chain and try again.',
  stale_message: 'The sign-in message is too old or your computer clock is off. Check the clock and try again.',
  message_expired: 'The sign-in message expired before it reached us. Try again.',
  malformed_message: 'Your wallet changed the sign-in message, so it cannot be checked. Try again, or use another wallet.',
  contract_chain: 'This smart-contract wallet signs in on the network it first signed in on. Switch your wallet to that network and try again.',
};

const FIELD_PROBLEMS: Record<string, string> = {
  name: 'Give the key a name of 1 to 64 characters.',
  description: 'Keep the description to 500 characters or fewer.',
  expires_at: 'Choose an expiry date in the future, or clear it for a key that never expires.',
  servers: 'Choose at least one server for the key.',
};

/** True for a wallet's "the user declined" error (EIP-1193 code 4001, viem's UserRejectedRequestError, Wallet Standard wallets' messages). */
export function isUserRejection(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const x = e as { code?: unknown; name?: unknown; message?: unknown };
    if (x.code === 4001 || x.code === 'ACTION_REJECTED' || x.name === 'UserRejectedRequestError') return true;
    if (typeof x.message === 'string' && /user (rejected|denied|declined|cancell?ed)|rejected by (the )?user/i.test(x.message)) return true;
  }
  return false;
}

/** Every error a person sees, as a sentence that says what happened and what to do. */
export function describeError(err: unknown): string {
  if (err instanceof ApiFailure) {
    const { code, details } = err.error;
    if (code === 'KEY_LIMIT_REACHED') {
      return `Your plan allows ${String(details.max_keys)} active keys. Revoke a key you no longer use, or change plan (see Plans).`;
    }
    if (code === 'SIGN_IN_REJECTED') return SIGN_IN_REFUSALS[String(details.reason)] ?? 'Your wallet signature could not be verified. Try again.';
    if (code === 'INVALID_PARAMS') {
      const issues = (details.issues as { path: string; message: string }[] | undefined) ?? [];
      const sentences = [...new Set(issues.map((i) => FIELD_PROBLEMS[i.path] ?? (i.path === 'Idempotency-Key' ? err.message : `Check the ${i.path || 'form'} field and try again.`)))];
      return sentences.length ? sentences.join(' ') : 'Some fields are not valid. Check the form and try again.';
    }
    if (code === 'SESSION_REQUIRED') return 'Your session has ended. Sign in again to continue.';
    if (code === 'CSRF_REJECTED') return 'This page is out of date. Reload it and try again.';
    if (code === 'RATE_LIMITED') {
      const wait = Number(details.retry_after_seconds);
      return `Too many attempts in a short time. Wait ${Number.isFinite(wait) ? `${wait} second${wait === 1 ? '' : 's'}` : 'a minute'} and try again.`;
    }
    if (code === 'PAYMENT_MISMATCH') {
      return `The transaction does not pay this order: its ${String(details.field)} is ${String(details.found ?? 'missing')}, expected ${String(details.expected)}. Nothing was credited.`;
    }
    if (code === 'WALLET_NOT_LINKED') return 'The payment came from a wallet that is not linked to this account. Link that wallet below, or pay from a linked one.';
    if (code === 'ORDER_EXPIRED') return 'This order expired before it was paid. Start the purchase again for a fresh order.';
    if (code === 'WALLET_IN_USE') return 'This wallet already belongs to another cryptomcp account. Sign in with it to use that account.';
    if (code === 'NETWORK') return err.message;
    if (err.status >= 500) {
      const id = typeof details.request_id === 'string' ? ` (request id ${details.request_id})` : '';
      return `Something went wrong on our side${id}. Try again in a moment.`;
    }
    return err.message;
  }
  // The wallet's network differs from the chosen one (web/src/wallets/evm.ts): its message says what to do.
  if (err instanceof Error && err.name === 'WrongChainError') return err.message;
  if (isUserRejection(err)) return 'You cancelled the signature in your wallet. Nothing was signed; click your wallet again when you are ready.';
  const message = err instanceof Error ? err.message : String(err);
  return `Your wallet reported a problem: ${message.split('\n')[0]!.replace(/\.?$/, '.')} Try again, or use another wallet.`;
}

/** One date format everywhere: the browser's locale and time zone; the UTC time goes in the title (hover). */
export function formatDate(iso: string, withTime = true): { text: string; utc: string } {
  const d = new Date(iso);
  // A date without a time is a UTC day (an expiry at 00:00 UTC, a renewal day): shown as that day
  // everywhere, not as the evening before west of Greenwich.
  const text = withTime ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : d.toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
  const utc = `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return { text, utc };
}

/** The public, keyless catalog (GET /v1/catalog): the servers, their tools with costs, the plans. */
export interface Catalog {
  servers: {
    name: string;
    description: string;
    tools: { name: string; title?: string; description: string; credits: number; input_schema: unknown }[];
  }[];
  plans: { name: string; credits: number; renewal: string; requests_per_minute: number; max_keys: number }[];
}

export async function fetchCatalog(): Promise<Catalog> {
  let res: Response;
  try {
    res = await fetch('/v1/catalog', { headers: { accept: 'application/json' } });
  } catch {
    throw new ApiFailure(0, { code: 'NETWORK', message: 'The dashboard could not reach the service. Check your connection and try again.', details: {} });
  }
  if (!res.ok) throw new ApiFailure(res.status, { code: 'INTERNAL_ERROR', message: `HTTP ${res.status}`, details: {} });
  return (await res.json()) as Catalog;
}

/** One approved OAuth connection (Connected apps): a client acting for the account on some servers. */
export interface ConnectionInfo {
  id: string;
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  servers: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
}

/** What the consent page shows about an authorization request. */
export interface InteractionDetails {
  uid: string;
  client: {
    client_id: string;
    name: string | null;
    uri: string | null;
    logo_uri: string | null;
    registration: 'metadata_document' | 'dynamic';
    redirect_host: string | null;
  };
  servers: string[];
  expires_at: string;
}
