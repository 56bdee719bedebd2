// The shapes kol-analytics answers with: calls, their scoring per horizon (server/analytics/calls.ts),
// leaderboard rows. Returns are fractions (0.05 = +5%); rates are fractions of calls (0-1).
import { z } from 'zod';
import { HORIZONS } from '../../analytics/calls.ts';

export const platformShape = z.enum(['twitter', 'reddit']);

export const horizonDays = z.literal(HORIZONS).describe('Days after the call.');
const rate = z.number().nullable();

export const callShape = z.object({
  asset: z.string(),
  date: z.string(),
  created: z.string().describe('ISO 8601 UTC.'),
  stance: z.enum(['bullish', 'bearish']),
  compound: z.number().describe('VADER, -1 to 1.'),
  post: z.object({ id: z.string(), text: z.string(), url: z.string() }),
});

export const scoredCallShape = callShape.extend({
  entry_close: z.number().nullable().describe('USD close of the call day.'),
  price_source: z.string().nullable(),
  horizons: z.array(
    z.object({
      days: horizonDays,
      exit_date: z.string(),
      exit_close: z.number().nullable(),
      return: rate,
      directional_return: rate.describe('Return in the call\'s direction (bearish gains when the price falls).'),
      btc_return: rate,
      excess_return: rate.describe('directional_return minus the same stance on BTC.'),
      hit: z.boolean().nullable(),
    }),
  ),
});

export const horizonSummaryShape = z.object({
  days: horizonDays,
  calls_scored: z.number().int(),
  hit_rate: rate,
  mean_return: rate,
  median_return: rate,
  mean_excess_return: rate,
});

const ci95 = z.tuple([z.number(), z.number()]).nullable();
const versusBase = z.enum(['above', 'below', 'indistinguishable']).nullable();

export const edgeShape = z.object({
  days: horizonDays,
  calls_scored: z.number().int(),
  hit_rate: rate,
  base_rate: rate.describe("Mean share of days of the call's year its asset moved its way."),
  excess_hit_rate: rate,
  ci95,
  versus_base: versusBase,
});

/** One author's row of a rank_kols leaderboard, at one horizon. */
export const rankRowShape = z.object({
  handle: z.string(),
  calls_scored: z.number().int(),
  hit_rate: rate,
  base_rate: rate,
  excess_hit_rate: rate,
  excess_hit_rate_ci95: ci95,
  versus_base: versusBase,
  mean_return: rate,
  median_return: rate,
  mean_excess_return: rate,
  mean_excess_return_ci95: ci95.describe('95% interval of mean_excess_return (calls less than a horizon apart share days).'),
  reach: z.number().nullable(),
  reach_kind: z.string(),
});
export type RankRow = z.infer<typeof rankRowShape>;

export const influenceShape = z.object({
  kind: z.enum(['reddit_score_sum', 'influencer_graph_in_degree_2017']),
  value: z.number().int().nullable(),
  bitcoin_core_graph: z.number().int().nullable().optional(),
  note: z.string(),
});

export const mentionRowShape = z.object({
  handle: z.string(),
  mentions: z.number().int(),
  first: z.string().describe('ISO 8601 UTC of the first mention.'),
  first_post: z.string().describe('URL.'),
  bullish: z.number().int(),
  bearish: z.number().int(),
  neutral: z.number().int(),
});
