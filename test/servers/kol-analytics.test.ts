// kol-analytics over the real gateway and the SDK client. Post counts come from the raw tweet and
// Reddit CSVs; call returns from the raw price CSV each call's price source names (yahoo,
// cryptocompare, coinmarketcap), so neither the built datasets nor the tools are trusted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exclusionOf, isRetweet } from '../../server/analytics/calls.ts';
import { sentimentScore, stanceOf } from '../../server/analytics/sentiment.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';
import { rawCloses, rawCsv, rawReddit, rawTweets } from '../helpers/raw-csv.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';
import { addDays } from '../../server/lib/dates.ts';

let suite: ToolSuite;
const snapshot = loadSnapshot();
const extractor = mentionExtractor(snapshot.assets);
const tweets = rawTweets();
const tweetDays = tweets.map((t) => t.day).sort();

beforeAll(async () => {
  suite = await toolSuite('kol-analytics', 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

async function refused(tool: string, args: Record<string, unknown>) {
  const before = await balanceOf(suite.db, suite.accountId);
  const res = await post(`${suite.svc.url}/mcp/kol-analytics`, toolCall(tool, args), { 'x-api-key': suite.key });
  expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  return res as { status: number; body: { error: { code: string; details: Record<string, unknown> } } };
}

describe('get_kol_profile', () => {
  it("coindesk's tweet count, first and last tweet in a window equal the raw CSV; influence is the 2017 graph's in-degree", async () => {
    const raw = tweets.filter((t) => t.author === 'coindesk' && t.day >= '2017-10-01' && t.day <= '2017-10-31');
    const inf = rawCsv('social/crypto_twitter_influencers_2017.csv').find((r) => r.handle!.toLowerCase() === 'coindesk')!;
    const env = await suite.call<{ activity: { posts: number; first: string; last: string; active_days: number }; influence: { value: number } }>('get_kol_profile', {
      handle: '@CoinDesk',
      from: '2017-10-01',
      to: '2017-10-31',
    });
    expect(raw.length).toBeGreaterThan(100);
    expect(env.data.activity.posts).toBe(raw.length);
    const sorted = raw.map((t) => t.created).sort();
    expect(env.data.activity.first).toBe(sorted[0]);
    expect(env.data.activity.last).toBe(sorted[sorted.length - 1]);
    expect(env.data.activity.active_days).toBe(new Set(raw.map((t) => t.day)).size);
    expect(env.data.influence.value).toBe(Number(inf.followed_by_in_influencers_seed_graph));
    expect(env.metadata).toMatchObject({ source: 'snapshot:twitter', data_as_of: tweetDays[tweetDays.length - 1], credits_used: 2 });
  });

  it('a Reddit author is found on reddit, with post and comment counts from the raw CSVs', async () => {
    const counts = new Map<string, number>();
    for (const r of rawReddit()) if (r.author !== '[deleted]' && r.author !== 'AutoModerator') counts.set(r.author, (counts.get(r.author) ?? 0) + 1);
    const [author, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    const env = await suite.call<{ platform: string; activity: { posts: number } }>('get_kol_profile', { handle: author, platform: 'reddit' });
    expect(env.data).toMatchObject({ platform: 'reddit', activity: { posts: n } });
  });

  it('an unknown handle is 404 NOT_FOUND with close matches, and costs nothing', async () => {
    const res = await refused('get_kol_profile', { handle: 'rogerkvr' });
    expect(res.status).toBe(404);
    expect(res.body.error.details.close_matches).toContain('rogerkver');
  });

  it('a window outside the data is 400 naming the covered range', async () => {
    const res = await refused('get_kol_profile', { handle: 'coindesk', from: '2020-01-01' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.covered_range).toEqual({ from: tweetDays[0], to: tweetDays[tweetDays.length - 1] });
  });
});

describe('get_kol_calls and get_kol_performance', () => {
  const from = '2017-03-01';
  const to = '2017-05-31';
  // From the raw tweets: rogerkver's own tweets (no retweets) in the window with a stance, naming
  // one asset, that the call rule (adverts, lookalike coins) keeps.
  const expectedCalls = tweets
    .filter((t) => t.author === 'rogerkver' && t.day >= from && t.day <= to && !isRetweet(t.text))
    .flatMap((t) => {
      const compound = sentimentScore(t.text);
      const stance = stanceOf(compound);
      const assets = extractor.assets(t.text);
      if (stance === 'neutral') return [];
      return assets
        .filter((asset) => exclusionOf({ id: t.id, author: t.author, created: t.created, text: t.text, compound, assets, url: '' }, asset) === null)
        .map((asset) => ({ asset, day: t.day, stance, id: t.id }));
    });

  it("rogerkver's calls in a window are his own tweets with a stance and an asset, newest first", async () => {
    const env = await suite.call<{ total: number; calls: { asset: string; date: string; stance: string; post: { id: string } }[] }>('get_kol_calls', {
      handle: 'rogerkver',
      from,
      to,
      limit: 100,
    });
    expect(expectedCalls.length).toBeGreaterThan(5);
    expect(env.data.total).toBe(expectedCalls.length);
    const key = (c: { asset: string; stance: string; id: string }) => `${c.id}:${c.asset}:${c.stance}`;
    expect(env.data.calls.map((c) => key({ ...c, id: c.post.id })).sort()).toEqual(expectedCalls.map(key).sort());
    expect(env.metadata.credits_used).toBe(3);
  });

  it("each call's 1/7/30-day return, hit and excess over BTC follow from the raw closes", async () => {
    const env = await suite.call<{
      summary: { days: number; calls_scored: number; hit_rate: number; mean_return: number }[];
      scored_calls: {
        asset: string;
        date: string;
        stance: 'bullish' | 'bearish';
        price_source: string;
        entry_close: number;
        horizons: { days: number; return: number | null; directional_return: number | null; excess_return: number | null; hit: boolean | null }[];
      }[];
    }>('get_kol_performance', { handle: 'rogerkver', from, to, limit: 100 });
    // Every page: one page of 100 may stop early to fit the answer's size.
    const calls = [...env.data.scored_calls];
    for (let cursor = env.metadata.next_cursor; cursor; ) {
      const next = await suite.call<typeof env.data>('get_kol_performance', { handle: 'rogerkver', from, to, limit: 100, cursor });
      calls.push(...next.data.scored_calls);
      cursor = next.metadata.next_cursor;
    }
    expect(calls.length).toBeGreaterThan(5);
    const btcSource = snapshot.series.bitcoin!;
    const dirs: number[][] = [[], [], []];
    for (const c of calls) {
      const entry = snapshot.assets.find((a) => a.id === c.asset)!;
      const closes = rawCloses(c.price_source, entry);
      expect(c.entry_close).toBe(closes.get(c.date));
      c.horizons.forEach((h, i) => {
        const exit = closes.get(addDays(c.date, h.days));
        const r = exit! / closes.get(c.date)! - 1;
        expect(h.return).toBeCloseTo(r, 12);
        const dir = c.stance === 'bullish' ? r : -r;
        expect(h.hit).toBe(dir > 0);
        // BTC on these days comes from the raw file its snapshot row names.
        const bi = btcSource.dates.indexOf(c.date);
        const btcCloses = rawCloses(`snapshot:${loadSnapshot().sources[btcSource.source[bi]!]!.id}`, { id: 'bitcoin', symbol: 'btc' });
        const btc = btcCloses.get(addDays(c.date, h.days))! / btcCloses.get(c.date)! - 1;
        expect(h.excess_return).toBeCloseTo(dir - (c.stance === 'bullish' ? btc : -btc), 12);
        dirs[i]!.push(dir);
      });
    }
    env.data.summary.forEach((s, i) => {
      expect(s.calls_scored).toBe(dirs[i]!.length);
      expect(s.hit_rate).toBeCloseTo(dirs[i]!.filter((d) => d > 0).length / dirs[i]!.length, 12);
      expect(s.mean_return).toBeCloseTo(dirs[i]!.reduce((a, b) => a + b, 0) / dirs[i]!.length, 12);
    });
    expect(env.metadata.credits_used).toBe(5);
  });

  it('a truncated page\'s cursor resumes exactly where the page stopped: paging Cointelegraph at limit 100 returns every scored call once', async () => {
    type Perf = { calls_with_prices: number; scored_calls: { asset: string; date: string; post: { url: string } }[] };
    const seen: string[] = [];
    let cursor: string | undefined;
    let truncatedPages = 0;
    let total: number | undefined;
    do {
      const env = await suite.call<Perf>('get_kol_performance', { handle: 'Cointelegraph', limit: 100, ...(cursor ? { cursor } : {}) });
      total = env.data.calls_with_prices;
      seen.push(...env.data.scored_calls.map((c) => `${c.date}|${c.asset}|${JSON.stringify(c.post)}`));
      if ((env.metadata as { truncated?: boolean }).truncated) truncatedPages++;
      cursor = env.metadata.next_cursor;
    } while (cursor);
    expect(truncatedPages).toBeGreaterThan(0);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  }, 90_000);

  it('calls the price history cannot score are said so with the range it covers', async () => {
    // Reddit 2025 calls on Ethereum: ETH's prices in the snapshot end 2025-02-11.
    // The first such caller: scoring every post's sentiment to keep only the first took ~19 s.
    const ethCaller = rawReddit().find((r) => {
      if (r.author === '[deleted]') return false;
      const compound = sentimentScore(r.text);
      const assets = extractor.assets(r.text);
      return assets.includes('ethereum') && stanceOf(compound) !== 'neutral' && exclusionOf({ id: r.id, author: r.author, created: r.created, text: r.text, compound, assets, url: '' }, 'ethereum') === null;
    });
    const env = await suite.call<{ covered: boolean; calls: number; price_history_covers: Record<string, { to: string }> }>('get_kol_performance', {
      handle: ethCaller!.author,
      platform: 'reddit',
      asset: 'ethereum',
    });
    expect(env.data.covered).toBe(false);
    expect(env.data.calls).toBeGreaterThan(0);
    const ethDays = rawCsv('ohlcv/yahoo_usd_daily_2014_2025.csv').filter((r) => r.symbol === 'ETH').map((r) => r.date!).sort();
    expect(env.data.price_history_covers.ethereum!.to).toBe(ethDays.at(-1));
  }, 90_000);
});

describe('rank_kols and get_asset_kol_mentions', () => {
  it('the leaderboard holds only accounts with at least min_calls scored calls, ranked by the lower end of the interval of hit rate minus base rate, consistent with each account\'s performance', async () => {
    type Row = { handle: string; calls_scored: number; hit_rate: number; base_rate: number; excess_hit_rate: number; excess_hit_rate_ci95: [number, number]; versus_base: string };
    const env = await suite.call<{ leaderboard: Row[]; accounts_below_min_calls: number; ranked_by: string }>('rank_kols', {
      metric: 'hit_rate',
      horizon_days: 7,
      min_calls: 50,
    });
    const board = env.data.leaderboard;
    expect(env.data.ranked_by).toBe('excess_hit_rate_ci95_lower');
    expect(board.length).toBeGreaterThan(2);
    expect(board.every((r) => r.calls_scored >= 50)).toBe(true);
    expect(board.map((r) => r.excess_hit_rate_ci95[0])).toEqual([...board.map((r) => r.excess_hit_rate_ci95[0])].sort((a, b) => b - a));
    for (const r of board) {
      expect(r.excess_hit_rate).toBeCloseTo(r.hit_rate - r.base_rate, 12);
      expect(r.base_rate).toBeGreaterThan(0.3);
      expect(r.excess_hit_rate_ci95[0]).toBeLessThanOrEqual(r.excess_hit_rate);
      expect(r.excess_hit_rate_ci95[1]).toBeGreaterThanOrEqual(r.excess_hit_rate);
      expect(r.versus_base).toBe(r.excess_hit_rate_ci95[0] > 0 ? 'above' : r.excess_hit_rate_ci95[1] < 0 ? 'below' : 'indistinguishable');
    }
    expect(env.data.accounts_below_min_calls).toBeGreaterThan(0);
    const perf = await suite.call<{ summary: { days: number; calls_scored: number; hit_rate: number }[] }>('get_kol_performance', { handle: board[0]!.handle });
    expect(perf.data.summary[1]).toMatchObject({ days: 7, calls_scored: board[0]!.calls_scored, hit_rate: board[0]!.hit_rate });
  });

  it('who tweeted about Ethereum first and most follows from the raw tweets', async () => {
    const about = tweets.filter((t) => extractor.assets(t.text).includes('ethereum'));
    const counts = new Map<string, number>();
    for (const t of about) counts.set(t.author, (counts.get(t.author) ?? 0) + 1);
    const first = [...about].sort((a, b) => (a.created < b.created ? -1 : 1))[0]!;
    const env = await suite.call<{ mentions: number; first: { handle: string; first: string }[]; most: { handle: string; mentions: number }[] }>('get_asset_kol_mentions', {
      asset: 'ETH',
    });
    expect(env.data.mentions).toBe(about.length);
    expect(env.data.first[0]).toMatchObject({ handle: first.author, first: first.created });
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    expect(env.data.most[0]).toMatchObject({ handle: top[0], mentions: top[1] });
  });
});
