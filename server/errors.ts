// The one error registry of the public API (DESIGN.md §3). Every error a client can see is a code
// from this table, with its HTTP status and a public message; details are safe, documented fields.

/** A provider failure the tools map to UPSTREAM_ERROR / UPSTREAM_TIMEOUT. */
export class ProviderError extends Error {
  readonly provider: string;
  readonly kind: 'error' | 'timeout' | 'rate_limited' | 'not_found';
  readonly status: number | undefined;
  constructor(provider: string, kind: ProviderError['kind'], message: string, status?: number) {
    super(message);
    this.name = 'ProviderError';
    this.provider = provider;
    this.kind = kind;
    this.status = status;
  }
}

export const ERRORS = {
  SERVER_NOT_FOUND: { status: 404, message: 'No MCP server at this path.' },
  MISSING_API_KEY: { status: 401, message: 'Send your API key in the x-api-key header (or Authorization: Bearer).' },
  INVALID_API_KEY: { status: 401, message: 'The API key is not valid.' },
  API_KEY_EXPIRED: { status: 401, message: 'The API key has expired.' },
  API_KEY_REVOKED: { status: 401, message: 'The API key has been revoked.' },
  // A Bearer value that is not an API key and no live OAuth access token (expired, revoked, unknown):
  // the client should refresh it or connect again (with WWW-Authenticate error="invalid_token").
  INVALID_TOKEN: { status: 401, message: 'The OAuth access token is not valid (expired, revoked or unknown); refresh it or connect again.' },
  KEY_SCOPE_FORBIDDEN: { status: 403, message: 'This API key is not allowed to use this server.' },
  PLAN_FORBIDDEN: { status: 403, message: 'Your plan does not include this server.' },
  ACCOUNT_SUSPENDED: { status: 403, message: 'The account is suspended.' },
  // A key's own controls (the dashboard's Keys page): paused, capped per period.
  KEY_PAUSED: { status: 403, message: 'This API key is paused; resume it in the dashboard to use it again.' },
  KEY_CAP_REACHED: { status: 403, message: "This API key has spent its credit cap for the period; raise or remove the cap in the dashboard, or wait for the next period." },
  // A refusal of the metering statement this pod's code does not know (a newer statement met by
  // a pod of the previous version during a rolling upgrade): refused as a refusal, never a 500.
  REQUEST_REFUSED: { status: 403, message: 'This call was refused by a control of your account or API key; see the dashboard.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Use POST with a JSON-RPC body.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  INVALID_REQUEST: { status: 400, message: 'The request body is not a valid JSON-RPC message.' },
  UNKNOWN_TOOL: { status: 400, message: 'This server has no tool of that name.' },
  INVALID_PARAMS: { status: 400, message: 'The tool arguments are invalid.' },
  KEY_LIMIT_REACHED: { status: 409, message: 'The account already holds as many active keys as its plan allows.' },
  WALLET_IN_USE: { status: 409, message: 'This wallet is already linked to an account.' },
  // The dashboard's JSON API (/api): browser sessions and wallet sign-in.
  SESSION_REQUIRED: { status: 401, message: 'Sign in with your wallet first.' },
  CSRF_REJECTED: { status: 403, message: 'The request did not come from the dashboard (missing or wrong CSRF token or origin).' },
  SIGN_IN_REJECTED: { status: 401, message: 'The wallet sign-in could not be verified.' },
  // Accounts with several wallets (issue 24): link and merge offers, merges, unlinking.
  OFFER_EXPIRED: { status: 410, message: 'This offer to link or merge a wallet has expired or was used; sign with the wallet again.' },
  MERGE_REFUSED: { status: 409, message: 'The accounts could not be merged.' },
  UNLINK_REFUSED: { status: 409, message: 'This wallet cannot be unlinked.' },
  // Payments (DESIGN.md §5b): orders paid on chain from the dashboard.
  ORDER_NOT_FOUND: { status: 404, message: 'No order with this id on your account.' },
  ORDER_EXPIRED: { status: 410, message: 'The order has expired; create a new one.' },
  PAYMENT_MISMATCH: { status: 422, message: 'The transaction does not pay this order.' },
  PAYMENT_UNCONFIRMED: { status: 409, message: 'The transaction is not confirmed yet; it is checked again until it is or the order expires.' },
  PAYMENT_ALREADY_CREDITED: { status: 409, message: 'This transaction has already been credited.' },
  WALLET_NOT_LINKED: { status: 403, message: 'The transaction was sent from a wallet not linked to your account.' },
  CHAIN_NOT_CONFIGURED: { status: 400, message: 'Payments on this chain are not configured on this service.' },
  // x402 pay-per-call (/x402/mcp).
  PAYMENT_REQUIRED: { status: 402, message: 'This tool call must be paid with x402: see the PAYMENT-REQUIRED header.' },
  PAYMENT_INVALID: { status: 402, message: 'The x402 payment was refused.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests for your plan; retry later.' },
  INSUFFICIENT_CREDITS: { status: 402, message: 'Not enough credits for this call.' },
  NOT_FOUND: { status: 404, message: 'Nothing was found for that input.' },
  UPSTREAM_ERROR: { status: 502, message: 'An upstream data provider failed.' },
  UPSTREAM_TIMEOUT: { status: 504, message: 'An upstream data provider timed out.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is temporarily unavailable; retry later.' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export type ErrorDetails = Record<string, unknown>;

/**
 * A failure with a public code. Thrown by tools and gateway steps; the one error mapper turns it
 * into the error envelope. `message` is public: never put internals in it.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super(message ?? ERRORS[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

/** The database could not be reached (connection refused, reset, timed out). */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('database unavailable', { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

export interface ErrorEnvelope {
  success: false;
  error: { code: ErrorCode; message: string; details: ErrorDetails };
}

/** Maps anything thrown to a public ApiError; unknown faults become INTERNAL_ERROR. */
/** The largest request body any route reads (set once, on the Fastify root, in app.ts). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * An error Fastify raised (or one of ours) as a public ApiError: a body over the limit is 413,
 * Fastify's own 4xx refusals (unparseable JSON, wrong content type, empty body, bad length) are
 * 400 INVALID_REQUEST, anything else goes through toApiError. The one mapping every error handler uses.
 */
export function fromFrameworkError(err: Error & { code?: string; statusCode?: number }): ApiError {
  if (err instanceof ApiError) return err;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('PAYLOAD_TOO_LARGE', undefined, { limit_bytes: BODY_LIMIT_BYTES });
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    const reason = err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'Content-Type must be application/json.' : undefined;
    return new ApiError('INVALID_REQUEST', reason);
  }
  return toApiError(err);
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ProviderError) {
    if (err.kind === 'not_found') return new ApiError('NOT_FOUND', undefined, { provider: err.provider });
    if (err.kind === 'timeout') return new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: err.provider });
    return new ApiError('UPSTREAM_ERROR', undefined, { provider: err.provider, ...(err.status ? { status: err.status } : {}) });
  }
  if (err instanceof DatabaseUnavailableError || isConnectionError(err)) {
    return new ApiError('SERVICE_UNAVAILABLE');
  }
  // PostgreSQL refusing text (a NUL, a byte sequence not UTF-8): the caller's input, never our fault.
  // The checks at the edges (server/lib/text.ts) refuse it first; this is the net under them.
  const sqlState = (err as { code?: unknown } | null)?.code;
  if (sqlState === '22021' || sqlState === '22P05') return new ApiError('INVALID_PARAMS', 'A text field holds a character that cannot be stored (such as NUL).');
  return new ApiError('INTERNAL_ERROR');
}

export function errorEnvelope(err: ApiError, requestId: string): ErrorEnvelope {
  return {
    success: false,
    error: { code: err.code, message: err.message, details: { ...err.details, request_id: requestId } },
  };
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  '53300', // too_many_connections: max_connections reached ("sorry, too many clients already")
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
]);

/** True for errors that mean "the database is not reachable now", as opposed to a bad query. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  // Class 08 is connection_exception, and PgBouncer reports its own refusals (max_client_conn,
  // query_wait_timeout, a server it cannot reach) as 08P01.
  if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    err.message,
  );
}
