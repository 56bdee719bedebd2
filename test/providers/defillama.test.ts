// The live DefiLlama adapter and its fallback to the offline data, over real HTTP against a
// loopback server replaying the documented shapes of api.llama.fi (/protocols, /protocol/{slug},
// /v2/chains, /v2/historicalChainTvl/{chain}); then project-intelligence end to end with
// PROJECT_DATA=live and GitHub pointed at the same replay.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FallbackProjectSource } from '../../server/providers/projects/fallback.ts';
import { DefiLlamaSource } from '../../server/providers/projects/live.ts';
import { lazyProjectsData, SnapshotProjectSource } from '../../server/providers/projects/snapshot.ts';
import { replayServer, type Replay } from '../helpers/replay-server.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

// Fixtures written by hand in the documented shapes; the values are illustrative.
const DAY = 86_400;
const T0 = Date.parse('2025-12-01T00:00:00Z') / 1000;
const PROTOCOLS = [
  {
    id: '1599', name: 'Aave V3', slug: 'aave-v3', symbol: 'AAVE', url: 'https://aave.com', description: 'Earn interest, borrow assets.', chain: 'Multi-Chain',
    gecko_id: 'aave', cmcId: '7278', category: 'Lending', chains: ['Ethereum', 'Arbitrum'], oracles: ['Chainlink'], forkedFrom: [], listedAt: 1647353990,
    tvl: 30_000_000_000, chainTvls: { Ethereum: 27_000_000_000, Arbitrum: 3_000_000_000, 'Ethereum-borrowed': 15_000_000_000 }, change_1h: 0.1, change_1d: -0.4, change_7d: 2.1, mcap: 4_000_000_000,
  },
  {
    id: '182', name: 'Lido', slug: 'lido', symbol: 'LDO', url: 'https://lido.fi', description: 'Liquid staking.', chain: 'Multi-Chain',
    gecko_id: 'lido-dao', cmcId: '8000', category: 'Liquid Staking', chains: ['Ethereum'], oracles: [], forkedFrom: [], listedAt: 1608336000,
    tvl: 25_000_000_000, chainTvls: { Ethereum: 25_000_000_000 }, change_1h: 0, change_1d: 0.2, change_7d: -1, mcap: 1_000_000_000,
  },
];
const AAVE_TVL = Array.from({ length: 120 }, (_, i) => ({ date: T0 - (119 - i) * DAY, totalLiquidityUSD: 20_000_000_000 + i * 100_000_000 }));
// DefiLlama's last point is often today's intraday value: same UTC day as the one before.
const AAVE_DETAIL = { id: '1599', name: 'Aave V3', tvl: [...AAVE_TVL, { date: T0 + 3600, totalLiquidityUSD: 31_000_000_000 }], chainTvls: {}, currentChainTvls: { Ethereum: 27e9 } };
const CHAINS = [
  { gecko_id: 'ethereum', tvl: 60_000_000_000, tokenSymbol: 'ETH', cmcId: '1027', name: 'Ethereum', chainId: 1 },
  { gecko_id: 'solana', tvl: 9_000_000_000, tokenSymbol: 'SOL', cmcId: '5426', name: 'Solana', chainId: null },
];
const ETH_HISTORY = [
  { date: T0 - DAY, tvl: 59_000_000_000 },
  { date: T0, tvl: 60_000_000_000 },
];

let llama: Replay;
beforeAll(async () => {
  llama = await replayServer();
});
afterAll(async () => {
  await llama?.close();
});
beforeEach(() => {
  llama.routes.clear();
  llama.requests.length = 0;
  llama.routes.set('/protocols', () => ({ status: 200, body: PROTOCOLS }));
  llama.routes.set('/protocol/aave-v3', () => ({ status: 200, body: AAVE_DETAIL }));
  llama.routes.set('/v2/chains', () => ({ status: 200, body: CHAINS }));
  llama.routes.set('/v2/historicalChainTvl/Ethereum', () => ({ status: 200, body: ETH_HISTORY }));
});

const source = () => new DefiLlamaSource({ baseUrl: llama.url, retries: 1, timeoutMs: 2000 });

describe('DefiLlamaSource', () => {
  it('reads protocols with their token and TVL per chain (plain chains only, not "-borrowed")', async () => {
    const list = await source().protocols();
    expect(list.source).toBe('live:defillama');
    expect(list.protocols[0]).toMatchObject({ name: 'Aave V3', slug: 'aave-v3', category: 'Lending', tvl_usd: 30e9, gecko_id: 'aave', oracles: ['Chainlink'], chain_tvls: { Ethereum: 27e9, Arbitrum: 3e9 } });
  });

  it("turns a protocol's TVL series into one point per UTC day, the day's last value winning", async () => {
    const h = (await source().protocolTvl({ name: 'Aave V3', slug: 'aave-v3', category: null, tvl_usd: null, chains: [], oracles: [], url: null }))!;
    expect(h.points).toHaveLength(120);
    expect(h.points[119]).toEqual({ date: '2025-12-01', tvl_usd: 31e9 });
    expect(h.points[0]).toEqual({ date: new Date((T0 - 119 * DAY) * 1000).toISOString().slice(0, 10), tvl_usd: 20e9 });
  });

  it('a protocol DefiLlama does not know (404) has no history; chains and chain history parse', async () => {
    const s = source();
    expect(await s.protocolTvl({ name: 'Nope', slug: 'nope', category: null, tvl_usd: null, chains: [], oracles: [], url: null })).toBeUndefined();
    expect((await s.chains()).chains.map((c) => [c.name, c.tvl_usd])).toEqual([['Ethereum', 60e9], ['Solana', 9e9]]);
    expect((await s.chainTvl('Ethereum'))!.points.map((p) => p.tvl_usd)).toEqual([59e9, 60e9]);
  });

  it('caches answers: a second call does not reach the API', async () => {
    const s = source();
    await s.protocols();
    await s.protocols();
    expect(llama.requests.filter((r) => r.path === '/protocols')).toHaveLength(1);
  });

  it('retries a 5xx, then answers; a wrong shape is an upstream error', async () => {
    let calls = 0;
    llama.routes.set('/v2/chains', () => (++calls === 1 ? { status: 503, body: {} } : { status: 200, body: CHAINS }));
    expect((await source().chains()).chains).toHaveLength(2);
    expect(calls).toBe(2);
    llama.routes.set('/protocols', () => ({ status: 200, body: { protocols: 'not a list' } }));
    await expect(source().protocols()).rejects.toMatchObject({ name: 'ProviderError', provider: 'live:defillama', kind: 'error' });
  });

  it('FallbackProjectSource answers from the offline data when the API fails, and says so', async () => {
    llama.routes.set('/protocols', () => ({ status: 500, body: {} }));
    const f = new FallbackProjectSource(source(), new SnapshotProjectSource(lazyProjectsData()));
    const list = await f.protocols();
    expect(list.source).toBe('snapshot:defillama-protocols-2025-12-19 (fallback: live:defillama error)');
    expect(list.protocols.find((p) => p.name === 'Kamino Lend')).toBeDefined();
  });
});

describe('project-intelligence with PROJECT_DATA=live', () => {
  let suite: ToolSuite;
  beforeAll(async () => {
    suite = await toolSuite('project-intelligence', 1000, { PROJECT_DATA: 'live', DEFILLAMA_BASE_URL: llama.url, GITHUB_API_URL: llama.url, DEFILLAMA_TIMEOUT_MS: '3000' });
  }, 120_000);
  afterAll(async () => {
    await suite?.close();
  });

  it('profiles come from the live API (source live:defillama), with TVL per chain and the token', async () => {
    const env = await suite.call<{ tvl_usd: number; chain_tvls: Record<string, number>; token: { id: string }; tvl_history: { last_tvl_usd: number } }>('get_project_profile', { project: 'aave-v3' });
    expect(env.data).toMatchObject({ tvl_usd: 30e9, chain_tvls: { Ethereum: 27e9, Arbitrum: 3e9 }, token: { id: 'aave' }, tvl_history: { last_tvl_usd: 31e9 } });
    expect(env.metadata.source).toBe('live:defillama');
  });

  it('due diligence adds developer activity from GitHub when a repository is named', async () => {
    llama.routes.set('/repos/aave/aave-v3-core', () => ({
      status: 200,
      body: { full_name: 'aave/aave-v3-core', html_url: 'https://github.com/aave/aave-v3-core', description: 'core', stargazers_count: 900, forks_count: 500, open_issues_count: 20, archived: false, created_at: '2021-08-01T00:00:00Z', pushed_at: '2025-11-30T00:00:00Z', license: { spdx_id: 'BUSL-1.1' } },
    }));
    llama.routes.set('/repos/aave/aave-v3-core/stats/commit_activity', () => ({ status: 200, body: Array.from({ length: 52 }, (_, i) => ({ days: [0, 1, 0, 1, 0, 0, 0], total: 2, week: T0 - (51 - i) * 7 * DAY })) }));
    llama.routes.set('/repos/aave/aave-v3-core/contributors', () => ({ status: 200, body: [{ login: 'a', contributions: 30 }, { login: 'b', contributions: 10 }] }));
    const env = await suite.call<{ flags: { topic: string; level: string; data: { commits: { weeks_13: number }; contributors: { count: number; top_share: number } } }[] }>('due_diligence_report', {
      project: 'Aave V3',
      github_repo: 'aave/aave-v3-core',
    });
    const dev = env.data.flags.find((f) => f.topic === 'developers')!;
    expect(dev).toMatchObject({ level: 'green', data: { commits: { weeks_13: 26 }, contributors: { count: 2, top_share: 0.75 } } });
    expect(env.metadata.credits_used).toBe(10);
  });

  it('a repository GitHub does not know is 404 naming it, and costs nothing; GitHub down leaves only that flag unanswered', async () => {
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await post(`${suite.svc.url}/mcp/project-intelligence`, toolCall('due_diligence_report', { project: 'Aave V3', github_repo: 'aave/no-such-repo' }), { 'x-api-key': suite.key });
    expect(res.status).toBe(404);
    expect((res.body as { error: { details: { github_repo: string } } }).error.details.github_repo).toBe('aave/no-such-repo');
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
    llama.routes.set('/repos/aave/down', () => ({ status: 503, body: {} }));
    const env = await suite.call<{ flags: { topic: string; level: string; finding: string }[] }>('due_diligence_report', { project: 'Aave V3', github_repo: 'aave/down' });
    expect(env.data.flags.find((f) => f.topic === 'developers')).toMatchObject({ level: 'neutral', finding: 'Not covered: GitHub did not answer (error).' });
  }, 60_000);
});
