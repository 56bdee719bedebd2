// What the social-intelligence tools share: argument schemas, asset resolution, summaries.
import { z } from 'zod';
import { stanceOf } from '../../analytics/sentiment.ts';
import type { AssetEntry } from '../../providers/market/types.ts';
import type { Platform, SocialPost } from '../../providers/social/types.ts';
import type { Window } from '../common/window.ts';
import { dayRangeShape, stanceShape } from '../common/output-shapes-2.ts';

export const assetSchema = z.string().trim().min(1).max(100).describe('An asset id, ticker or name, e.g. "bitcoin", "ETH", "Solana".');
export const platformSchema = z
  .enum(['reddit', 'twitter'])
  .default('reddit')
  .describe('reddit: posts and comments of crypto subreddits (2025); twitter: tweets of 10 crypto accounts (2011-2017).');

export const brief = (a: AssetEntry) => ({ id: a.id, symbol: a.symbol, name: a.name });

export const platformShape = z.enum(['reddit', 'twitter']);

export const postShape = z.object({
  id: z.string(),
  platform: platformShape,
  kind: z.enum(['post', 'comment', 'tweet']),
  author: z.string(),
  created: z.string().describe('ISO 8601 UTC.'),
  community: z.string().nullable().describe('Subreddit; null for tweets.'),
  text: z.string().describe('Cut to about 300 characters.'),
  score: z.number().int().nullable().describe('Reddit upvotes minus downvotes; null for tweets.'),
  comments: z.number().int().nullable(),
  sentiment: z.object({ compound: z.number().describe('VADER, -1 to 1.'), stance: stanceShape }),
  assets: z.array(z.string()).describe('Asset ids mentioned.'),
  url: z.string(),
});

export const windowShape = z.object({
  from: z.string(),
  to: z.string(),
  days: z.number().int(),
  cut_to_data: z.boolean().describe('The asked window reached past the data and was cut to it.'),
  covered_range: dayRangeShape,
  coverage_gaps: z.array(z.string()).optional(),
});

/** Fractions of the posts (0-1) by stance. */
export const sharesShape = z.object({ bullish: z.number(), bearish: z.number(), neutral: z.number() });

/** A post as answers show it. */
export function postView(p: SocialPost) {
  return {
    id: p.id,
    platform: p.platform,
    kind: p.kind,
    author: p.author,
    created: p.created,
    community: p.community,
    text: p.text,
    score: p.score,
    comments: p.comments,
    sentiment: { compound: p.compound, stance: stanceOf(p.compound) },
    assets: p.assets,
    url: p.url,
  };
}

export function windowView(w: Window) {
  return { from: w.from, to: w.to, days: w.days, cut_to_data: w.clamped, covered_range: w.covered, ...(w.gaps.length ? { coverage_gaps: w.gaps } : {}) };
}

/** Said instead of zeros when nothing in the window mentions the asset. */
export function noMentions(platform: Platform, asset: AssetEntry, w: Window) {
  return {
    covered: false as const,
    reason: `No ${platform} post or comment from ${w.from} to ${w.to} mentions ${asset.name}; the ${platform} data covers ${w.covered.from} to ${w.covered.to}.`,
  };
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function stanceShares(posts: readonly SocialPost[]) {
  const n = posts.length;
  let bull = 0;
  let bear = 0;
  for (const p of posts) {
    const s = stanceOf(p.compound);
    if (s === 'bullish') bull++;
    else if (s === 'bearish') bear++;
  }
  return { bullish: bull / n, bearish: bear / n, neutral: (n - bull - bear) / n };
}
