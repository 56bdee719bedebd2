// social-intelligence over the real gateway and the SDK client, on the offline dataset. Counts,
// authors and engagement are recomputed here from the raw Reddit CSVs in data/raw/social (not from
// the built data/social file); sentiment and mentions of the raw texts use the same scorer and
// extractor the build uses (they have their own tests in test/analytics).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sentimentScore, stanceOf } from '../../server/analytics/sentiment.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';
import { rawReddit, rawTweets } from '../helpers/raw-csv.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let suite: ToolSuite;
const extractor = mentionExtractor(loadSnapshot().assets);
const reddit = rawReddit().map((r) => ({ ...r, assets: extractor.assets(r.text) }));
const inWindow = (from: string, to: string) => reddit.filter((r) => r.day >= from && r.day <= to);
const redditDays = reddit.map((r) => r.day).sort();
const covered = { from: redditDays[0]!, to: redditDays[redditDays.length - 1]! };

beforeAll(async () => {
  suite = await toolSuite('social-intelligence', 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

async function refused(tool: string, args: Record<string, unknown>) {
  const before = await balanceOf(suite.db, suite.accountId);
  const res = await post(`${suite.svc.url}/mcp/social-intelligence`, toolCall(tool, args), { 'x-api-key': suite.key });
  expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  return res as { status: number; body: { error: { code: string; message: string; details: Record<string, unknown> } } };
}

describe('get_social_volume', () => {
  it('per-day posts+comments, distinct authors and engagement equal the raw Reddit CSVs (all posts)', async () => {
    const env = await suite.call<{ series: { start: string; mentions: number; unique_authors: number; engagement: number }[]; totals: { mentions: number } }>(
      'get_social_volume',
      { from: '2025-10-01', to: '2025-10-07' },
    );
    const days = ['2025-10-01', '2025-10-02', '2025-10-03', '2025-10-04', '2025-10-05', '2025-10-06', '2025-10-07'];
    expect(env.data.series.map((s) => s.start)).toEqual(days);
    for (const s of env.data.series) {
      const rows = reddit.filter((r) => r.day === s.start);
      expect(s.mentions).toBe(rows.length);
      expect(s.unique_authors).toBe(new Set(rows.map((r) => r.author)).size);
      expect(s.engagement).toBe(rows.reduce((a, r) => a + r.engagement, 0));
    }
    expect(env.data.totals.mentions).toBe(inWindow('2025-10-01', '2025-10-07').length);
    expect(env.metadata).toMatchObject({ source: 'snapshot:reddit', data_as_of: '2025-10-07', credits_used: 2 });
  });

  it('weekly bitcoin mentions (Monday weeks) equal the raw rows whose text mentions bitcoin, paginated', async () => {
    const first = await suite.call<{ series: { start: string; mentions: number }[]; intervals_total: number }>('get_social_volume', {
      asset: 'BTC',
      interval: 'week',
      from: '2025-10-06',
      to: '2025-11-02',
      limit: 2,
    });
    expect(first.data.intervals_total).toBe(4);
    const second = await suite.call<{ series: { start: string; mentions: number }[] }>('get_social_volume', {
      asset: 'BTC',
      interval: 'week',
      from: '2025-10-06',
      to: '2025-11-02',
      limit: 2,
      cursor: first.metadata.next_cursor,
    });
    const weeks = [...first.data.series, ...second.data.series];
    expect(weeks.map((w) => w.start)).toEqual(['2025-10-06', '2025-10-13', '2025-10-20', '2025-10-27']);
    for (const w of weeks) {
      const end = new Date(Date.parse(`${w.start}T00:00:00Z`) + 6 * 86_400_000).toISOString().slice(0, 10);
      expect(w.mentions).toBe(inWindow(w.start, end).filter((r) => r.assets.includes('bitcoin')).length);
    }
  });
});

describe('get_social_sentiment', () => {
  it('shares and mean compound of the Ethereum posts in a window equal VADER+lexicon scores of the raw texts', async () => {
    const rows = inWindow('2025-10-01', '2025-10-31').filter((r) => r.assets.includes('ethereum'));
    const scores = rows.map((r) => sentimentScore(r.text));
    const env = await suite.call<{
      posts: number;
      mean_compound: number;
      shares: { bullish: number; bearish: number; neutral: number };
      most_bullish: { compound: number; sentiment: { compound: number } }[];
      most_bearish: { sentiment: { compound: number } }[];
    }>('get_social_sentiment', { asset: 'Ethereum', from: '2025-10-01', to: '2025-10-31', examples: 2 });
    expect(rows.length).toBeGreaterThan(50);
    expect(env.data.posts).toBe(rows.length);
    expect(env.data.mean_compound).toBeCloseTo(scores.reduce((a, b) => a + b, 0) / scores.length, 10);
    expect(env.data.shares.bullish).toBeCloseTo(scores.filter((s) => stanceOf(s) === 'bullish').length / scores.length, 12);
    expect(env.data.shares.bearish).toBeCloseTo(scores.filter((s) => s <= -0.05).length / scores.length, 12);
    expect(env.data.most_bullish[0]!.sentiment.compound).toBe(Math.max(...scores));
    expect(env.data.most_bearish[0]!.sentiment.compound).toBe(Math.min(...scores));
    expect(env.metadata).toMatchObject({ source: 'snapshot:reddit', data_as_of: '2025-10-31', credits_used: 2 });
  });

  it('an asset no one mentioned in the window is said so, with the covered range, not zeros', async () => {
    const env = await suite.call<{ covered: boolean; reason: string; posts: number; mean_compound?: number }>('get_social_sentiment', {
      asset: 'akropolis',
      from: '2025-10-01',
      to: '2025-10-07',
    });
    expect(reddit.filter((r) => r.day >= '2025-10-01' && r.day <= '2025-10-07' && r.assets.includes('akropolis'))).toHaveLength(0);
    expect(env.data.covered).toBe(false);
    expect(env.data.reason).toContain(`${covered.from} to ${covered.to}`);
    expect(env.data.mean_compound).toBeUndefined();
  });

  it('a window outside the data is 400 naming the covered range, and costs nothing', async () => {
    const res = await refused('get_social_sentiment', { asset: 'btc', from: '2019-01-01', to: '2019-01-31' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_PARAMS');
    expect(res.body.error.details.covered_range).toEqual(covered);
  });

  it('an unknown asset is 404 NOT_FOUND with close matches, and costs nothing', async () => {
    const res = await refused('get_social_sentiment', { asset: 'etherium' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect((res.body.error.details.close_matches as { id: string }[]).map((m) => m.id)).toContain('ethereum');
  });

  it('tweets of 2011-2017 are answered on the twitter platform with its own as-of date', async () => {
    const env = await suite.call<{ posts: number }>('get_social_sentiment', { asset: 'bitcoin', platform: 'twitter', from: '2017-12-01' });
    expect(env.data.posts).toBeGreaterThan(0);
    const lastTweet = rawTweets().map((t) => t.day).sort().at(-1);
    expect(env.metadata).toMatchObject({ source: 'snapshot:twitter', data_as_of: lastTweet });
  });
});

describe('get_top_posts', () => {
  it('ranks the raw submissions mentioning Solana by score plus comments', async () => {
    const expected = inWindow('2025-10-01', '2025-11-30')
      .filter((r) => r.kind === 'post' && r.assets.includes('solana'))
      .sort((a, b) => b.engagement - a.engagement || (a.id < b.id ? -1 : 1))
      .slice(0, 5);
    const env = await suite.call<{ total: number; posts: { id: string; engagement: number }[] }>('get_top_posts', {
      asset: 'SOL',
      from: '2025-10-01',
      to: '2025-11-30',
      limit: 5,
    });
    expect(env.data.posts.map((p) => [p.id, p.engagement])).toEqual(expected.map((r) => [r.id, r.engagement]));
    expect(env.metadata.credits_used).toBe(1);
  });
});

describe('get_trending_topics and detect_social_spike', () => {
  it("trending assets' counts in the window and the one before equal raw counts, ranked by smoothed growth", async () => {
    const env = await suite.call<{ assets: { asset: { id: string }; mentions: number; previous: number; growth: number }[]; previous_window: { from: string; to: string } }>(
      'get_trending_topics',
      { to: '2025-10-20', days: 7, min_mentions: 3 },
    );
    expect(env.data.previous_window).toEqual({ from: '2025-10-07', to: '2025-10-13' });
    const cur = inWindow('2025-10-14', '2025-10-20');
    const prev = inWindow('2025-10-07', '2025-10-13');
    for (const a of env.data.assets) {
      expect(a.mentions).toBe(cur.filter((r) => r.assets.includes(a.asset.id)).length);
      expect(a.previous).toBe(prev.filter((r) => r.assets.includes(a.asset.id)).length);
      expect(a.growth).toBeCloseTo((a.mentions + 1) / (a.previous + 1) - 1, 12);
    }
    const growths = env.data.assets.map((a) => a.growth);
    expect(growths).toEqual([...growths].sort((x, y) => y - x));
  });

  it('volume spikes are the days whose count is >= 2.5 sample SDs above the 14 days before (recomputed from raw)', async () => {
    const env = await suite.call<{ spikes: { date: string; z: number; value: number }[] }>('detect_social_spike', { from: '2025-09-29', to: '2025-10-30' });
    const days: string[] = [];
    for (let d = '2025-09-29'; d <= '2025-10-30'; d = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) days.push(d);
    const counts = days.map((d) => reddit.filter((r) => r.day === d).length);
    const expected: string[] = [];
    counts.forEach((x, i) => {
      const base = counts.slice(Math.max(0, i - 14), i);
      if (base.length < 3) return;
      const m = base.reduce((a, b) => a + b, 0) / base.length;
      const sd = Math.sqrt(base.reduce((s, v) => s + (v - m) ** 2, 0) / (base.length - 1));
      if (sd > 0 && (x - m) / sd >= 2.5) expected.push(days[i]!);
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(env.data.spikes.map((s) => s.date)).toEqual(expected);
  });
});
