// Every tool of every endpoint with arguments a user would send, on the offline snapshot and a
// seeded devnet (anvil): what test/mcp/every-tool calls, and where other suites take one real
// call per server from (test/oauth/mcp-remote).
import { startDevnet, type Devnet, type DevnetManifest } from '../../server/devnet/devnet.ts';
import type { ServerName } from '../../server/mcp/names.ts';
import type { RunningService } from '../../server/runtime.ts';
import { writeManifest } from './chain.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createAccountWithKey, createUnlimitedPlan, startTestService } from './service.ts';

export type Args = Record<string, unknown>;
/** '' is the all-in-one endpoint ({base}/mcp), whose own tools are the three free ones; 'discover' its discovery mode ({base}/mcp/discover). */
export type Endpoint = ServerName | '' | 'discover';

/** The alert rule the last create_*_alert made (the test records it): pause, resume and delete act on it. */
export const ALERT_STATE = { ruleId: '' };
const ALERT_MANAGEMENT: Record<string, (m: DevnetManifest) => Args> = {
  list_alert_rules: () => ({}),
  pause_alert_rule: () => ({ rule_id: ALERT_STATE.ruleId }),
  resume_alert_rule: () => ({ rule_id: ALERT_STATE.ruleId }),
  get_alerts: () => ({ limit: 5 }),
  delete_alert_rule: () => ({ rule_id: ALERT_STATE.ruleId }),
};

export const FREE: Record<string, (m: DevnetManifest) => Args> = {
  get_capabilities: () => ({}),
  // Arguments the tool would refuse: the answer then lists the issues.
  estimate_cost: () => ({ tool: 'get_usage', arguments: { unexpected: 1 } }),
  get_usage: () => ({}),
};

const account = (m: DevnetManifest, kind: string) => m.accounts.find((a) => a.kind === kind)!.address;
const token = (m: DevnetManifest, symbol: string) => m.tokens.find((t) => t.symbol === symbol)!.address;
const lastBlock = (m: DevnetManifest) => Math.max(...m.transfers.map((t) => t.block));

/** Each tool of each endpoint with arguments a user would send; order matters where a tool reads what one before it wrote. */
export const CASES: Record<Endpoint, Record<string, (m: DevnetManifest) => Args>> = {
  'price-prediction': {
    forecast_price: () => ({ asset: 'bitcoin', horizon: 7 }),
    backtest_forecast: () => ({ asset: 'ethereum', horizon: 7, model: 'ets', origins: 5 }),
    get_volatility_forecast: () => ({ asset: 'bitcoin', horizon: 5 }),
    get_prediction_track_record: () => ({ asset: 'bitcoin', horizon: 7 }),
    get_technical_indicators: () => ({ asset: 'ETH', history: 3 }),
    get_trading_signal: () => ({ asset: 'bitcoin', replay_days: 120 }),
    get_support_resistance: () => ({ asset: 'solana', pivot_period: 'week' }),
    scenario_analysis: () => ({ asset: 'ethereum' }),
    create_price_alert: () => ({ asset: 'bitcoin', condition: 'above', level: 1_000_000, note: 'schemas' }),
    ...ALERT_MANAGEMENT,
    ...FREE,
  },
  'market-intelligence': {
    search_assets: () => ({ query: 'bitcoin', limit: 5 }),
    get_prices: () => ({ assets: ['bitcoin', 'ethereum', 'solana'] }),
    get_ohlcv: () => ({ asset: 'bitcoin', interval: 'weekly', limit: 5 }),
    get_market_overview: () => ({}),
    get_top_movers: () => ({ window: '7d', limit: 3 }),
    get_asset_metrics: () => ({ asset: 'ethereum', window_days: 180 }),
    get_correlation_matrix: () => ({ assets: ['bitcoin', 'ethereum', 'solana'] }),
    ...FREE,
  },
  'blockchain-explorer': {
    get_gas: () => ({}),
    get_block: (m) => ({ number: m.transfers[0]!.block }),
    get_address_summary: (m) => ({ address: account(m, 'exchange') }),
    get_token_transfers: (m) => ({ token: token(m, 'DPT'), limit: 5 }),
    // A token transfer: its call and logs are decoded.
    get_transaction: (m) => ({ hash: m.transfers.find((t) => t.asset === 'DPT')!.tx_hash }),
    get_address_transactions: (m) => ({ address: account(m, 'exchange'), from_block: 0, limit: 5 }),
    read_contract: (m) => ({ address: token(m, 'DPT'), signature: 'function balanceOf(address) view returns (uint256)', args: [account(m, 'exchange')] }),
    get_contract_info: (m) => ({ address: token(m, 'DUP') }),
    ...FREE,
  },
  'token-intelligence': {
    search_token: () => ({ query: 'USDC', limit: 5 }),
    get_token_profile: (m) => ({ address: token(m, 'DUSD') }),
    get_holder_analysis: (m) => ({ token: token(m, 'DPT'), top: 5 }),
    get_token_security: (m) => ({ address: token(m, 'DUP') }),
    get_risk_score: (m) => ({ address: token(m, 'DMT') }),
    ...FREE,
  },
  'portfolio-analytics': {
    get_portfolio: (m) => ({ addresses: [account(m, 'exchange')], chains: ['ethereum'] }),
    get_risk_metrics: (m) => ({ addresses: [account(m, 'fund')], chains: ['ethereum'], window_days: 90 }),
    compare_wallets: (m) => ({ addresses: m.accounts.slice(1, 4).map((a) => a.address), chains: ['ethereum'] }),
    ...FREE,
  },
  'whale-intelligence': {
    get_whale_transactions: (m) => ({ from_block: 0, to_block: lastBlock(m), limit: 5 }),
    get_exchange_flows: (m) => ({ token: token(m, 'DUSD'), from_block: 0, to_block: lastBlock(m) }),
    profile_wallet: (m) => ({ address: account(m, 'wallet'), from_block: 0, to_block: lastBlock(m) }),
    watch_address: (m) => ({ address: account(m, 'fund'), note: 'schema test' }),
    list_watches: () => ({}),
    get_watch_activity: () => ({}),
    unwatch_address: (m) => ({ address: account(m, 'fund') }),
    create_whale_alert: () => ({ chain: 'ethereum', min_usd: 1_000_000, match: 'exchange' }),
    ...ALERT_MANAGEMENT,
    ...FREE,
  },
  'social-intelligence': {
    get_social_sentiment: () => ({ asset: 'bitcoin', platform: 'reddit', from: '2025-10-01', to: '2025-10-30' }),
    get_social_volume: () => ({ asset: 'bitcoin', platform: 'reddit', from: '2025-10-01', to: '2025-10-30', interval: 'week' }),
    get_trending_topics: () => ({ platform: 'reddit', to: '2025-11-05', days: 7 }),
    detect_social_spike: () => ({ from: '2025-09-29', to: '2025-10-30' }),
    get_top_posts: () => ({ asset: 'bitcoin', from: '2025-10-01', to: '2025-10-30', limit: 3 }),
    create_social_alert: () => ({ asset: 'bitcoin', platform: 'reddit' }),
    ...ALERT_MANAGEMENT,
    ...FREE,
  },
  'kol-analytics': {
    get_kol_profile: () => ({ handle: '@CoinDesk' }),
    get_kol_calls: () => ({ handle: 'rogerkver', limit: 5 }),
    get_kol_performance: () => ({ handle: 'rogerkver', limit: 5 }),
    rank_kols: () => ({ limit: 5 }),
    get_asset_kol_mentions: () => ({ asset: 'ETH', limit: 5 }),
    ...FREE,
  },
  'project-intelligence': {
    search_projects: () => ({ query: 'aave', limit: 5 }),
    get_project_profile: () => ({ project: 'aave' }),
    get_tvl_history: () => ({ project: 'Kamino Lend', from: '2025-01-01', to: '2025-03-31', limit: 10 }),
    compare_projects: () => ({ projects: ['Aave V3', 'Kamino Lend'] }),
    get_category_overview: () => ({ category: 'Lending', limit: 5 }),
    get_chain_overview: () => ({ chain: 'solana' }),
    due_diligence_report: () => ({ project: 'Kamino Lend' }),
    ...FREE,
  },
  // The all-in-one's own tools: the free ones, and the alert rules' management listed once.
  '': { list_alert_rules: ALERT_MANAGEMENT.list_alert_rules!, get_alerts: ALERT_MANAGEMENT.get_alerts!, ...FREE },
  discover: {
    find_tools: () => ({ query: 'gas' }),
    describe_tool: () => ({ name: 'get_gas' }),
    call_tool: () => ({ name: 'get_gas', arguments: {} }),
  },
};


/** What the every-tool suites run against: a seeded devnet, the service on it (no bench tools), and a premium key. */
export interface ToolsService {
  devnet: Devnet;
  db: TestDatabase;
  svc: RunningService;
  key: string;
  stop(): Promise<void>;
}

export async function startToolsService(): Promise<ToolsService> {
  const devnet = await startDevnet();
  const db = await createTestDatabase();
  // Named premium: the alert rule cap is per plan name (premium's is 500; an unknown plan gets free's 3).
  await createUnlimitedPlan(db, 'premium', 100_000);
  // The tools users get: no bench tools.
  const svc = await startTestService(db.url, {
    CRYPTOMCP_BENCH_TOOLS: undefined,
    ETHEREUM_RPC_URL: devnet.manifest.rpc_url,
    DEVNET_MANIFEST: writeManifest(devnet.manifest),
    TOOL_TIMEOUT_MS: '120000',
  });
  const { key } = await createAccountWithKey(db, { plan: 'premium' });
  return {
    devnet,
    db,
    svc,
    key,
    stop: async () => {
      await svc.close();
      await db.drop();
      await devnet.stop();
    },
  };
}
