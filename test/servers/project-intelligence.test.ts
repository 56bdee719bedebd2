// project-intelligence over the real gateway and the SDK client. Every number is recomputed here
// from the raw DefiLlama CSVs in data/raw/projects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawCsv } from '../helpers/raw-csv.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';
import { addDays } from '../../server/lib/dates.ts';

let suite: ToolSuite;
const protocols = rawCsv('projects/defillama_protocols_2025-12-19.csv');
const history = (name: string) =>
  rawCsv('projects/defillama_protocol_tvl_history_solana_move_lending.csv')
    .filter((r) => r.protocol === name)
    .map((r) => ({ date: r.date!, tvl_usd: Number(r.tvl_usd) }));

beforeAll(async () => {
  suite = await toolSuite('project-intelligence', 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

async function refused(tool: string, args: Record<string, unknown>) {
  const before = await balanceOf(suite.db, suite.accountId);
  const res = await post(`${suite.svc.url}/mcp/project-intelligence`, toolCall(tool, args), { 'x-api-key': suite.key });
  expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  return res as { status: number; body: { error: { code: string; details: Record<string, unknown> } } };
}

describe('search_projects and get_project_profile', () => {
  it('Solana lending projects over $100M are the raw rows that match, largest TVL first, for free', async () => {
    const expected = protocols
      .filter((r) => r.category === 'Lending' && r.chains!.split(';').includes('Solana') && Number(r.tvl_usd || 0) >= 1e8)
      .sort((a, b) => Number(b.tvl_usd) - Number(a.tvl_usd))
      .map((r) => [r.name, Number(r.tvl_usd)]);
    const env = await suite.call<{ total: number; projects: { name: string; tvl_usd: number }[] }>('search_projects', {
      category: 'lending',
      chain: 'solana',
      min_tvl_usd: 1e8,
      limit: 100,
    });
    expect(expected.length).toBeGreaterThan(2);
    expect(env.data.projects.map((p) => [p.name, p.tvl_usd])).toEqual(expected);
    expect(env.metadata).toMatchObject({ credits_used: 0, data_as_of: '2025-12-19', source: 'snapshot' });
  });

  it("Aave V3's profile: TVL, chains and oracles as in the raw list; its token is Aave; its 2023 chains from the 2023 listing", async () => {
    const raw = protocols.find((r) => r.name === 'Aave V3')!;
    const listed2023 = rawCsv('projects/defillama_protocol_chain_category_2023.csv').filter((r) => r.Name!.toLowerCase() === 'aave v3').map((r) => r.Chain);
    const env = await suite.call<{ tvl_usd: number; chains: string[]; oracles: string[]; url: string; token: { id: string }; tvl_rank: number; listing_2023: { chains: string[] } }>(
      'get_project_profile',
      { project: 'aave v3' },
    );
    expect(env.data).toMatchObject({ tvl_usd: Number(raw.tvl_usd), chains: raw.chains!.split(';'), oracles: raw.oracles!.split(';'), url: raw.url, token: { id: 'aave' } });
    expect(env.data.tvl_rank).toBe(protocols.filter((r) => Number(r.tvl_usd || 0) > Number(raw.tvl_usd)).length + 1);
    expect(env.data.listing_2023.chains).toEqual(listed2023);
    expect(env.metadata.credits_used).toBe(1);
  });

  it('an unknown project is 404 NOT_FOUND with close matches, and costs nothing', async () => {
    const res = await refused('get_project_profile', { project: 'Kamino Lnd' });
    expect(res.status).toBe(404);
    expect((res.body.error.details.close_matches as { name: string }[]).map((m) => m.name)).toContain('Kamino Lend');
  });
});

describe('get_tvl_history', () => {
  it("Kamino Lend's daily TVL in a range equals the raw history, paginated", async () => {
    const raw = history('Kamino Lend').filter((p) => p.date >= '2025-01-01' && p.date <= '2025-03-31');
    const first = await suite.call<{ total: number; points: { date: string; tvl_usd: number }[] }>('get_tvl_history', { project: 'Kamino Lend', from: '2025-01-01', to: '2025-03-31', limit: 60 });
    const second = await suite.call<{ points: { date: string; tvl_usd: number }[] }>('get_tvl_history', {
      project: 'Kamino Lend',
      from: '2025-01-01',
      to: '2025-03-31',
      limit: 60,
      cursor: first.metadata.next_cursor,
    });
    expect(first.data.total).toBe(raw.length);
    expect([...first.data.points, ...second.data.points]).toEqual(raw);
  });

  it('a chain by our name (bsc) is DefiLlama\'s "Binance" series of the raw chain file', async () => {
    const raw = rawCsv('projects/defillama_chain_tvl_daily_2018_2023.csv').filter((r) => r.chain === 'Binance' && r.date! >= '2023-07-01');
    const env = await suite.call<{ subject: string; points: { date: string; tvl_usd: number }[] }>('get_tvl_history', { chain: 'bsc', from: '2023-07-01' });
    expect(env.data.subject).toBe('Binance');
    expect(env.data.points).toEqual(raw.map((r) => ({ date: r.date, tvl_usd: Number(r.tvl_usd) })));
    expect(env.metadata.data_as_of).toBe(raw[raw.length - 1]!.date);
  });

  it('a project without history is 404 listing those that have one; a range outside is 400 with the covered range; neither costs anything', async () => {
    const none = await refused('get_tvl_history', { project: 'Lido' });
    expect(none.status).toBe(404);
    expect(none.body.error.details.projects_with_history).toContain('Kamino Lend');
    const outside = await refused('get_tvl_history', { total: true, from: '2024-01-01' });
    expect(outside.status).toBe(400);
    const total = rawCsv('projects/defillama_total_defi_tvl_daily_2018_2023.csv');
    expect(outside.body.error.details.covered_range).toEqual({ from: total[0]!.date, to: total[total.length - 1]!.date });
    const both = await refused('get_tvl_history', { project: 'Lido', chain: 'Ethereum' });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('INVALID_PARAMS');
  });
});

describe('compare_projects, overviews, due diligence', () => {
  it('growth over 30/90/365 days and the drawdown of each project follow from the raw histories', async () => {
    const env = await suite.call<{ projects: { name: string; history: { growth: { d30: number; d90: number; d365: number }; max_drawdown: { value: number } } }[] }>(
      'compare_projects',
      { projects: ['Kamino Lend', 'marginfi Lending', 'Jito Liquid Staking'] },
    );
    for (const p of env.data.projects) {
      const h = history(p.name);
      const last = h[h.length - 1]!;
      for (const [key, days] of [['d30', 30], ['d90', 90], ['d365', 365]] as const) {
        const start = [...h].reverse().find((x) => x.date <= addDays(last.date, -days))!;
        expect(p.history.growth[key]).toBeCloseTo(last.tvl_usd / start.tvl_usd - 1, 12);
      }
      let peak = 0;
      let dd = 0;
      for (const x of h) {
        peak = Math.max(peak, x.tvl_usd);
        dd = Math.min(dd, x.tvl_usd / peak - 1);
      }
      expect(p.history.max_drawdown.value).toBeCloseTo(dd, 12);
    }
    expect(env.metadata.credits_used).toBe(2);
  });

  it("the Lending category's TVL, project count and top-3 share equal sums over the raw list", async () => {
    const rows = protocols.filter((r) => r.category === 'Lending');
    const tvls = rows.filter((r) => r.tvl_usd).map((r) => Number(r.tvl_usd)).sort((a, b) => b - a);
    const total = tvls.reduce((a, b) => a + b, 0);
    const env = await suite.call<{ tvl_usd: number; projects: number; top3_share: number; leaders: { name: string }[] }>('get_category_overview', { category: 'Lending' });
    expect(env.data.tvl_usd).toBeCloseTo(total, 2);
    expect(env.data.projects).toBe(rows.length);
    expect(env.data.top3_share).toBeCloseTo((tvls[0]! + tvls[1]! + tvls[2]!) / total, 12);
    expect(env.data.leaders[0]!.name).toBe('Aave V3');
  });

  it("Solana's chain overview: last TVL from the raw chain file, project count from the raw 2025 list", async () => {
    const raw = rawCsv('projects/defillama_chain_tvl_daily_2018_2023.csv').filter((r) => r.chain === 'Solana');
    const env = await suite.call<{ tvl: { tvl_usd: number; as_of: string }; projects: { count: number } }>('get_chain_overview', { chain: 'solana' });
    expect(env.data.tvl).toMatchObject({ tvl_usd: Number(raw[raw.length - 1]!.tvl_usd), as_of: raw[raw.length - 1]!.date });
    expect(env.data.projects.count).toBe(protocols.filter((r) => r.chains!.split(';').includes('Solana')).length);
  });

  it('the due-diligence report flags each finding with the data it rests on (Kamino Lend), for 10 credits', async () => {
    const h = history('Kamino Lend');
    const last = h[h.length - 1]!;
    const start = [...h].reverse().find((x) => x.date <= addDays(last.date, -90))!;
    const g90 = last.tvl_usd / start.tvl_usd - 1;
    const env = await suite.call<{ flags: { level: string; topic: string; data: Record<string, unknown> }[] }>('due_diligence_report', { project: 'Kamino Lend' });
    const flag = (t: string) => env.data.flags.find((f) => f.topic === t)!;
    expect(flag('tvl_trend').data.growth_90d).toBeCloseTo(g90, 12);
    expect(flag('tvl_trend').level).toBe(g90 <= -0.3 ? 'red' : g90 <= -0.1 ? 'amber' : g90 >= 0.1 ? 'green' : 'neutral');
    const kamino = protocols.find((r) => r.name === 'Kamino Lend')!;
    expect(kamino.chains!.split(';')).toHaveLength(1);
    expect(flag('chains')).toMatchObject({ level: 'amber', data: { chains: kamino.chains!.split(';') } });
    expect(flag('oracles')).toMatchObject({ level: 'green', data: { oracles: protocols.find((r) => r.name === 'Kamino Lend')!.oracles!.split(';') } });
    expect(flag('token').data).toMatchObject({ token: null });
    expect(env.metadata.credits_used).toBe(10);
  });
});
