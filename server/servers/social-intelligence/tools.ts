// The five social-intelligence tools, over the SocialSource (offline dataset or live Reddit).
import { z } from 'zod';
import { STANCE_THRESHOLD } from '../../analytics/sentiment.ts';
import { ApiError } from '../../errors.ts';
import { addDays } from '../../lib/dates.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { engagement, type Platform, type SocialPost } from '../../providers/social/types.ts';
import { jobOf } from '../common/analysis.ts';
import { coverageGaps, resolveWindow, windowFields } from '../common/window.ts';
import { resolveAsset } from '../common/assets.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import { assetRefShape, dayRangeShape, notCoveredFields } from '../common/output-shapes-2.ts';
import { assetSchema, brief, itemCounts, itemCountsShape, mean, median, noMentions, platformSchema, platformShape, postShape, postView, sharesShape, stanceShares, windowShape, windowView } from './common.ts';

/** Monday of the ISO week holding `day`. */
export function weekStart(day: string): string {
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay();
  return addDays(day, -((dow + 6) % 7));
}

const bucketOf = (interval: 'day' | 'week', created: string) => (interval === 'day' ? created.slice(0, 10) : weekStart(created.slice(0, 10)));

/** Every bucket start from the window's first to its last day, so quiet periods show as zeros. */
function buckets(interval: 'day' | 'week', from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = bucketOf(interval, from); d <= to; d = addDays(d, interval === 'day' ? 1 : 7)) out.push(d);
  return out;
}

/** The asset asked about (null: all posts), the platform and the window every answer states. */
const scope = { asset: assetRefShape.nullable(), platform: platformShape, window: windowShape, item_counts: itemCountsShape };
const sentimentScope = { ...scope, asset: assetRefShape, posts: z.number().int() };
const growthFields = { mentions: z.number().int(), previous: z.number().int().describe('Mentions in the window before.'), growth: z.number().describe('(mentions + 1) / (previous + 1) - 1.') };

const METHOD_SENTIMENT = `VADER compound score (vader-sentiment) with a crypto lexicon (server/analytics/sentiment.ts); stance bullish if compound >= ${STANCE_THRESHOLD}, bearish if <= -${STANCE_THRESHOLD}, else neutral`;

export function socialTools({ social, market, compute }: ServerDeps): ToolDefinition[] {
  const sourceOf = (platform: Platform) => (social.name === 'snapshot' ? `snapshot:${platform}` : social.name);

  async function scoped(args: { asset?: string | undefined; platform: Platform; from?: string | undefined; to?: string | undefined; days: number }, signal: AbortSignal) {
    if (!social.platforms().includes(args.platform)) {
      throw new ApiError('INVALID_PARAMS', `This deployment reads ${social.platforms().join(', ')} only.`, {
        issues: [{ path: 'platform', message: `one of ${social.platforms().join(', ')}` }],
      });
    }
    const asset = args.asset === undefined ? undefined : resolveAsset(market.registry, args.asset);
    const cov = await social.coverage(args.platform, signal);
    const window = resolveWindow(cov, args);
    const posts = await social.posts({ platform: args.platform, asset: asset?.id, from: window.from, to: window.to }, signal);
    return { asset, window, posts, source: sourceOf(args.platform), cov };
  }

  /** The window's item counts beside the 30 days before, and the notes (coverage gaps first). */
  async function counted(s: Awaited<ReturnType<typeof scoped>>, platform: Platform, signal: AbortSignal, only?: SocialPost['kind']) {
    const { counts, notes } = await itemCounts(social, s.cov, s.window, s.posts, { platform, asset: s.asset?.id }, signal, only);
    return { item_counts: counts, notes: [...s.window.gaps, ...notes] };
  }

  return [
    defineTool({
      name: 'get_social_sentiment',
      title: 'Social sentiment',
      description:
        'Returns the bullish, bearish and neutral shares (0-1) and mean and median VADER sentiment (-1 to 1) of the posts mentioning an asset over a window, by week, with the most bullish and most bearish posts.',
      input: z
        .object({ asset: assetSchema, platform: platformSchema, ...windowFields, examples: z.number().int().min(0).max(10).default(3).describe('Example posts of each stance (0-10).') })
        .strict(),
      output: z.discriminatedUnion('covered', [
        z.object({ ...sentimentScope, covered: z.literal(false), reason: z.string() }),
        z.object({
          ...sentimentScope,
          covered: z.literal(true),
          shares: sharesShape,
          mean_compound: z.number(),
          median_compound: z.number(),
          by_week: z.array(sharesShape.extend({ week_start: z.string().describe('Monday.'), posts: z.number().int(), mean_compound: z.number() })),
          most_bullish: z.array(postShape),
          most_bearish: z.array(postShape),
          method: z.string(),
        }),
      ]),
      credits: 2,
      handler: async (args, ctx) => {
        const sc = await scoped(args, ctx.signal);
        const { asset, window, posts, source } = sc;
        const a = asset!;
        const { item_counts, notes } = await counted(sc, args.platform, ctx.signal);
        if (posts.length === 0) {
          return { data: { asset: brief(a), platform: args.platform, window: windowView(window), item_counts, posts: 0, ...noMentions(args.platform, a, window) }, source, data_as_of: window.to, empty: true, notes };
        }
        const byWeek = new Map<string, SocialPost[]>();
        for (const p of posts) {
          const w = weekStart(p.created.slice(0, 10));
          const week = byWeek.get(w);
          if (week) week.push(p);
          else byWeek.set(w, [p]);
        }
        const sorted = [...posts].sort((x, y) => y.compound - x.compound || (x.id < y.id ? -1 : 1));
        const scores = posts.map((p) => p.compound);
        return {
          data: {
            asset: brief(a),
            platform: args.platform,
            window: windowView(window),
            item_counts,
            covered: true as const,
            posts: posts.length,
            shares: stanceShares(posts),
            mean_compound: mean(scores),
            median_compound: median(scores),
            by_week: [...byWeek.entries()].map(([week, ps]) => ({ week_start: week, posts: ps.length, mean_compound: mean(ps.map((p) => p.compound)), ...stanceShares(ps) })),
            most_bullish: sorted.filter((p) => p.compound >= STANCE_THRESHOLD).slice(0, args.examples).map(postView),
            most_bearish: sorted.filter((p) => p.compound <= -STANCE_THRESHOLD).reverse().slice(0, args.examples).map(postView),
            method: METHOD_SENTIMENT,
          },
          source,
          data_as_of: window.to,
          notes,
        };
      },
    }),
    defineTool({
      name: 'get_social_volume',
      title: 'Social volume',
      description:
        'Returns, per day or week (oldest first, paginated), the posts and comments mentioning an asset (or all posts), their distinct authors and engagement (Reddit score plus comments; null for tweets).',
      input: z
        .object({
          asset: assetSchema.optional().describe('An asset; omit for all posts of the platform.'),
          platform: platformSchema,
          interval: z.enum(['day', 'week']).default('day'),
          ...windowFields,
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({
        ...scope,
        interval: z.enum(['day', 'week']),
        totals: z.object({ mentions: z.number().int(), unique_authors: z.number().int(), engagement: z.number().int().nullable() }),
        ...notCoveredFields,
        engagement_note: z.string().optional(),
        intervals_total: z.number().int(),
        series: z.array(z.object({ start: z.string(), mentions: z.number().int(), unique_authors: z.number().int(), engagement: z.number().int().nullable() })),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const sc = await scoped(args, ctx.signal);
        const { asset, window, posts, source } = sc;
        const { item_counts, notes } = await counted(sc, args.platform, ctx.signal);
        const rows = new Map(buckets(args.interval, window.from, window.to).map((b) => [b, { mentions: 0, authors: new Set<string>(), engagement: 0 }]));
        for (const p of posts) {
          const r = rows.get(bucketOf(args.interval, p.created));
          if (!r) continue;
          r.mentions++;
          r.authors.add(p.author);
          r.engagement += engagement(p) ?? 0;
        }
        const hasEngagement = args.platform === 'reddit';
        const series = [...rows.entries()].map(([start, r]) => ({
          start,
          mentions: r.mentions,
          unique_authors: r.authors.size,
          engagement: hasEngagement ? r.engagement : null,
        }));
        const { items, next_cursor, truncated, share } = page(series, args.limit, args.cursor);
        return {
          data: {
            asset: asset ? brief(asset) : null,
            platform: args.platform,
            interval: args.interval,
            window: windowView(window),
            item_counts,
            totals: { mentions: posts.length, unique_authors: new Set(posts.map((p) => p.author)).size, engagement: hasEngagement ? posts.reduce((s, p) => s + (engagement(p) ?? 0), 0) : null },
            ...(asset && posts.length === 0 ? noMentions(args.platform, asset, window) : {}),
            ...(hasEngagement ? {} : { engagement_note: 'The tweets in the data carry no like or retweet counts: engagement is not covered.' }),
            intervals_total: series.length,
            series: items,
          },
          source,
          data_as_of: window.to,
          notes,
          next_cursor,
          truncated,
          page: share,
          empty: posts.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_trending_topics',
      title: 'Trending topics',
      description:
        'Returns the assets and terms whose mentions grew most in a window against the equally long window before it, with their counts in both.',
      input: z
        .object({
          platform: platformSchema,
          to: windowFields.to,
          days: z.number().int().min(1).max(365).default(7).describe('Length of the window and of the one before it (1-365).'),
          min_mentions: z.number().int().min(1).max(1000).default(5).describe('Leave out what was mentioned fewer times in the window.'),
          limit: z.number().int().min(1).max(50).default(10),
        })
        .strict(),
      output: z.object({
        platform: platformShape,
        window: windowShape,
        item_counts: itemCountsShape,
        previous_window: dayRangeShape,
        posts: z.object({ window: z.number().int(), previous: z.number().int() }),
        assets: z.array(z.object({ asset: z.object({ id: z.string(), symbol: z.string().nullable(), name: z.string().nullable() }), ...growthFields })),
        terms: z.array(z.object({ term: z.string(), ...growthFields })),
        method: z.string(),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const cur = await scoped({ platform: args.platform, to: args.to, days: args.days }, ctx.signal);
        const { counts: item_counts, notes } = await itemCounts(social, cur.cov, cur.window, cur.posts, { platform: args.platform }, ctx.signal);
        const prevTo = addDays(cur.window.from, -1);
        const prevFrom = addDays(cur.window.from, -args.days);
        if (prevFrom < cur.cov.from) {
          throw new ApiError('INVALID_PARAMS', `Trends compare with the ${args.days} days before; the ${args.platform} data covers ${cur.cov.from} to ${cur.cov.to}, so the window must end on or after ${addDays(cur.cov.from, 2 * args.days - 1)}.`, {
            issues: [{ path: 'to', message: 'no earlier window to compare with' }],
            covered_range: { from: cur.cov.from, to: cur.cov.to },
          });
        }
        const prev = await social.posts({ platform: args.platform, from: prevFrom, to: prevTo }, ctx.signal);
        const count = (ps: readonly SocialPost[]) => {
          const m = new Map<string, number>();
          for (const p of ps) for (const a of p.assets) m.set(a, (m.get(a) ?? 0) + 1);
          return m;
        };
        const rank = (now: Map<string, number>, before: Map<string, number>) =>
          [...now.entries()]
            .filter(([, n]) => n >= args.min_mentions)
            // Growth with one added to both counts, so something new is not infinite growth.
            .map(([key, n]) => ({ key, mentions: n, previous: before.get(key) ?? 0, growth: (n + 1) / ((before.get(key) ?? 0) + 1) - 1 }))
            .sort((x, y) => y.growth - x.growth || y.mentions - x.mentions || (x.key < y.key ? -1 : 1))
            .slice(0, args.limit);
        const assets = rank(count(cur.posts), count(prev)).map(({ key, ...r }) => {
          const e = market.registry.get(key);
          return { asset: { id: key, symbol: e?.symbol ?? null, name: e?.name ?? null }, ...r };
        });
        // Counting terms tokenises every text of both windows (hundreds of ms over a month of
        // Reddit): a compute-pool job, handed the texts only.
        const counted = await compute.run('trendingTerms', { current: cur.posts.map((p) => p.text), previous: prev.map((p) => p.text) }, jobOf(ctx));
        const terms = rank(counted.current, counted.previous).map(({ key, ...r }) => ({ term: key, ...r }));
        return {
          data: {
            platform: args.platform,
            window: windowView(cur.window),
            item_counts,
            previous_window: { from: prevFrom, to: prevTo },
            posts: { window: cur.posts.length, previous: prev.length },
            assets,
            terms,
            method: 'growth = (mentions + 1) / (previous + 1) - 1, counting posts and comments that mention the asset or contain the term (stopwords and asset names left out of terms)',
          },
          source: cur.source,
          data_as_of: cur.window.to,
          // Both windows are compared: a kind of item missing from either makes the growth mislead.
          notes: [...coverageGaps(cur.cov, prevFrom, cur.window.to), ...notes],
        };
      },
    }),
    defineTool({
      name: 'detect_social_spike',
      title: 'Social spike detection',
      description:
        'Returns the days whose mentions or mean sentiment for an asset (or all posts) stand out from the preceding days, by z-score against a rolling baseline.',
      input: z
        .object({
          asset: assetSchema.optional().describe('An asset; omit for all posts of the platform.'),
          platform: platformSchema,
          metric: z.enum(['volume', 'sentiment']).default('volume'),
          ...windowFields,
          days: z.number().int().min(7).max(3650).default(60).describe('Window length when `from` is not given (7-3650).'),
          baseline_days: z.number().int().min(3).max(90).default(14).describe('Preceding days the z-score is measured against (3-90).'),
          threshold: z.number().min(1).max(10).default(2.5).describe('|z| at or above which a day is a spike.'),
          min_posts: z.number().int().min(1).max(1000).default(3).describe('For sentiment: days with fewer posts are skipped (too noisy).'),
        })
        .strict(),
      output: z.object({
        ...scope,
        metric: z.enum(['volume', 'sentiment']),
        ...notCoveredFields,
        days_checked: z.number().int(),
        spikes: z.array(
          z.object({
            date: z.string(),
            value: z.number().describe('Mentions, or mean VADER compound.'),
            baseline_mean: z.number(),
            baseline_sd: z.number(),
            z: z.number(),
            posts: z.number().int(),
            top_post: postShape.nullable(),
          }),
        ),
        method: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const sc = await scoped(args, ctx.signal);
        const { asset, window, posts, source } = sc;
        const { item_counts, notes } = await counted(sc, args.platform, ctx.signal);
        const days = buckets('day', window.from, window.to);
        const byDay = new Map(days.map((d) => [d, [] as SocialPost[]]));
        for (const p of posts) byDay.get(p.created.slice(0, 10))?.push(p);
        const values = days.map((d) => {
          const ps = byDay.get(d)!;
          if (args.metric === 'volume') return ps.length;
          return ps.length >= args.min_posts ? mean(ps.map((p) => p.compound)) : null;
        });
        const spikes = [];
        for (let i = 0; i < days.length; i++) {
          const x = values[i];
          if (x === null || x === undefined) continue;
          const base = values.slice(Math.max(0, i - args.baseline_days), i).filter((v): v is number => v !== null);
          if (base.length < Math.min(args.baseline_days, 3)) continue;
          const mu = mean(base);
          const sd = Math.sqrt(base.reduce((s, v) => s + (v - mu) ** 2, 0) / (base.length - 1 || 1));
          if (sd === 0) continue;
          const z = (x - mu) / sd;
          if (Math.abs(z) >= args.threshold && (args.metric === 'sentiment' || z > 0)) {
            const ps = byDay.get(days[i]!)!;
            spikes.push({ date: days[i]!, value: x, baseline_mean: mu, baseline_sd: sd, z, posts: ps.length, top_post: ps.length ? postView([...ps].sort((p, q) => (engagement(q) ?? 0) - (engagement(p) ?? 0))[0]!) : null });
          }
        }
        return {
          data: {
            asset: asset ? brief(asset) : null,
            platform: args.platform,
            metric: args.metric,
            window: windowView(window),
            item_counts,
            ...(asset && posts.length === 0 ? noMentions(args.platform, asset, window) : {}),
            days_checked: days.length,
            spikes,
            method: `z = (day's ${args.metric === 'volume' ? 'mentions' : 'mean compound'} - mean of the preceding ${args.baseline_days} days) / their sample standard deviation; a spike when ${args.metric === 'volume' ? 'z' : '|z|'} >= ${args.threshold}`,
          },
          source,
          data_as_of: window.to,
          notes,
          empty: posts.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_top_posts',
      title: 'Top posts',
      description: 'Returns the Reddit posts (or comments) mentioning an asset in a window, most engaged (score plus comments) first, paginated.',
      input: z
        .object({
          asset: assetSchema,
          kind: z.enum(['post', 'comment', 'all']).default('post'),
          ...windowFields,
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({
        ...scope,
        asset: assetRefShape,
        platform: z.literal('reddit'),
        kind: z.enum(['post', 'comment', 'all']),
        total: z.number().int(),
        ...notCoveredFields,
        posts: z.array(postShape.extend({ engagement: z.number().int().nullable() })),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        // Tweets carry no engagement counts here, so ranking by engagement is Reddit's alone.
        const sc = await scoped({ ...args, platform: 'reddit' }, ctx.signal);
        const { asset, window, posts, source } = sc;
        const { item_counts, notes } = await counted(sc, 'reddit', ctx.signal, args.kind === 'all' ? undefined : args.kind);
        const ranked = posts
          .filter((p) => args.kind === 'all' || p.kind === args.kind)
          .sort((x, y) => (engagement(y) ?? 0) - (engagement(x) ?? 0) || (x.id < y.id ? -1 : 1));
        const { items, next_cursor, truncated, share } = page(ranked, args.limit, args.cursor);
        // Nothing of the asked kind because the source holds none for these dates: say that, not "no one mentions it".
        const missing = ranked.length === 0 ? item_counts.absent_kinds[0] : undefined;
        const others = missing ? posts.length : 0;
        return {
          data: {
            asset: brief(asset!),
            platform: 'reddit' as const,
            kind: args.kind,
            window: windowView(window),
            item_counts,
            total: ranked.length,
            ...(missing
              ? {
                  covered: false as const,
                  reason: `The reddit source has no ${missing.kind}s from ${window.from} to ${window.to} (its ${missing.kind}s run ${missing.source_covers.from} to ${missing.source_covers.to}), so none can be ranked; ${others} other item${others === 1 ? '' : 's'} in the window mention ${asset!.name}.`,
                }
              : ranked.length === 0
                ? noMentions('reddit', asset!, window)
                : {}),
            posts: items.map((p) => ({ ...postView(p), engagement: engagement(p) })),
          },
          source,
          data_as_of: window.to,
          notes,
          next_cursor,
          truncated,
          page: share,
          empty: ranked.length === 0,
        };
      },
    }),
  ];
}
