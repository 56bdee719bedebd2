// The live Reddit adapter over real HTTP against a loopback server replaying Reddit's documented
// Listing JSON (reddit.com/dev/api: search.json and /r/{sub}/new.json return a "Listing" whose
// children are "t3" links); then social-intelligence end to end with SOCIAL_DATA=live.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sentimentScore } from '../../server/analytics/sentiment.ts';
import { SnapshotProvider, loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { RedditSource } from '../../server/providers/social/live.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';
import { replayServer, type Replay } from '../helpers/replay-server.ts';
import { balanceOf, post, toolCall } from '../helpers/service.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const t = (iso: string) => Date.parse(iso) / 1000;
const link = (id: string, title: string, selftext: string, created: string, score: number, comments: number, sub = 'CryptoCurrency') => ({
  kind: 't3',
  data: {
    id, name: `t3_${id}`, subreddit: sub, subreddit_name_prefixed: `r/${sub}`, author: `user_${id}`, created_utc: t(created), title, selftext, score, ups: score,
    num_comments: comments, upvote_ratio: 0.9, permalink: `/r/${sub}/comments/${id}/slug/`, url: `https://www.reddit.com/r/${sub}/comments/${id}/slug/`, over_18: false,
  },
});
const SEARCH = {
  kind: 'Listing',
  data: {
    after: 't3_c3',
    dist: 3,
    children: [
      link('c1', 'Solana breakout, $SOL looking great', '', '2026-11-20T10:00:00Z', 150, 40),
      link('c2', 'Got rekt on SOL leverage', 'Liquidated overnight. Terrible.', '2026-11-19T08:00:00Z', 80, 25),
      link('c3', 'Which wallet do you use?', '', '2026-11-18T08:00:00Z', 5, 3),
    ],
  },
};

let reddit: Replay;
beforeAll(async () => {
  reddit = await replayServer();
});
afterAll(async () => {
  await reddit?.close();
});
beforeEach(() => {
  reddit.routes.clear();
  reddit.requests.length = 0;
  reddit.routes.set('/search.json', () => ({ status: 200, body: SEARCH }));
  reddit.routes.set('/r/cryptocurrency+bitcoin/new.json', () => ({ status: 200, body: SEARCH }));
});

const snapshot = new SnapshotProvider(loadSnapshot());
const source = () =>
  new RedditSource({
    baseUrl: reddit.url,
    subreddits: ['cryptocurrency', 'bitcoin'],
    userAgent: 'cryptomcp-test/1.0',
    registry: snapshot.registry,
    extractor: mentionExtractor(loadSnapshot().assets),
    now: () => NOW,
    retries: 0,
  });

describe('RedditSource', () => {
  it("searches for the asset's name and ticker, keeps the posts that mention it, scored as the offline build scores", async () => {
    const posts = await source().posts({ platform: 'reddit', asset: 'solana', from: '2026-10-23', to: '2026-11-21' });
    expect(posts.map((p) => p.id)).toEqual(['c2', 'c1']);
    const c2 = posts[0]!;
    expect(c2).toMatchObject({ kind: 'post', community: 'cryptocurrency', score: 80, comments: 25, created: '2026-11-19T08:00:00Z', url: 'https://www.reddit.com/r/CryptoCurrency/comments/c2/slug/' });
    expect(c2.compound).toBe(sentimentScore('Got rekt on SOL leverage\n\nLiquidated overnight. Terrible.'));
    expect(c2.compound).toBeLessThan(0);
    const req = reddit.requests[0]!;
    expect(new URL(req.path, 'http://x').searchParams.get('q')).toBe('Solana OR SOL');
    expect(req.headers['user-agent']).toBe('cryptomcp-test/1.0');
  });

  it('covers the last 30 days up to today; all posts come from the configured subreddits', async () => {
    const s = source();
    expect(await s.coverage('reddit')).toMatchObject({ from: '2026-10-23', to: '2026-11-21', source: 'live:reddit' });
    expect(await s.posts({ platform: 'reddit', from: '2026-11-19', to: '2026-11-21' })).toHaveLength(2);
    expect(reddit.requests[0]!.path).toMatch(/^\/r\/cryptocurrency\+bitcoin\/new\.json\?/);
  });

  it('an answer that is not a Listing is an upstream error naming live:reddit', async () => {
    reddit.routes.set('/search.json', () => ({ status: 200, body: { error: 'nope' } }));
    await expect(source().posts({ platform: 'reddit', asset: 'bitcoin', from: '2026-11-01', to: '2026-11-21' })).rejects.toMatchObject({ provider: 'live:reddit', kind: 'error' });
  });
});

describe('social-intelligence with SOCIAL_DATA=live', () => {
  let suite: ToolSuite;
  beforeAll(async () => {
    suite = await toolSuite('social-intelligence', 1000, { SOCIAL_DATA: 'live', REDDIT_BASE_URL: reddit.url, REDDIT_TIMEOUT_MS: '3000', UPSTREAM_DEADLINE_MS: '600' });
  }, 120_000);
  afterAll(async () => {
    await suite?.close();
  });

  it('sentiment over the live search results, labelled live:reddit', async () => {
    // The service runs on the real clock: the replayed posts are from yesterday and the day before.
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    reddit.routes.set('/search.json', () => ({
      status: 200,
      body: { kind: 'Listing', data: { after: null, children: [link('d1', 'Solana breakout, $SOL looking great', '', ago(1), 150, 40), link('d2', 'Got rekt on SOL leverage', 'Liquidated overnight. Terrible.', ago(2), 80, 25)] } },
    }));
    const env = await suite.call<{ posts: number; shares: { bullish: number; bearish: number } }>('get_social_sentiment', { asset: 'SOL', days: 30 });
    expect(env.data.posts).toBe(2);
    expect(env.data.shares).toMatchObject({ bullish: 0.5, bearish: 0.5 });
    expect(env.metadata.source).toBe('live:reddit');
  });

  it('Reddit failing is 502 UPSTREAM_ERROR naming live:reddit, and costs nothing', async () => {
    reddit.routes.set('/search.json', () => ({ status: 500, body: {} }));
    const before = await balanceOf(suite.db, suite.accountId);
    const res = await post(`${suite.svc.url}/mcp/social-intelligence`, toolCall('get_social_sentiment', { asset: 'ETH' }), { 'x-api-key': suite.key });
    expect(res.status).toBe(502);
    expect((res.body as { error: { code: string; details: { provider: string } } }).error).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'live:reddit' } });
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  }, 60_000);

  it('a Reddit that never answers is cut at UPSTREAM_DEADLINE_MS (600 ms here, under one 3 s attempt): 504 UPSTREAM_TIMEOUT naming live:reddit, free', async () => {
    reddit.routes.set('/search.json', () => 'never');
    const before = await balanceOf(suite.db, suite.accountId);
    const started = performance.now();
    const res = await post(`${suite.svc.url}/mcp/social-intelligence`, toolCall('get_social_sentiment', { asset: 'BTC' }), { 'x-api-key': suite.key });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect((res.body as { error: { code: string; details: { provider: string } } }).error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', details: { provider: 'live:reddit' } });
    // Without the configured deadline the first attempt alone would run its 3 s (REDDIT_TIMEOUT_MS).
    expect(elapsed).toBeLessThan(3000);
    expect(await balanceOf(suite.db, suite.accountId)).toBe(before);
  }, 60_000);
});
