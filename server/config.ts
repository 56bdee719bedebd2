// The one place the server program reads process.env. Everything else receives a typed Config.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_RPC_URLS, type EvmNetwork } from './providers/evm/types.ts';
import { PAYMENT_CHAIN_NAMES, type PaymentChainName } from './public-types.ts';
import { SERVER_NAMES, type ServerName } from './mcp/names.ts';

const intFrom = (fallback: number, min = 0) =>
  z.coerce.number().int().min(min).default(fallback);

const serverList = z
  .string()
  .default('all')
  .transform((value, ctx): ServerName[] => {
    const trimmed = value.trim();
    if (trimmed === '' || trimmed === 'all') return [...SERVER_NAMES];
    const names = trimmed.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = names.filter((n) => !(SERVER_NAMES as readonly string[]).includes(n));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown server(s) ${unknown.join(', ')}; expected "all" or a comma list of ${SERVER_NAMES.join(', ')}`,
      });
      return z.NEVER;
    }
    return [...new Set(names)] as ServerName[];
  });

const costOverrides = z
  .string()
  .default('{}')
  .transform((value, ctx): Record<string, number> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON like {"market-intelligence.get_prices": 2}' });
      return z.NEVER;
    }
    const result = z.record(z.string().regex(/^[a-z-]+\.[a-z_]+$/), z.number().int().min(0)).safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({ code: 'custom', message: 'keys are "<server>.<tool>", values non-negative integers' });
      return z.NEVER;
    }
    return result.data;
  });

/** An http(s) URL with nothing a client could not put a path after (no query, fragment or credentials). */
const publicUrl = z
  .string()
  .url()
  .refine((value) => {
    const u = URL.parse(value);
    return u !== null && (u.protocol === 'https:' || u.protocol === 'http:') && u.search === '' && u.hash === '' && u.username === '' && u.password === '';
  }, 'an http(s) URL without query, fragment or credentials, e.g. https://mcp.example.com');

const EVM_ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const SOLANA_ADDRESS_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** Native USDC per chain: the token, its decimals (18 on BSC), the chain id and a safe depth. */
export const USDC_DEFAULTS: Record<PaymentChainName, { token: string; decimals: number; chainId: number | null; confirmations: number }> = {
  ethereum: { token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6, chainId: 1, confirmations: 12 },
  base: { token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6, chainId: 8453, confirmations: 10 },
  polygon: { token: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6, chainId: 137, confirmations: 32 },
  bsc: { token: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18, chainId: 56, confirmations: 15 },
  // Solana counts a finalized slot as confirmed; `confirmations` is the minimum on a confirmed one.
  solana: { token: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6, chainId: null, confirmations: 31 },
};
export { PAYMENT_CHAIN_NAMES, type PaymentChainName };

/** Where and how one chain takes payment: only chains with a treasury are offered. */
export interface PaymentChain {
  chain: PaymentChainName;
  treasury: string;
  token: string;
  decimals: number;
  /** The EVM chain id the wallet must be on (a devnet's may differ); null on Solana. */
  chainId: number | null;
  confirmations: number;
}

const jsonOf = <T>(schema: z.ZodType<T>, example: string, fallback: string) =>
  z.string().default(fallback).transform((value, ctx): T => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be JSON like ${example}` });
      return z.NEVER;
    }
    const result = schema.safeParse(parsed);
    if (!result.success) {
      for (const i of result.error.issues) ctx.addIssue({ code: 'custom', message: `${i.path.join('.')}: ${i.message}` });
      return z.NEVER;
    }
    return result.data;
  });

const PaymentChainInput = z.object({
  treasury: z.string(),
  token: z.string().optional(),
  decimals: z.number().int().min(0).max(36).optional(),
  chain_id: z.number().int().positive().optional(),
  confirmations: z.number().int().min(1).optional(),
});
const paymentChains = jsonOf(z.partialRecord(z.enum(PAYMENT_CHAIN_NAMES), PaymentChainInput), '{"base":{"treasury":"0x..."}}', '{}')
  .transform((chains, ctx): PaymentChain[] =>
    Object.entries(chains).flatMap(([name, c]) => {
      const chain = name as PaymentChainName;
      if (!c) return [];
      const d = USDC_DEFAULTS[chain];
      const addressOk = (a: string) => (chain === 'solana' ? SOLANA_ADDRESS_RE : EVM_ADDRESS_RE).test(a);
      if (!addressOk(c.treasury) || (c.token !== undefined && !addressOk(c.token))) {
        ctx.addIssue({ code: 'custom', message: `${chain}: treasury and token must be ${chain === 'solana' ? 'base58' : '0x'} addresses` });
        return [];
      }
      const norm = (a: string) => (chain === 'solana' ? a : a.toLowerCase());
      return [{
        chain,
        treasury: norm(c.treasury),
        token: norm(c.token ?? d.token),
        decimals: c.decimals ?? d.decimals,
        chainId: chain === 'solana' ? null : (c.chain_id ?? d.chainId),
        confirmations: c.confirmations ?? d.confirmations,
      }];
    }),
  );

/** A credit pack for top-ups: credits for a price in USD cents. */
export interface CreditPack {
  name: string;
  credits: number;
  price_cents: number;
}
const creditPacks = jsonOf(
  z.array(z.object({ name: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/), credits: z.number().int().positive(), price_cents: z.number().int().positive() })),
  '[{"name":"credits-1k","credits":1000,"price_cents":700}]',
  '[{"name":"credits-1k","credits":1000,"price_cents":700},{"name":"credits-5k","credits":5000,"price_cents":3000},{"name":"credits-20k","credits":20000,"price_cents":10000}]',
);

/** "0.001" -> 1000: a decimal USD amount as integer millionths, never through a float. */
export function usdToMicros(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** A yes/no switch; unset (or empty) means `fallback`. */
const switchOf = (fallback: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
    .default('')
    .transform((v) => (v === '' ? fallback : v === '1' || v === 'true' || v === 'yes'));
const bool = switchOf(false);

const EnvSchema = z.object({
  PORT: intFrom(8080),
  HOST: z.string().default('0.0.0.0'),
  // Unset: 9464, or any free port when PORT=0, so instances started side by side never collide.
  METRICS_PORT: z.coerce.number().int().min(0).optional(),
  METRICS_ENABLED: switchOf(true),
  PUBLIC_BASE_URL: publicUrl.optional(),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_MAX: intFrom(20, 1),
  DATABASE_STATEMENT_TIMEOUT_MS: intFrom(10000, 0),
  MIGRATE_ON_START: switchOf(true),
  DATA_DIR: z.string().default('.data'),
  MCP_SERVERS: serverList,
  TOOL_COST_OVERRIDES: costOverrides,
  KEY_CACHE_TTL_MS: intFrom(5000, 0),
  TOOL_TIMEOUT_MS: intFrom(30000, 100),
  CONNECT_REQUESTS_PER_MINUTE: intFrom(300, 1),
  CONNECT_BURST: intFrom(60, 1),
  SETTLE_INTERVAL_MS: intFrom(200, 10),
  METER_MAX_INFLIGHT: intFrom(2, 1),
  METER_MAX_BATCH: intFrom(64, 1),
  SWEEP_INTERVAL_MS: intFrom(60000, 100),
  JOBS_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(4),
  JOBS_POLL_INTERVAL_MS: intFrom(1000, 20),
  ALERT_EVALUATE_INTERVAL_MS: intFrom(60000, 100),
  TASK_TIMEOUT_MS: intFrom(600000, 100),
  TASK_HEARTBEAT_MS: intFrom(5000, 50),
  TASK_ORPHAN_AFTER_MS: intFrom(30000, 100),
  TASK_POLL_INTERVAL_MS: intFrom(2000, 100),
  TASK_SWEEP_INTERVAL_MS: intFrom(10000, 100),
  WEBHOOK_ALLOW_PRIVATE: bool,
  WEBHOOK_TIMEOUT_MS: intFrom(10000, 100),
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'a comma list of delays in milliseconds, e.g. 5000,300000')
    .transform((v) => v.split(',').map(Number))
    .optional(),
  SHUTDOWN_TIMEOUT_MS: intFrom(10000, 0),
  DRAIN_DELAY_MS: intFrom(0, 0),
  WRITE_TIMEOUT_MS: intFrom(30000, 100),
  MAX_PIPELINED_REQUESTS: intFrom(8, 1),
  MAX_CONNECTIONS_PER_ADDRESS: intFrom(256, 0),
  COMPUTE_WORKERS: z.coerce.number().int().min(0).max(256).optional(),
  COMPUTE_ACCOUNT_SHARE: z.coerce.number().int().min(1).optional(),
  COMPUTE_ACCOUNT_QUEUE: intFrom(8, 0),
  COMPUTE_QUEUE: intFrom(64, 0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'),
  MARKET_DATA: z.enum(['snapshot', 'live']).default('snapshot'),
  SNAPSHOT_FILE: z.string().optional(),
  COINGECKO_BASE_URL: z.string().url().default('https://api.coingecko.com/api/v3'),
  COINGECKO_API_KEY: z.string().optional(),
  COINGECKO_TIMEOUT_MS: intFrom(8000, 100),
  SOCIAL_DATA: z.enum(['snapshot', 'live']).default('snapshot'),
  REDDIT_BASE_URL: z.string().url().default('https://www.reddit.com'),
  REDDIT_USER_AGENT: z.string().min(1).default('cryptomcp/0.1 (social-intelligence)'),
  REDDIT_TOKEN: z.string().min(1).optional(),
  REDDIT_SUBREDDITS: z.string().regex(/^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$/, 'a comma list of subreddit names').default('cryptocurrency,bitcoin,ethereum,solana'),
  REDDIT_TIMEOUT_MS: intFrom(8000, 100),
  PROJECT_DATA: z.enum(['snapshot', 'live']).default('snapshot'),
  DEFILLAMA_BASE_URL: z.string().url().default('https://api.llama.fi'),
  DEFILLAMA_TIMEOUT_MS: intFrom(10000, 100),
  GITHUB_API_URL: z.string().url().optional(),
  GITHUB_TOKEN: z.string().min(1).optional(),
  GITHUB_TIMEOUT_MS: intFrom(8000, 100),
  // One call to an HTTP data API (CoinGecko, DefiLlama, GitHub, Reddit, the explorer), all retries
  // and waits included: past it the tool fails with 504 UPSTREAM_TIMEOUT naming the provider.
  UPSTREAM_DEADLINE_MS: intFrom(10000, 100),
  ETHEREUM_RPC_URL: z.string().url().optional(),
  BASE_RPC_URL: z.string().url().optional(),
  POLYGON_RPC_URL: z.string().url().optional(),
  BSC_RPC_URL: z.string().url().optional(),
  SOLANA_RPC_URL: z.string().url().default('https://api.mainnet-beta.solana.com'),
  EXPLORER_API_URL: z.string().url().default('https://api.etherscan.io/v2/api'),
  EXPLORER_API_KEY: z.string().min(1).optional(),
  EVM_TIMEOUT_MS: intFrom(10000, 100),
  EVM_RETRIES: intFrom(2, 0),
  EVM_DEADLINE_MS: intFrom(8000, 100),
  EVM_FINALITY_DEPTH: intFrom(64, 0),
  DEVNET_MANIFEST: z.string().optional(),
  DEMO_ACCOUNT: bool,
  DASHBOARD_ORIGIN: publicUrl.optional(),
  TRUST_PROXY_HOPS: intFrom(0, 0),
  DASHBOARD_SESSION_TTL_S: intFrom(86400, 60),
  DASHBOARD_NONCE_TTL_S: intFrom(300, 10),
  DASHBOARD_SIGN_IN_LIMIT: intFrom(20, 1),
  DASHBOARD_SIGN_IN_WINDOW_S: intFrom(600, 1),
  DASHBOARD_SIGN_IN_WALLET_LIMIT: intFrom(10, 1),
  DASHBOARD_SIGN_IN_GLOBAL_LIMIT: intFrom(1000, 1),
  DASHBOARD_CONTACT: z.string().min(1).optional(),
  OAUTH_ACCESS_TOKEN_TTL_S: intFrom(3600, 60),
  OAUTH_REFRESH_TOKEN_TTL_S: intFrom(90 * 86400, 3600),
  OAUTH_COOKIE_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  OAUTH_CIMD_ALLOW_LOCALHOST: bool,
  OAUTH_REGISTER_LIMIT: intFrom(30, 1),
  OAUTH_CIMD_FETCH_LIMIT: intFrom(20, 1),
  WALLETCONNECT_PROJECT_ID: z.string().regex(/^[0-9a-f]{32}$/i, 'a WalletConnect (Reown) project id is 32 hex digits').optional(),
  // The request log is for debugging recent calls; a year at most keeps the table bounded.
  REQUEST_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(366).default(30),
  PAYMENT_CHAINS: paymentChains,
  CREDIT_PACKS: creditPacks,
  PAYMENT_ORDER_TTL_S: intFrom(3600, 60),
  PAYMENT_VERIFY_INTERVAL_MS: intFrom(15000, 100),
  X402_PAY_TO: z.string().regex(EVM_ADDRESS_RE, 'an EVM address').optional(),
  X402_NETWORK: z.string().regex(/^eip155:\d+$/, 'a CAIP-2 EVM network like eip155:8453').default('eip155:8453'),
  X402_ASSET: z.string().regex(EVM_ADDRESS_RE, 'an EVM address').default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  X402_ASSET_NAME: z.string().min(1).default('USD Coin'),
  X402_ASSET_VERSION: z.string().min(1).default('2'),
  X402_ASSET_DECIMALS: intFrom(6, 0),
  X402_USD_PER_CREDIT: z.string().regex(/^\d+(\.\d{1,6})?$/, 'a USD amount with at most 6 decimals, e.g. 0.001').default('0.001'),
  X402_RPC_URL: z.string().url().optional(),
  X402_SETTLEMENT_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte hex private key').optional(),
  X402_FACILITATOR_URL: z.string().url().optional(),
  X402_MAX_TIMEOUT_S: intFrom(120, 10),
  X402_REQUESTS_PER_MINUTE: intFrom(60, 1),
  X402_BURST: intFrom(20, 1),
  X402_ADDRESS_REQUESTS_PER_MINUTE: intFrom(120, 1),
  X402_ADDRESS_BURST: intFrom(30, 1),
  CRYPTOMCP_BENCH_TOOLS: bool,
  CRYPTOMCP_BENCH_UNMETERED: bool,
  CRYPTOMCP_BENCH_MODERN_SDK: bool,
});

export interface Config {
  port: number;
  host: string;
  metricsPort: number;
  /** false: no metrics are recorded and METRICS_PORT is not opened. */
  metricsEnabled: boolean;
  /**
   * Where clients reach the service (PUBLIC_BASE_URL): the OAuth issuer, the metadata and 401
   * URLs, the x402 resource, what is printed. Unset: the URL `serve` listens on, once it listens
   * (server/origin.ts). Never taken from a request's Host.
   */
  publicBaseUrl: string | undefined;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** statement_timeout of the service's queries (migrations lift it). */
  databaseStatementTimeoutMs: number;
  /**
   * `serve` applies pending migrations at start (false: it waits, not ready, until `cryptomcp
   * migrate` has; the chart's hook Job runs it).
   */
  migrateOnStart: boolean;
  /** Folder for local state (the embedded PostgreSQL's data lives in `<dataDir>/postgres`). */
  dataDir: string;
  servers: ServerName[];
  toolCostOverrides: Record<string, number>;
  keyCacheTtlMs: number;
  toolTimeoutMs: number;
  /** The per-key bucket for every method but tools/call (discovery, initialize, tools/list, ping). */
  connectLimit: { requestsPerMinute: number; burst: number };
  settleIntervalMs: number;
  /** Reservation round trips under way at once; calls arriving meanwhile share the next one. */
  meterMaxInflight: number;
  meterMaxBatch: number;
  sweepIntervalMs: number;
  /**
   * The job runner (server/jobs): jobs this process runs at once (0: it runs none, another
   * replica does), and how often it looks for jobs that became due.
   */
  jobs: { concurrency: number; pollIntervalMs: number };
  /**
   * Alert rules and webhooks: how often a rule is evaluated, whether webhooks may reach private
   * and loopback addresses over http (development only), an attempt's timeout, and the delays
   * before each retry (undefined: the default schedule of about a day).
   */
  alerts: { evaluateIntervalMs: number; webhookAllowPrivate: boolean; webhookTimeoutMs: number; webhookRetryScheduleMs: number[] | undefined };
  /**
   * Long tools as MCP tasks (docs/tasks.md): a task's longest run, how often a replica writes the
   * heartbeat of the tasks it runs, after how long without one a working task is failed and
   * refunded (its replica died), the polling interval a task suggests, and how often the sweep runs.
   */
  tasks: { timeoutMs: number; heartbeatMs: number; orphanAfterMs: number; pollIntervalMs: number; sweepIntervalMs: number };
  shutdownTimeoutMs: number;
  /**
   * After SIGTERM, how long the service keeps accepting (not ready, answering with Connection:
   * close) before it stops listening: while load balancers still send it new connections.
   */
  drainDelayMs: number;
  /** Longest time an answer may take to leave once handed to the socket; then the connection is cut. */
  writeTimeoutMs: number;
  /** Requests one connection may have unanswered at once (HTTP pipelining); more are refused with 429. */
  maxPipelinedRequests: number;
  /** Open connections one client address may hold; 0: no cap (behind a proxy that pools connections). */
  maxConnectionsPerAddress: number;
  /**
   * The compute pool (server/compute/): threads for CPU-bound tools (0: inline on the event loop),
   * most running per account, most waiting per account and in the process.
   */
  compute: { workers: number; accountShare: number; accountQueue: number; queue: number };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Where market data comes from: the offline snapshot, or a live API with the snapshot as fallback. */
  marketData: 'snapshot' | 'live';
  /** The snapshot file (default data/snapshot/market.json.gz). */
  snapshotFile: string | undefined;
  coingecko: { baseUrl: string; apiKey: string | undefined; timeoutMs: number };
  /** social-intelligence: the offline posts, or live Reddit (SOCIAL_DATA=live). */
  social: { mode: 'snapshot' | 'live'; reddit: { baseUrl: string; userAgent: string; token: string | undefined; subreddits: string[]; timeoutMs: number } };
  /** project-intelligence: the offline DefiLlama data, or the live API with it as fallback (PROJECT_DATA=live). */
  projects: { mode: 'snapshot' | 'live'; defillama: { baseUrl: string; timeoutMs: number } };
  /** GitHub REST for developer activity; on when PROJECT_DATA=live or GITHUB_API_URL / GITHUB_TOKEN is set. */
  github: { baseUrl: string; token: string | undefined; timeoutMs: number } | undefined;
  /** EVM JSON-RPC per network (public defaults), with per-attempt timeout and retries. */
  evm: { rpcUrls: Record<EvmNetwork, string>; timeoutMs: number; retries: number; deadlineMs: number };
  /** Blocks below the head after which blocks and receipts are cached as final. */
  evmFinalityDepth: number;
  /** Solana JSON-RPC (shares the EVM timeout and retries). */
  solanaRpcUrl: string;
  /** Etherscan-style multichain explorer API (v2, chainid parameter); off without a key. */
  explorer: { baseUrl: string; apiKey: string | undefined };
  /** The deadline of one HTTP data API call, retries included (UPSTREAM_DEADLINE_MS). */
  upstreamDeadlineMs: number;
  /** A devnet manifest: its labelled accounts join the address labels, its tokens the registry. */
  devnetManifest: string | undefined;
  /** Create and print a demo key on a fresh database (on for `npm start`). */
  demoAccount: boolean;
  /** The web dashboard (/app and /api). */
  dashboard: DashboardConfig;
  /**
   * Reverse proxies (ingress) in front of the service whose X-Forwarded-For to believe; 0 trusts
   * none. Behind an ingress set it, or every client shares the proxy's address (and its sign-in budget).
   */
  trustProxyHops: number;
  /** The OAuth 2.1 authorization server for connectors (DESIGN.md §5a, server/oauth/). */
  oauth: OAuthConfig;
  /** On-chain payments from the dashboard (issue 21). */
  payments: PaymentsConfig;
  /** x402 pay-per-call at /x402/mcp/{server}; undefined: off (no X402_PAY_TO). */
  x402: X402Config | undefined;
  /** Registers `bench_echo`/`bench_fail` (cost 1) for benchmarks and process-level tests. */
  benchTools: boolean;
  /** Benchmark-only: skip the metering round trip, to measure what metering costs. */
  benchUnmetered: boolean;
  /** Benchmark-only: answer 2026-07-28 through the SDK's createMcpHandler (the path before server/gateway/modern.ts). */
  benchModernSdk: boolean;
}

export interface PaymentsConfig {
  /** Chains with a treasury; empty: payments are off and the Plans page says so. */
  chains: PaymentChain[];
  packs: CreditPack[];
  orderTtlSeconds: number;
  /** How often submitted orders are verified again until confirmed or expired. */
  verifyIntervalMs: number;
}

export interface X402Config {
  /** CAIP-2, e.g. eip155:8453. */
  network: string;
  chainId: number;
  asset: string;
  /** The token's EIP-712 domain (x402 `extra`). */
  assetName: string;
  assetVersion: string;
  assetDecimals: number;
  payTo: string;
  /** Price of one credit in millionths of a USD. */
  usdMicrosPerCredit: bigint;
  maxTimeoutSeconds: number;
  /** Self-hosted settlement: the RPC and the key that submits transferWithAuthorization. */
  rpcUrl: string | undefined;
  settlementKey: string | undefined;
  /** Or a remote facilitator (verify and settle over HTTP). */
  facilitatorUrl: string | undefined;
  /** Per verified payer address, per replica. */
  rateLimit: { requestsPerMinute: number; burst: number };
  /** Every tools/call (free ones included) per client address, per replica. */
  addressLimit: { requestsPerMinute: number; burst: number };
}

export interface DashboardConfig {
  /**
   * The dashboard's public origin (scheme, host, port), which sign-in messages must name
   * (DASHBOARD_ORIGIN). Unset: the origin of the public base URL (server/origin.ts).
   */
  origin: string | undefined;
  sessionTtlSeconds: number;
  nonceTtlSeconds: number;
  /** Sign-in and wallet-link attempts allowed per client address within the window. */
  signInLimit: number;
  signInWindowSeconds: number;
  /**
   * Verified sign-ins (and links, merges) per wallet within the window, per pod, and attempts from
   * every client together: the bounds a forged X-Forwarded-For cannot rotate away.
   */
  signInWalletLimit: number;
  signInGlobalLimit: number;
  /** How to reach the operator about a plan change (shown on the Plans page). */
  contact: string | undefined;
  /** Turns on WalletConnect in the dashboard. */
  walletConnectProjectId: string | undefined;
  /** Days the request log keeps each /mcp request; older rows are pruned by the dashboard's sweep. */
  requestLogRetentionDays: number;
}

export interface OAuthConfig {
  /** Access tokens are short-lived: a client refreshes them (or, without a refresh token, signs in again). */
  accessTokenTtlSeconds: number;
  /** Each refresh issues a new refresh token valid this long (sliding); an unused connection ends after it. */
  refreshTokenTtlSeconds: number;
  /**
   * Signs the authorization server's short-lived cookies. Unset: derived from DATABASE_URL (shared
   * by every replica), or random per process with the embedded database.
   */
  cookieSecret: string | undefined;
  /**
   * Development only: Client ID Metadata Documents may live on localhost / 127.0.0.1 / [::1]
   * (an https:// client_id there is fetched over plain http). Never set in production.
   */
  cimdAllowLocalhost: boolean;
  /** Dynamic client registrations allowed per client address per minute, per pod (OAUTH_REGISTER_LIMIT). */
  registerLimitPerMinute: number;
  /** Client ID Metadata Document fetches (cache misses) per client address per minute, per pod (OAUTH_CIMD_FETCH_LIMIT). */
  cimdFetchLimitPerMinute: number;
}

export class ConfigError extends Error {}

/** A USD amount in micro-dollars as base units of an asset with `decimals` (rounded down). */
export function baseUnitsOfMicros(micros: bigint, decimals: number): bigint {
  return decimals >= 6 ? micros * 10n ** BigInt(decimals - 6) : micros / 10n ** BigInt(6 - decimals);
}

function x402Of(e: z.infer<typeof EnvSchema>): X402Config | undefined {
  if (!e.X402_PAY_TO) return undefined;
  const chainId = Number(e.X402_NETWORK.slice('eip155:'.length));
  // Self-hosted settlement needs a node of that chain: X402_RPC_URL, else the configured RPC of a known network.
  const known: Record<number, string | undefined> = { 1: e.ETHEREUM_RPC_URL, 8453: e.BASE_RPC_URL, 137: e.POLYGON_RPC_URL, 56: e.BSC_RPC_URL };
  if (!e.X402_FACILITATOR_URL && !e.X402_SETTLEMENT_KEY) {
    throw new ConfigError('invalid configuration:\n  X402_PAY_TO is set: also set X402_SETTLEMENT_KEY (self-hosted settlement) or X402_FACILITATOR_URL');
  }
  // Credits are whole numbers, so a price per credit that is positive in base units keeps every paid tool paid.
  const usdMicrosPerCredit = usdToMicros(e.X402_USD_PER_CREDIT);
  const decimals = e.X402_ASSET_DECIMALS;
  if (baseUnitsOfMicros(usdMicrosPerCredit, decimals) <= 0n) {
    throw new ConfigError(
      `invalid configuration:\n  X402_USD_PER_CREDIT=${e.X402_USD_PER_CREDIT} is 0 in an asset with X402_ASSET_DECIMALS=${decimals}: every paid tool would cost nothing; raise the price or fix the decimals`,
    );
  }
  return {
    network: e.X402_NETWORK,
    chainId,
    asset: e.X402_ASSET,
    assetName: e.X402_ASSET_NAME,
    assetVersion: e.X402_ASSET_VERSION,
    assetDecimals: e.X402_ASSET_DECIMALS,
    payTo: e.X402_PAY_TO,
    usdMicrosPerCredit,
    maxTimeoutSeconds: e.X402_MAX_TIMEOUT_S,
    rpcUrl: e.X402_RPC_URL ?? known[chainId],
    settlementKey: e.X402_SETTLEMENT_KEY,
    facilitatorUrl: e.X402_FACILITATOR_URL,
    rateLimit: { requestsPerMinute: e.X402_REQUESTS_PER_MINUTE, burst: e.X402_BURST },
    addressLimit: { requestsPerMinute: e.X402_ADDRESS_REQUESTS_PER_MINUTE, burst: e.X402_ADDRESS_BURST },
  };
}

/**
 * One thread per core but one, so the event loop keeps a core while every thread computes (and at
 * least one); an account may hold half the threads (rounded up), so on two threads or more one
 * account never holds them all.
 */
function computeSettings(workers: number | undefined, share: number | undefined, accountQueue: number, queue: number): Config['compute'] {
  const threads = workers ?? Math.max(1, availableParallelism() - 1);
  return { workers: threads, accountShare: share ?? Math.max(1, Math.ceil(threads / 2)), accountQueue, queue };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    metricsPort: e.METRICS_PORT ?? (e.PORT === 0 ? 0 : 9464),
    metricsEnabled: e.METRICS_ENABLED,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    migrateOnStart: e.MIGRATE_ON_START,
    dataDir: path.resolve(e.DATA_DIR),
    servers: e.MCP_SERVERS,
    toolCostOverrides: e.TOOL_COST_OVERRIDES,
    keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
    toolTimeoutMs: e.TOOL_TIMEOUT_MS,
    connectLimit: { requestsPerMinute: e.CONNECT_REQUESTS_PER_MINUTE, burst: e.CONNECT_BURST },
    settleIntervalMs: e.SETTLE_INTERVAL_MS,
    meterMaxInflight: e.METER_MAX_INFLIGHT,
    meterMaxBatch: e.METER_MAX_BATCH,
    sweepIntervalMs: e.SWEEP_INTERVAL_MS,
    jobs: { concurrency: e.JOBS_CONCURRENCY, pollIntervalMs: e.JOBS_POLL_INTERVAL_MS },
    alerts: {
      evaluateIntervalMs: e.ALERT_EVALUATE_INTERVAL_MS,
      webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
      webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE_MS,
    },
    tasks: {
      timeoutMs: e.TASK_TIMEOUT_MS,
      heartbeatMs: e.TASK_HEARTBEAT_MS,
      orphanAfterMs: e.TASK_ORPHAN_AFTER_MS,
      pollIntervalMs: e.TASK_POLL_INTERVAL_MS,
      sweepIntervalMs: e.TASK_SWEEP_INTERVAL_MS,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    drainDelayMs: e.DRAIN_DELAY_MS,
    writeTimeoutMs: e.WRITE_TIMEOUT_MS,
    maxPipelinedRequests: e.MAX_PIPELINED_REQUESTS,
    maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
    compute: computeSettings(e.COMPUTE_WORKERS, e.COMPUTE_ACCOUNT_SHARE, e.COMPUTE_ACCOUNT_QUEUE, e.COMPUTE_QUEUE),
    logLevel: e.LOG_LEVEL,
    marketData: e.MARKET_DATA,
    snapshotFile: e.SNAPSHOT_FILE ? path.resolve(e.SNAPSHOT_FILE) : undefined,
    coingecko: { baseUrl: e.COINGECKO_BASE_URL.replace(/\/+$/, ''), apiKey: e.COINGECKO_API_KEY, timeoutMs: e.COINGECKO_TIMEOUT_MS },
    social: {
      mode: e.SOCIAL_DATA,
      reddit: { baseUrl: e.REDDIT_BASE_URL, userAgent: e.REDDIT_USER_AGENT, token: e.REDDIT_TOKEN, subreddits: e.REDDIT_SUBREDDITS.split(','), timeoutMs: e.REDDIT_TIMEOUT_MS },
    },
    projects: { mode: e.PROJECT_DATA, defillama: { baseUrl: e.DEFILLAMA_BASE_URL, timeoutMs: e.DEFILLAMA_TIMEOUT_MS } },
    github:
      e.PROJECT_DATA === 'live' || e.GITHUB_API_URL || e.GITHUB_TOKEN
        ? { baseUrl: e.GITHUB_API_URL ?? 'https://api.github.com', token: e.GITHUB_TOKEN, timeoutMs: e.GITHUB_TIMEOUT_MS }
        : undefined,
    evm: {
      rpcUrls: {
        ethereum: e.ETHEREUM_RPC_URL ?? DEFAULT_RPC_URLS.ethereum,
        base: e.BASE_RPC_URL ?? DEFAULT_RPC_URLS.base,
        polygon: e.POLYGON_RPC_URL ?? DEFAULT_RPC_URLS.polygon,
        bsc: e.BSC_RPC_URL ?? DEFAULT_RPC_URLS.bsc,
      },
      timeoutMs: e.EVM_TIMEOUT_MS,
      retries: e.EVM_RETRIES,
      deadlineMs: e.EVM_DEADLINE_MS,
    },
    evmFinalityDepth: e.EVM_FINALITY_DEPTH,
    solanaRpcUrl: e.SOLANA_RPC_URL,
    explorer: { baseUrl: e.EXPLORER_API_URL, apiKey: e.EXPLORER_API_KEY },
    upstreamDeadlineMs: e.UPSTREAM_DEADLINE_MS,
    devnetManifest: e.DEVNET_MANIFEST ? path.resolve(e.DEVNET_MANIFEST) : undefined,
    demoAccount: e.DEMO_ACCOUNT,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    dashboard: {
      origin: e.DASHBOARD_ORIGIN ? new URL(e.DASHBOARD_ORIGIN).origin : undefined,
      sessionTtlSeconds: e.DASHBOARD_SESSION_TTL_S,
      nonceTtlSeconds: e.DASHBOARD_NONCE_TTL_S,
      signInLimit: e.DASHBOARD_SIGN_IN_LIMIT,
      signInWindowSeconds: e.DASHBOARD_SIGN_IN_WINDOW_S,
      signInWalletLimit: e.DASHBOARD_SIGN_IN_WALLET_LIMIT,
      signInGlobalLimit: e.DASHBOARD_SIGN_IN_GLOBAL_LIMIT,
      contact: e.DASHBOARD_CONTACT,
      walletConnectProjectId: e.WALLETCONNECT_PROJECT_ID,
      requestLogRetentionDays: e.REQUEST_LOG_RETENTION_DAYS,
    },
    oauth: {
      accessTokenTtlSeconds: e.OAUTH_ACCESS_TOKEN_TTL_S,
      refreshTokenTtlSeconds: e.OAUTH_REFRESH_TOKEN_TTL_S,
      cookieSecret: e.OAUTH_COOKIE_SECRET,
      cimdAllowLocalhost: e.OAUTH_CIMD_ALLOW_LOCALHOST,
      registerLimitPerMinute: e.OAUTH_REGISTER_LIMIT,
      cimdFetchLimitPerMinute: e.OAUTH_CIMD_FETCH_LIMIT,
    },
    payments: { chains: e.PAYMENT_CHAINS, packs: e.CREDIT_PACKS, orderTtlSeconds: e.PAYMENT_ORDER_TTL_S, verifyIntervalMs: e.PAYMENT_VERIFY_INTERVAL_MS },
    x402: x402Of(e),
    benchTools: e.CRYPTOMCP_BENCH_TOOLS,
    benchUnmetered: e.CRYPTOMCP_BENCH_UNMETERED,
    benchModernSdk: e.CRYPTOMCP_BENCH_MODERN_SDK,
  };
}
