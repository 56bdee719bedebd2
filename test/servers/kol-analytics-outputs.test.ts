// Every kol-analytics tool's real answer, on the offline dataset, against the output schema it
// declares: Twitter and Reddit accounts, an influencer-graph handle without posts, scored and
// unscorable calls, an empty leaderboard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawCsv, rawReddit, rawTweets } from '../helpers/raw-csv.ts';
import { caseName, expectAnswerMatchesOutput, ownTools, type OutputCase } from '../helpers/tool-outputs.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const SERVER = 'kol-analytics';
let suite: ToolSuite;

beforeAll(async () => {
  suite = await toolSuite(SERVER, 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

const tweeters = new Set(rawTweets().map((t) => t.author.toLowerCase()));
/** A handle of the 2017 influencer graph none of whose posts the data holds. */
const graphOnly = rawCsv('social/crypto_twitter_influencers_2017.csv').find((r) => !tweeters.has(r.handle!.toLowerCase()) && r.followed_by_in_influencers_seed_graph)!.handle!;
const redditor = rawReddit().find((r) => r.author !== '[deleted]' && r.author !== 'AutoModerator')!.author;
const some = (item: Record<string, unknown> = {}) => expect.arrayContaining([expect.objectContaining(item)]);

const cases: OutputCase[] = [
  { tool: 'get_kol_profile', args: { handle: 'coindesk', from: '2017-10-01', to: '2017-10-31' }, shows: { activity: { by_kind: { tweet: expect.any(Number) } } } },
  { tool: 'get_kol_profile', label: 'graph only', args: { handle: graphOnly }, shows: { activity: { covered: false }, sentiment: null } },
  { tool: 'get_kol_profile', label: 'reddit', args: { handle: redditor, platform: 'reddit' }, shows: { influence: { kind: 'reddit_score_sum' } } },
  { tool: 'get_kol_calls', args: { handle: 'rogerkver', from: '2017-01-01', to: '2017-06-30', limit: 10 }, shows: { calls: some() } },
  { tool: 'get_kol_calls', label: 'none', args: { handle: 'coindesk', asset: 'solana' }, shows: { covered: false } },
  { tool: 'get_kol_performance', args: { handle: 'rogerkver', from: '2017-01-01', to: '2017-06-30', limit: 10 }, shows: { covered: true, scored_calls: some() } },
  { tool: 'get_kol_performance', label: 'no calls', args: { handle: 'coindesk', asset: 'solana' }, shows: { covered: false } },
  { tool: 'rank_kols', args: { metric: 'hit_rate', horizon_days: 7, min_calls: 50, limit: 5 }, shows: { leaderboard: some() } },
  { tool: 'rank_kols', label: 'reach, empty', args: { metric: 'reach', min_calls: 1000 }, shows: { covered: false } },
  { tool: 'get_asset_kol_mentions', args: { asset: 'ETH' }, shows: { first: some(), most: some() } },
];

describe('kol-analytics answers fit their output schemas', () => {
  it('every tool of the server declares an output schema and has a case here', () => {
    const tools = ownTools(suite, SERVER);
    expect(tools.filter((t) => !t.output).map((t) => t.name)).toEqual([]);
    expect(new Set(cases.map((c) => c.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  it.each(cases.map((c) => [caseName(c), c] as const))('%s', async (_, c) => {
    await expectAnswerMatchesOutput(suite, SERVER, c);
  });
});
