// Runs the real service (startService: Fastify on a real loopback port, real PostgreSQL) and
// talks to it the way users do: raw HTTP with fetch, and the MCP SDK's own client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { accountCreate, type Account } from '../../server/accounts/accounts.ts';
import { planUpsert, type Plan } from '../../server/accounts/plans.ts';
import { loadConfig } from '../../server/config.ts';
import type { Database } from '../../server/db/pool.ts';
import { keyCreate, type KeySettings } from '../../server/keys/store.ts';
import { startService, type RunningService, type StartOptions } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';

export async function startTestService(
  databaseUrl: string,
  /** Overrides; undefined unsets a default (e.g. METRICS_PORT, to see it follow PORT=0). */
  env: Record<string, string | undefined> = {},
  opts: Pick<StartOptions, 'now' | 'keyClock'> = {},
): Promise<RunningService> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    CRYPTOMCP_BENCH_TOOLS: '1',
    LOG_LEVEL: 'silent',
    DATABASE_POOL_MAX: '10',
    ...env,
  });
  // CRYPTOMCP_TEST_LOG=1 prints the service's own log lines (job runner, migrations) to stderr.
  return startService(config, { ...opts, ...(process.env.CRYPTOMCP_TEST_LOG ? { log: (line: string) => console.error(`[service] ${line}`) } : {}) });
}

let walletCounter = 0;
/** A fresh, valid EVM address for each call (accounts need a unique wallet). */
export function nextWallet(): string {
  walletCounter += 1;
  return `0x${process.pid.toString(16).padStart(8, '0')}${Date.now().toString(16).padStart(16, '0')}${walletCounter.toString(16).padStart(16, '0')}`.slice(0, 42);
}

export async function createAccountWithKey(
  db: Database,
  opts: { plan?: string; key?: Partial<KeySettings>; now?: Date } = {},
): Promise<{ account: Account; key: string; keyId: string }> {
  const account = await accountCreate(db, { wallet: nextWallet(), chain: 'ethereum', plan: opts.plan ?? 'free', now: opts.now });
  const { key, plaintext } = await keyCreate(db, account.id, { name: 'test', ...opts.key });
  return { account, key: plaintext, keyId: key.id };
}

/** A plan for tests that must not trip the rate limit. */
export async function createUnlimitedPlan(db: Database, name: string, credits: number, overrides: Partial<Plan> = {}): Promise<void> {
  await planUpsert(db, {
    name,
    display_name: name,
    credits,
    renewal: 'one-time',
    requests_per_minute: 1_000_000,
    burst: 100_000,
    servers: [...SERVER_NAMES],
    max_keys: 10,
    ...overrides,
  });
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // left as text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The two protocol generations served on every path (DESIGN.md §3). */
export const ERAS = ['legacy', 'modern'] as const;
export type Era = (typeof ERAS)[number];

export const MODERN_VERSION = '2026-07-28';

/**
 * A message as a client of that generation sends it: a 2026-07-28 request carries the
 * per-request _meta envelope and the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers; a 2025
 * one is sent as is. Bodies that are not a JSON-RPC object pass through untouched.
 */
export function inEra(era: Era, body: unknown, headers: Record<string, string> = {}): { body: unknown; headers: Record<string, string> } {
  if (era === 'legacy' || typeof body !== 'object' || body === null || Array.isArray(body)) return { body, headers };
  const message = body as { method?: unknown; params?: unknown };
  if (typeof message.method !== 'string') return { body, headers };
  const params = typeof message.params === 'object' && message.params !== null && !Array.isArray(message.params) ? (message.params as Record<string, unknown>) : {};
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'cryptomcp-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const name = typeof params.name === 'string' ? params.name : undefined;
  return {
    body: Array.isArray(message.params) ? body : { ...message, params: { ...params, _meta: meta } },
    headers: {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': message.method,
      ...(name !== undefined && message.method === 'tools/call' ? { 'mcp-name': name } : {}),
      ...headers,
    },
  };
}

export function toolCall(name: string, args: Record<string, unknown> = {}, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** The MCP SDK's v1 client (the 2025 protocol), connected over real HTTP with the key in x-api-key. */
/** A server's MCP URL; '' names the all-in-one endpoint ({base_url}/mcp). */
export function mcpUrl(baseUrl: string, server: string): string {
  return server === '' ? `${baseUrl}/mcp` : `${baseUrl}/mcp/${server}`;
}

export async function mcpClient(baseUrl: string, server: string, key: string): Promise<Client> {
  const client = new Client({ name: 'cryptomcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl(baseUrl, server)), { requestInit: { headers: { 'x-api-key': key } } }));
  return client;
}

/** How a v2 client negotiates: pinned to 2026-07-28, or probing with server/discover first. */
export type V2Mode = 'auto' | 'pinned';

/** The v2 SDK's client (@modelcontextprotocol/client), connected over real HTTP with the key in x-api-key. */
export async function mcpClientV2(baseUrl: string, server: string, key: string, mode: V2Mode): Promise<V2Client> {
  const client = new V2Client(
    { name: 'cryptomcp-test', version: '1.0.0' },
    { versionNegotiation: { mode: mode === 'auto' ? 'auto' : { pin: MODERN_VERSION } } },
  );
  await client.connect(new V2StreamableHTTPClientTransport(new URL(mcpUrl(baseUrl, server)), { requestInit: { headers: { 'x-api-key': key } } }));
  return client;
}

export async function balanceOf(db: Database, accountId: string): Promise<number> {
  const res = await db.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1', [accountId]);
  return res.rows[0]!.balance;
}

/** The ledger invariant of DESIGN.md §5: balance = sum of the ledger's deltas. */
export async function ledgerSum(db: Database, accountId: string): Promise<number> {
  const res = await db.query<{ sum: number }>('SELECT coalesce(sum(delta), 0)::int AS sum FROM credit_ledger WHERE account_id = $1', [
    accountId,
  ]);
  return res.rows[0]!.sum;
}
