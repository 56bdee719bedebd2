// What the social-intelligence tools share: argument schemas, asset resolution, summaries.
import { z } from 'zod';
import { stanceOf } from '../../analytics/sentiment.ts';
import type { AssetEntry } from '../../providers/market/types.ts';
import type { Coverage, Platform, SocialPost, SocialSource } from '../../providers/social/types.ts';
import { addDays, daysBetween } from '../../lib/dates.ts';
import type { Window } from '../common/window.ts';
import { dayRangeShape, stanceShape } from '../common/output-shapes-2.ts';

export const assetSchema = z.string().trim().min(1).max(100).describe('Asset id, ticker or name, e.g. "bitcoin", "ETH".');
export const platformSchema = z
  .enum(['reddit', 'twitter'])
  .default('reddit')
  .describe('reddit: crypto subreddits, 2025; twitter: 10 crypto accounts, 2011-2017.');

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
  score: z.number().int().nullable().describe('Reddit upvotes - downvotes; null for tweets.'),
  comments: z.number().int().nullable(),
  sentiment: z.object({ compound: z.number().describe('VADER, -1 to 1.'), stance: stanceShape }),
  assets: z.array(z.string()).describe('Asset ids mentioned.'),
  url: z.string(),
});

export const windowShape = z.object({
  from: z.string(),
  to: z.string(),
  days: z.number().int(),
  cut_to_data: z.boolean().describe('The window reached past the data and was cut to it.'),
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

/** Items per day under this share of the 30-day baseline's make a window thin. */
export const THIN_SHARE = 0.25;
export const BASELINE_DAYS = 30;
const ZERO_DAYS_LISTED = 100;

type Kind = SocialPost['kind'];
const kindShape = z.enum(['post', 'comment', 'tweet']);
const periodShape = z.object({
  from: z.string(),
  to: z.string(),
  days: z.number().int(),
  items: z.number().int(),
  per_day: z.number(),
  by_kind: z.partialRecord(kindShape, z.number().int()),
});

export const itemCountsShape = z
  .object({
    window: periodShape.describe('Items in the window.'),
    baseline: periodShape
      .nullable()
      .describe(`The same items in the ${BASELINE_DAYS} days before the window (cut to the data); null when the data starts with the window.`),
    ratio_to_baseline: z.number().nullable().describe('Items per day, window / baseline; null without a baseline item.'),
    compared_kinds: z.array(kindShape).describe('Kinds the source holds on every day of the window.'),
    ratio_same_kinds: z
      .number()
      .nullable()
      .describe('The ratio over compared_kinds only: a fall here is fewer posts, not a kind missing from the source.'),
    thin: z.boolean().describe(`ratio_to_baseline < ${THIN_SHARE}.`),
    thin_rule: z.string(),
    zero_item_days: z.array(z.string()).describe(`Days with no item (the first ${ZERO_DAYS_LISTED}).`),
    zero_item_days_total: z.number().int(),
    absent_kinds: z
      .array(z.object({ kind: kindShape, source_covers: dayRangeShape }))
      .describe('Kinds the source lacks for the whole window (a gap in the data, not the world), with the days it holds them.'),
  })
  .describe(`How much data the answer rests on, against the ${BASELINE_DAYS} days before.`);
export type ItemCounts = z.infer<typeof itemCountsShape>;

const round = (x: number, d = 1) => Number(x.toFixed(d));

function period(posts: readonly SocialPost[], from: string, to: string) {
  const by: Partial<Record<Kind, number>> = {};
  for (const p of posts) by[p.kind] = (by[p.kind] ?? 0) + 1;
  const days = daysBetween(from, to) + 1;
  return { from, to, days, items: posts.length, per_day: posts.length / days, by_kind: by };
}

/**
 * The answer's item count beside the 30 days before its window, its zero-item days, the kinds the
 * source lacks for the whole window, and the notes saying so. `only` narrows the kinds the answer
 * counts (get_top_posts' kind); the baseline is read with the same asset and kinds.
 */
export async function itemCounts(
  social: SocialSource,
  cov: Coverage,
  w: Window,
  posts: readonly SocialPost[],
  q: { platform: Platform; asset?: string | undefined },
  signal: AbortSignal,
  only?: Kind,
): Promise<{ counts: ItemCounts; notes: string[] }> {
  const bTo = addDays(w.from, -1);
  const bFromAsked = addDays(w.from, -BASELINE_DAYS);
  const bFrom = bFromAsked < cov.from ? cov.from : bFromAsked;
  const keep = (p: { kind: Kind }) => only === undefined || p.kind === only;
  const before = bTo < cov.from ? null : (await social.posts({ platform: q.platform, asset: q.asset, from: bFrom, to: bTo }, signal)).filter(keep);
  const mine = posts.filter(keep);
  // Without per-kind coverage (a live source), every kind is taken to span the source's range.
  const kinds = (cov.kinds ?? [...new Set([...posts, ...(before ?? [])].map((p) => p.kind))].map((kind) => ({ kind, from: cov.from, to: cov.to }))).filter(keep);
  const compared = kinds.filter((k) => k.from <= w.from && k.to >= w.to).map((k) => k.kind);
  const absent = kinds.filter((k) => k.to < w.from || k.from > w.to).map((k) => ({ kind: k.kind, source_covers: { from: k.from, to: k.to } }));
  const win = period(mine, w.from, w.to);
  const base = before ? period(before, bFrom, bTo) : null;
  const count = (ps: readonly SocialPost[]) => ps.filter((p) => compared.includes(p.kind)).length;
  const sameBase = before && base ? count(before) / base.days : 0;
  const same = base && sameBase > 0 ? count(mine) / win.days / sameBase : null;
  const ratio = base && base.per_day > 0 ? win.per_day / base.per_day : null;
  const thin = ratio !== null && ratio < THIN_SHARE;
  const active = new Set(mine.map((p) => p.created.slice(0, 10)));
  const zero: string[] = [];
  for (let d = w.from; d <= w.to; d = addDays(d, 1)) if (!active.has(d)) zero.push(d);
  const notes: string[] = [];
  for (const a of absent) {
    notes.push(`The ${q.platform} source has no ${a.kind}s from ${w.from} to ${w.to} (its ${a.kind}s run ${a.source_covers.from} to ${a.source_covers.to}): they are missing from the data, not from the world, and nothing here counts them.`);
  }
  if (thin && base) {
    const sameKinds = compared.length < kinds.length && same !== null ? `; counting only ${compared.map((k) => `${k}s`).join(' and ')}, which the source holds on every day of the window, ${round(same * 100)}%` : '';
    notes.push(
      `Thin window: ${win.items} items in ${win.days} days (${round(win.per_day)} a day) against ${base.items} in the ${base.days} days before (${round(base.per_day)} a day), ${round(ratio! * 100)}% of the baseline rate (thin: under ${THIN_SHARE * 100}%)${sameKinds}; figures here rest on little data.`,
    );
  }
  if (zero.length) notes.push(`${zero.length} of the window's ${win.days} days have no item: ${zero.slice(0, 10).join(', ')}${zero.length > 10 ? ', …' : ''} (all in item_counts.zero_item_days).`);
  return {
    counts: {
      window: win,
      baseline: base,
      ratio_to_baseline: ratio,
      compared_kinds: compared,
      ratio_same_kinds: same,
      thin,
      thin_rule: `thin when the window's items per day are under ${THIN_SHARE * 100}% of those in the ${BASELINE_DAYS} days before (same asset, same kinds asked)`,
      zero_item_days: zero.slice(0, ZERO_DAYS_LISTED),
      zero_item_days_total: zero.length,
      absent_kinds: absent,
    },
    notes,
  };
}
