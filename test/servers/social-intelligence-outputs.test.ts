// Every social-intelligence tool's real answer, on the offline dataset, against the output schema
// it declares: both shapes of get_social_sentiment, Reddit and tweets (no engagement), empty windows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseName, expectAnswerMatchesOutput, ownTools, type OutputCase } from '../helpers/tool-outputs.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const SERVER = 'social-intelligence';
let suite: ToolSuite;

beforeAll(async () => {
  suite = await toolSuite(SERVER, 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

const some = (item: Record<string, unknown> = {}) => expect.arrayContaining([expect.objectContaining(item)]);

const cases: OutputCase[] = [
  { tool: 'get_social_sentiment', args: { asset: 'bitcoin', examples: 2 }, shows: { covered: true, most_bullish: some(), most_bearish: some(), by_week: some() } },
  { tool: 'get_social_sentiment', label: 'tweets', args: { asset: 'ETH', platform: 'twitter', days: 365 } },
  { tool: 'get_social_sentiment', label: 'no mentions', args: { asset: 'solana', from: '2015-01-01', to: '2015-01-31', platform: 'twitter' }, shows: { covered: false } },
  { tool: 'get_social_volume', args: { asset: 'ETH', interval: 'week', from: '2025-10-06', to: '2025-11-02' } },
  { tool: 'get_social_volume', label: 'tweets, all posts', args: { platform: 'twitter', days: 14 }, shows: { totals: { engagement: null } } },
  { tool: 'get_trending_topics', args: { days: 7, limit: 5 }, shows: { assets: some(), terms: some() } },
  { tool: 'detect_social_spike', args: { asset: 'bitcoin', days: 60 }, shows: { spikes: some({ top_post: expect.objectContaining({ id: expect.any(String) }) }) } },
  { tool: 'detect_social_spike', label: 'sentiment', args: { metric: 'sentiment', days: 60, threshold: 1.5 }, shows: { spikes: some() } },
  { tool: 'get_top_posts', args: { asset: 'bitcoin', kind: 'all', limit: 5 }, shows: { posts: some() } },
];

describe('social-intelligence answers fit their output schemas', () => {
  it('every tool of the server declares an output schema and has a case here', () => {
    const tools = ownTools(suite, SERVER);
    expect(tools.filter((t) => !t.output).map((t) => t.name)).toEqual([]);
    expect(new Set(cases.map((c) => c.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  it.each(cases.map((c) => [caseName(c), c] as const))('%s', async (_, c) => {
    await expectAnswerMatchesOutput(suite, SERVER, c);
  });
});
