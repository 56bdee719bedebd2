// The kol-analytics tools: who the voices are (the crypto accounts' tweets 2011-2017, Reddit
// authors 2025, and the 2017 influencer graph), what they called and how those calls did.
import { distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { CALL_RULE, edgeOverBase, excessReturnCi95, extractCalls, HORIZONS, isRetweet, scoreCall, summarise, yearBaseRate, type ScoredCall } from '../../analytics/calls.ts';
import { stanceOf } from '../../analytics/sentiment.ts';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { SocialDataset } from '../../providers/social/snapshot.ts';
import type { Platform, SocialPost } from '../../providers/social/types.ts';
import { isoDay } from '../common/window.ts';
import { resolveAsset } from '../common/assets.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import { assetRefShape, dayRangeShape, notCoveredFields, stanceShape } from '../common/output-shapes-2.ts';
import { callShape, edgeShape, horizonDays, horizonSummaryShape, influenceShape, mentionRowShape, platformShape as platformOut, rankRowShape, scoredCallShape, type RankRow } from './outputs.ts';
import { snapshotCloses } from './prices.ts';

const handleSchema = z.string().trim().min(1).max(64).describe('An account handle, e.g. "coindesk" (Twitter) or a Reddit username.');
const platformSchema = z
  .enum(['twitter', 'reddit'])
  .optional()
  .describe('twitter (10 crypto accounts 2011-2017, plus 1,045 handles of the 2017 influencer graph) or reddit (authors 2025); default: twitter if the handle is known there.');
const assetSchema = z.string().trim().min(1).max(100).describe('An asset id, ticker or name.');
const horizonSchema = z.union([z.literal(1), z.literal(7), z.literal(30)]).default(7).describe('Days after the call (1, 7 or 30).');
const rangeFields = { from: isoDay.optional(), to: isoDay.optional() };

/** Reddit's stand-in names for removed accounts, and its moderation bot: not voices. */
const NOT_AUTHORS = new Set(['[deleted]', 'automoderator', '']);

interface Kol {
  platform: Platform;
  handle: string;
  posts: readonly SocialPost[];
}

/** How each rank_kols metric orders the candidates. */
const RANKINGS = {
  hit_rate: {
    field: 'excess_hit_rate',
    ranked_by: 'excess_hit_rate_ci95_lower',
    key: (r: RankRow) => r.excess_hit_rate_ci95?.[0] ?? null,
    text: 'ordered by the lower end of the 95% interval of excess_hit_rate (excess_hit_rate_ci95[0]), not by the point estimate: an account leads only if even its worst plausible edge is the best',
  },
  excess_return: {
    field: 'mean_excess_return',
    ranked_by: 'mean_excess_return_ci95_lower',
    key: (r: RankRow) => r.mean_excess_return_ci95?.[0] ?? null,
    text: 'ordered by the lower end of the 95% interval of mean_excess_return (mean_excess_return_ci95[0]), not by the point estimate: an account leads only if even its worst plausible excess is the best',
  },
  reach: { field: 'reach', ranked_by: 'reach', key: (r: RankRow) => r.reach, text: 'ordered by reach (largest first)' },
} as const;

export function kolTools(deps: ServerDeps): ToolDefinition[] {
  const ds = (): SocialDataset => deps.socialData();
  let closes: ReturnType<typeof snapshotCloses> | undefined;
  const prices = () => (closes ??= snapshotCloses(deps.snapshot));

  function findKol(handle: string, platform: Platform | undefined): Kol {
    const h = handle.replace(/^[@/]|^u\//, '').trim();
    const d = ds();
    const order: Platform[] = platform ? [platform] : ['twitter', 'reddit'];
    for (const pl of order) {
      if (NOT_AUTHORS.has(h.toLowerCase())) break;
      const posts = d.byAuthor(pl, h);
      if (posts.length > 0) return { platform: pl, handle: posts[0]!.author, posts };
      if (pl === 'twitter') {
        const inf = d.influencers.get(h.toLowerCase());
        if (inf) return { platform: pl, handle: inf.handle, posts: [] };
      }
    }
    const q = h.toLowerCase();
    const candidates: string[] = [];
    for (const pl of order) {
      for (const a of d.authors(pl).keys()) candidates.push(a);
      if (pl === 'twitter') for (const i of d.influencers.values()) candidates.push(i.handle);
    }
    const close = [...new Set(candidates)]
      .map((c) => ({ c, d: distance(q, c.toLowerCase()) }))
      .filter((x) => x.d <= Math.max(1, Math.floor(q.length / 3)))
      .sort((a, b) => a.d - b.d || (a.c < b.c ? -1 : 1))
      .slice(0, 5)
      .map((x) => x.c);
    throw new ApiError('NOT_FOUND', `No account "${handle}" in the ${platform ?? 'twitter or reddit'} data.`, { handle, close_matches: close });
  }

  function coverage(pl: Platform) {
    const ps = ds().byPlatform(pl);
    return { from: ps[0]!.created.slice(0, 10), to: ps[ps.length - 1]!.created.slice(0, 10) };
  }

  function inRange(posts: readonly SocialPost[], pl: Platform, args: { from?: string | undefined; to?: string | undefined }) {
    const cov = coverage(pl);
    if (args.from && args.to && args.from > args.to) {
      throw new ApiError('INVALID_PARAMS', `from (${args.from}) is after to (${args.to}).`, { issues: [{ path: 'from', message: 'after to' }], covered_range: cov });
    }
    if ((args.from && args.from > cov.to) || (args.to && args.to < cov.from)) {
      throw new ApiError('INVALID_PARAMS', `The ${pl} data covers ${cov.from} to ${cov.to}.`, {
        issues: [{ path: args.from && args.from > cov.to ? 'from' : 'to', message: `outside ${cov.from}..${cov.to}` }],
        covered_range: cov,
      });
    }
    return posts.filter((p) => (!args.from || p.created.slice(0, 10) >= args.from) && (!args.to || p.created.slice(0, 10) <= args.to));
  }

  const scored = (kol: Kol, opts: { asset?: string; includeRetweets: boolean; from?: string | undefined; to?: string | undefined }): ScoredCall[] =>
    extractCalls(inRange(kol.posts, kol.platform, opts), { asset: opts.asset, includeRetweets: opts.includeRetweets }).map((c) => scoreCall(c, prices().closeOn));

  /** Where the price history can score calls, for answers that have none to score. */
  const priceCoverage = (assets: string[]) =>
    Object.fromEntries([...new Set(assets)].map((a) => [a, prices().range(a) ?? null]));

  const influence = (kol: Kol) => {
    if (kol.platform !== 'twitter') {
      const karma = kol.posts.reduce((s, p) => s + (p.score ?? 0), 0);
      return { kind: 'reddit_score_sum' as const, value: karma, note: 'Sum of the Reddit scores of their posts and comments in the data.' };
    }
    const inf = ds().influencers.get(kol.handle.toLowerCase());
    return inf
      ? { kind: 'influencer_graph_in_degree_2017' as const, value: inf.seed_graph, bitcoin_core_graph: inf.bitcoin_core_graph, note: 'Accounts of the crawled 2017 crypto-influencer network that follow this handle (not a follower count).' }
      : { kind: 'influencer_graph_in_degree_2017' as const, value: null, note: 'Not covered: the handle is not in the 2017 influencer graph.' };
  };

  // Base rates by asset, year and horizon, computed once per process.
  const bases = new Map<string, ReturnType<typeof yearBaseRate>>();
  const baseOf = (hi: number) => (c: ScoredCall) => {
    const key = `${c.asset}|${c.date.slice(0, 4)}|${HORIZONS[hi]}`;
    if (!bases.has(key)) bases.set(key, yearBaseRate(prices().closeOn, c.asset, Number(c.date.slice(0, 4)), HORIZONS[hi]!));
    const b = bases.get(key);
    return b ? (c.stance === 'bullish' ? b.up : b.down) : null;
  };

  // rank_kols scores every author of a platform (13,000 Reddit authors: 50-100 ms of CPU on the
  // event loop, bench/NOTES.md). The data is the immutable offline dataset, so each platform,
  // horizon and retweet choice is scored once per process and every later ranking only filters
  // and sorts (at most 12 entries, about 2,400 rows for Reddit).
  // btcOnly: accounts whose scored calls are all on BTC, whose excess over BTC is 0 by definition.
  const rankings = new Map<string, { rows: RankRow[]; unscored: number; btcOnly: Set<string> }>();
  function ranking(platform: Platform, hi: number, includeRetweets: boolean): { rows: RankRow[]; unscored: number; btcOnly: Set<string> } {
    const key = `${platform}|${hi}|${includeRetweets}`;
    const cached = rankings.get(key);
    if (cached) return cached;
    const d = ds();
    const rows: RankRow[] = [];
    const btcOnly = new Set<string>();
    let unscored = 0;
    for (const [author] of d.authors(platform)) {
      if (NOT_AUTHORS.has(author.toLowerCase())) continue;
      const kol: Kol = { platform, handle: author, posts: d.byAuthor(platform, author) };
      const calls = scored(kol, { includeRetweets });
      const s = summarise(calls)[hi]!;
      if (s.calls_scored === 0) {
        unscored++;
        continue;
      }
      if (calls.every((c) => c.asset === 'bitcoin' || c.horizons[hi]!.excess_return === null)) btcOnly.add(author);
      const reach = influence(kol);
      const edge = edgeOverBase(calls, hi, baseOf(hi));
      rows.push({
        handle: author,
        calls_scored: s.calls_scored,
        hit_rate: s.hit_rate,
        base_rate: edge.base_rate,
        excess_hit_rate: edge.excess_hit_rate,
        excess_hit_rate_ci95: edge.ci95,
        versus_base: edge.versus_base,
        mean_return: s.mean_return,
        median_return: s.median_return,
        mean_excess_return: s.mean_excess_return,
        mean_excess_return_ci95: excessReturnCi95(calls, hi)?.ci95 ?? null,
        reach: reach.value ?? null,
        reach_kind: reach.kind,
      });
    }
    const result = { rows, unscored, btcOnly };
    rankings.set(key, result);
    return result;
  }

  const handleFields = { handle: z.string(), platform: platformOut };
  const performanceFields = { ...handleFields, calls: z.number().int(), calls_with_prices: z.number().int(), method: z.string() };
  const priceCoverageShape = z.record(z.string(), dayRangeShape.nullable()).describe('Per asset id: the days its price history covers, or null.');

  const src = (pl: Platform) => `snapshot:${pl}`;
  const asOf = (pl: Platform) => coverage(pl).to;

  return [
    defineTool({
      name: 'get_kol_profile',
      title: 'KOL profile',
      description: "Returns an account's activity (posts, first and last, active days), influence where known, the assets it mentions most and its sentiment (VADER, -1 to 1; stance shares 0-1).",
      input: z.object({ handle: handleSchema, platform: platformSchema, ...rangeFields }).strict(),
      output: z.object({
        ...handleFields,
        covered_range: dayRangeShape,
        activity: z.union([
          z.object({
            posts: z.number().int(),
            retweets: z.number().int().nullable().describe('null on reddit.'),
            first: z.string(),
            last: z.string(),
            active_days: z.number().int(),
            by_kind: z.partialRecord(z.enum(['post', 'comment', 'tweet']), z.number().int()),
          }),
          z.object({ posts: z.literal(0), covered: z.literal(false), reason: z.string() }),
        ]),
        influence: influenceShape,
        top_assets: z.array(z.object({ id: z.string(), mentions: z.number().int() })),
        sentiment: z.object({ mean_compound: z.number(), shares: z.record(stanceShape, z.number()) }).nullable(),
      }),
      credits: 2,
      handler: async (args) => {
        const kol = findKol(args.handle, args.platform);
        const posts = inRange(kol.posts, kol.platform, args);
        const assets = new Map<string, number>();
        for (const p of posts) for (const a of p.assets) assets.set(a, (assets.get(a) ?? 0) + 1);
        const stances = { bullish: 0, bearish: 0, neutral: 0 };
        for (const p of posts) stances[stanceOf(p.compound)]++;
        const days = new Set(posts.map((p) => p.created.slice(0, 10)));
        return {
          data: {
            handle: kol.handle,
            platform: kol.platform,
            covered_range: coverage(kol.platform),
            activity: posts.length
              ? {
                  posts: posts.length,
                  retweets: kol.platform === 'twitter' ? posts.filter((p) => isRetweet(p.text)).length : null,
                  first: posts[0]!.created,
                  last: posts[posts.length - 1]!.created,
                  active_days: days.size,
                  by_kind: Object.fromEntries(['post', 'comment', 'tweet'].map((k) => [k, posts.filter((p) => p.kind === k).length]).filter(([, n]) => n)),
                }
              : { posts: 0 as const, covered: false as const, reason: kol.posts.length ? 'No posts in that window.' : 'The account is in the 2017 influencer graph but the data holds none of its posts.' },
            influence: influence(kol),
            top_assets: [...assets.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10).map(([id, mentions]) => ({ id, mentions })),
            sentiment: posts.length
              ? {
                  mean_compound: posts.reduce((s, p) => s + p.compound, 0) / posts.length,
                  shares: { bullish: stances.bullish / posts.length, bearish: stances.bearish / posts.length, neutral: stances.neutral / posts.length },
                }
              : null,
          },
          source: src(kol.platform),
          data_as_of: asOf(kol.platform),
          empty: posts.length === 0 && influence(kol).value === null,
        };
      },
    }),
    defineTool({
      name: 'get_kol_calls',
      title: 'KOL calls',
      description: "Returns an account's calls (posts taking a bullish or bearish stance on one asset; adverts and lookalike coins left out) with asset, time, stance, VADER score and the post, newest first, paginated.",
      input: z
        .object({
          handle: handleSchema,
          platform: platformSchema,
          asset: assetSchema.optional(),
          stance: z.enum(['bullish', 'bearish', 'any']).default('any'),
          include_retweets: z.boolean().default(false).describe('Retweets repeat someone else\'s words; left out by default.'),
          ...rangeFields,
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({ ...handleFields, total: z.number().int(), ...notCoveredFields, calls: z.array(callShape), method: z.string() }),
      credits: 3,
      handler: async (args) => {
        const kol = findKol(args.handle, args.platform);
        const asset = args.asset ? resolveAsset(deps.market.registry, args.asset) : undefined;
        const calls = extractCalls(inRange(kol.posts, kol.platform, args), { asset: asset?.id, includeRetweets: args.include_retweets })
          .filter((c) => args.stance === 'any' || c.stance === args.stance)
          .reverse();
        const { items, next_cursor, truncated, share } = page(calls, args.limit, args.cursor);
        return {
          data: {
            handle: kol.handle,
            platform: kol.platform,
            total: calls.length,
            ...(calls.length === 0 ? { covered: false as const, reason: `No ${args.stance === 'any' ? '' : `${args.stance} `}calls${asset ? ` on ${asset.name}` : ''} by ${kol.handle} in the data (${coverage(kol.platform).from} to ${coverage(kol.platform).to}).` } : {}),
            calls: items,
            method: CALL_RULE,
          },
          source: src(kol.platform),
          data_as_of: asOf(kol.platform),
          next_cursor,
          truncated,
          page: share,
          empty: calls.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_kol_performance',
      title: 'KOL performance',
      description:
        "Returns how an account's calls did 1, 7 and 30 days later on daily closes: per horizon the hit rate beside the base rate of the asset's moves that year, mean and median return and excess return over BTC (fractions, 0.05 = +5%), with the scored calls paginated.",
      input: z
        .object({
          handle: handleSchema,
          platform: platformSchema,
          asset: assetSchema.optional(),
          include_retweets: z.boolean().default(false),
          ...rangeFields,
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.discriminatedUnion('covered', [
        z.object({ ...performanceFields, covered: z.literal(false), reason: z.string(), price_history_covers: priceCoverageShape }),
        z.object({
          ...performanceFields,
          covered: z.literal(true),
          summary: z.array(horizonSummaryShape),
          versus_base_rate: z.array(edgeShape),
          price_history_covers: priceCoverageShape,
          scored_calls: z.array(scoredCallShape),
        }),
      ]),
      credits: 5,
      handler: async (args) => {
        const kol = findKol(args.handle, args.platform);
        const asset = args.asset ? resolveAsset(deps.market.registry, args.asset) : undefined;
        const all = scored(kol, { asset: asset?.id, includeRetweets: args.include_retweets, from: args.from, to: args.to });
        const priced = all.filter((c) => c.entry_close !== null);
        const base = {
          handle: kol.handle,
          platform: kol.platform,
          calls: all.length,
          calls_with_prices: priced.length,
          method:
            'return from the close of the call day to the close h days later; bearish calls gain when the price falls; hit = directional return > 0; excess = directional return minus the same stance taken on BTC over the same days (zero for BTC calls)',
        };
        if (priced.length === 0) {
          return {
            data: {
              ...base,
              covered: false as const,
              reason: all.length === 0 ? `${kol.handle} made no calls in the data${asset ? ` on ${asset.name}` : ''}.` : `None of ${kol.handle}'s ${all.length} calls falls on a day the price history covers.`,
              price_history_covers: priceCoverage(all.length ? all.map((c) => c.asset) : asset ? [asset.id] : ['bitcoin']),
            },
            source: src(kol.platform),
            data_as_of: asOf(kol.platform),
            empty: true,
          };
        }
        const { items, next_cursor, truncated, share } = page([...priced].reverse(), args.limit, args.cursor);
        return {
          data: { ...base, covered: true as const, summary: summarise(priced), versus_base_rate: HORIZONS.map((_, i) => edgeOverBase(priced, i, baseOf(i))), price_history_covers: priceCoverage(priced.map((c) => c.asset)), scored_calls: items },
          source: `${src(kol.platform)}+snapshot:prices`,
          data_as_of: asOf(kol.platform),
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
    defineTool({
      name: 'rank_kols',
      longRunning: true,
      title: 'Rank KOLs',
      description:
        'Returns a leaderboard of accounts with at least min_calls scored calls, ordered by the lower end of the 95% interval of their hit rate in excess of the base rate or of their excess return over BTC (so small samples do not lead on luck), or by reach; rates and returns are fractions (0.05 = +5%). A metric equal for every candidate is refused (400).',
      input: z
        .object({
          platform: z.enum(['twitter', 'reddit']).default('twitter'),
          metric: z.enum(['hit_rate', 'excess_return', 'reach']).default('hit_rate'),
          horizon_days: horizonSchema,
          min_calls: z.number().int().min(1).max(1000).default(10).describe('Accounts with fewer scored calls are left out (1-1000).'),
          include_retweets: z.boolean().default(false),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({
        platform: platformOut,
        metric: z.enum(['hit_rate', 'excess_return', 'reach']),
        horizon_days: horizonDays,
        min_calls: z.number().int(),
        accounts_ranked: z.number().int(),
        accounts_below_min_calls: z.number().int(),
        accounts_only_btc_calls: z.number().int().optional().describe('excess_return only: accounts left out because all their scored calls are on BTC, whose excess over BTC is 0 by definition.'),
        ranked_by: z.enum(['excess_hit_rate_ci95_lower', 'mean_excess_return_ci95_lower', 'reach']).describe('What the order is by: the lower end of the 95% interval of the excess, or reach.'),
        ranking_rule: z.string(),
        base_rate_rule: z.string(),
        ...notCoveredFields,
        leaderboard: z.array(rankRowShape.extend({ rank: z.number().int() })),
      }),
      credits: 5,
      handler: async (args) => {
        const hi = HORIZONS.indexOf(args.horizon_days);
        const scoredAuthors = ranking(args.platform, hi, args.include_retweets);
        const rows = scoredAuthors.rows.filter((r) => r.calls_scored >= args.min_calls);
        const tooFew = scoredAuthors.unscored + scoredAuthors.rows.length - rows.length;
        // A hit rate means nothing without the base rate, and a rate on 10 calls means little
        // beside one on 500: 'hit_rate' and 'excess_return' rank by the lower end of the 95%
        // interval of the excess, so a small sample leads only when even its worst case does.
        const rule = RANKINGS[args.metric];
        const point = (r: RankRow) => (args.metric === 'hit_rate' ? r.excess_hit_rate : args.metric === 'excess_return' ? r.mean_excess_return : r.reach);
        const values = rows.map(point).filter((v): v is number => v !== null);
        if (values.length > 1 && Math.max(...values) - Math.min(...values) < 1e-12) {
          throw new ApiError(
            'INVALID_PARAMS',
            `${rule.field} is ${values[0]} for all ${values.length} ${args.platform} accounts with ${args.min_calls} or more calls scored at ${args.horizon_days} days${args.metric === 'excess_return' ? " (excess return is over BTC, and a BTC call's is 0 by definition)" : ''}: a ranking by it would order ties only. Rank by another metric.`,
            { issues: [{ path: 'metric', message: `constant across the ${values.length} candidates` }], constant_value: values[0] },
          );
        }
        // Excess return over BTC says nothing of an account that called only BTC (0 by definition).
        const uninformative = args.metric === 'excess_return' ? rows.filter((r) => scoredAuthors.btcOnly.has(r.handle)).length : 0;
        if (uninformative) rows.splice(0, rows.length, ...rows.filter((r) => !scoredAuthors.btcOnly.has(r.handle)));
        rows.sort((a, b) => (rule.key(b) ?? -Infinity) - (rule.key(a) ?? -Infinity) || b.calls_scored - a.calls_scored || (a.handle < b.handle ? -1 : 1));
        const ranked = rows.map((r, i) => ({ rank: i + 1, ...r }));
        const { items, next_cursor, truncated, share } = page(ranked, args.limit, args.cursor);
        return {
          data: {
            platform: args.platform,
            metric: args.metric,
            horizon_days: args.horizon_days,
            min_calls: args.min_calls,
            accounts_ranked: ranked.length,
            accounts_below_min_calls: tooFew,
            ...(args.metric === 'excess_return' ? { accounts_only_btc_calls: uninformative } : {}),
            ranked_by: rule.ranked_by,
            ranking_rule: rule.text,
            base_rate_rule: `a call's base rate is the share of days of its calendar year on which its asset moved its way over ${args.horizon_days} days (up for bullish, down for bearish); excess_hit_rate = hit rate minus the mean base rate of the account's calls; its 95% interval allows for calls less than a horizon apart sharing days`,
            ...(ranked.length === 0 && uninformative ? { covered: false as const, reason: `All ${uninformative} ${args.platform} accounts with ${args.min_calls} or more calls scored at ${args.horizon_days} days called only BTC: their excess return over BTC is 0 by definition.` } : {}),
            ...(ranked.length === 0 && !uninformative ? { covered: false as const, reason: `No ${args.platform} account has ${args.min_calls} or more calls scored at ${args.horizon_days} days (prices cover: ${JSON.stringify(priceCoverage(['bitcoin', 'ethereum']))}).` } : {}),
            leaderboard: items,
          },
          source: `${src(args.platform)}+snapshot:prices`,
          data_as_of: asOf(args.platform),
          next_cursor,
          truncated,
          page: share,
          empty: ranked.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_asset_kol_mentions',
      title: 'KOL mentions of an asset',
      description: 'Returns the accounts that mentioned an asset first and most, each with its mentions, first mention and counts by stance.',
      input: z
        .object({ asset: assetSchema, platform: z.enum(['twitter', 'reddit']).default('twitter'), ...rangeFields, limit: z.number().int().min(1).max(50).default(10) })
        .strict(),
      output: z.object({
        asset: assetRefShape,
        platform: platformOut,
        covered_range: dayRangeShape,
        mentions: z.number().int(),
        accounts: z.number().int(),
        ...notCoveredFields,
        first: z.array(mentionRowShape),
        most: z.array(mentionRowShape),
      }),
      credits: 3,
      handler: async (args) => {
        const asset = resolveAsset(deps.market.registry, args.asset);
        const posts = inRange(ds().byAsset(args.platform, asset.id), args.platform, args).filter((p) => !NOT_AUTHORS.has(p.author.toLowerCase()));
        const by = new Map<string, { handle: string; mentions: number; first: string; first_post: string; bullish: number; bearish: number; neutral: number }>();
        for (const p of posts) {
          const r = by.get(p.author) ?? { handle: p.author, mentions: 0, first: p.created, first_post: p.url, bullish: 0, bearish: 0, neutral: 0 };
          r.mentions++;
          r[stanceOf(p.compound)]++;
          by.set(p.author, r);
        }
        const rows = [...by.values()];
        const cov = coverage(args.platform);
        return {
          data: {
            asset: { id: asset.id, symbol: asset.symbol, name: asset.name },
            platform: args.platform,
            covered_range: cov,
            mentions: posts.length,
            accounts: rows.length,
            ...(posts.length === 0 ? { covered: false as const, reason: `No ${args.platform} account in the data mentions ${asset.name} (${args.from ?? cov.from} to ${args.to ?? cov.to}).` } : {}),
            first: [...rows].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : a.handle < b.handle ? -1 : 1)).slice(0, args.limit),
            most: [...rows].sort((a, b) => b.mentions - a.mentions || (a.handle < b.handle ? -1 : 1)).slice(0, args.limit),
          },
          source: src(args.platform),
          data_as_of: asOf(args.platform),
          empty: posts.length === 0,
        };
      },
    }),
  ];
}
