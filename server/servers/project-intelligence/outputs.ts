// The shapes project-intelligence answers with. TVL in USD; growth, drawdown and shares are
// fractions (-0.2 = 20% down); hhi is the Herfindahl index of shares (0-1).
import { z } from 'zod';

export const projectShape = z.object({
  name: z.string(),
  slug: z.string(),
  category: z.string().nullable(),
  tvl_usd: z.number().nullable(),
  chains: z.array(z.string()),
  oracles: z.array(z.string()),
  url: z.string().nullable(),
});

const tvlPoint = z.object({ date: z.string(), tvl_usd: z.number() });
export const tvlPointsShape = z.array(tvlPoint);

export const historyStatsShape = z.object({
  from: z.string().nullable(),
  to: z.string().nullable(),
  points: z.number().int(),
  last_tvl_usd: z.number().nullable(),
  growth: z.object({ d30: z.number().nullable(), d90: z.number().nullable(), d365: z.number().nullable() }),
  volatility_annualised_90d: z.number().nullable(),
  max_drawdown: z.object({ value: z.number(), peak: tvlPoint, trough: tvlPoint }).nullable(),
  all_time_high: tvlPoint.extend({ last_vs_ath: z.number() }).nullable(),
  source: z.string(),
});

/** Said instead of history statistics where the data has none. */
export const notCoveredShape = z.object({ covered: z.literal(false), reason: z.string() });

/** A project's history statistics, or its TVL on the listing day when the data has no history. */
export const projectHistoryShape = z.union([historyStatsShape, notCoveredShape.extend({ tvl_usd: z.number().nullable(), as_of: z.string() })]);

export const familyShape = z
  .object({
    query: z.string().describe('What was typed.'),
    members: z.array(z.object({ name: z.string(), slug: z.string(), category: z.string().nullable(), tvl_usd: z.number().nullable() })),
    chosen: z.string(),
    rule: z.string(),
  })
  .describe('Present when the name stood for several listed protocols, or is another name of one (a rebrand, its token): the answer is for `chosen`.');

export const categoryShape = z.object({
  category: z.string(),
  tvl_usd: z.number(),
  projects: z.number().int(),
  projects_with_tvl: z.number().int(),
  top3_share: z.number(),
  hhi: z.number(),
  leaders: z.array(z.object({ name: z.string(), tvl_usd: z.number().nullable(), share: z.number().nullable() })),
});

export const flagShape = z.object({
  level: z.enum(['red', 'amber', 'green', 'neutral']),
  topic: z.enum(['tvl_size', 'tvl_trend', 'tvl_drawdown', 'oracles', 'chains', 'social', 'token', 'developers']),
  finding: z.string(),
  data: z.record(z.string(), z.unknown()).describe('The figures the flag rests on and their source; fields vary by topic.'),
});
export type Flag = z.infer<typeof flagShape>;

