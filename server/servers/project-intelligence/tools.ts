// The project-intelligence tools, over the ProjectSource (offline DefiLlama data or the live API).
import { z } from 'zod';
import { concentration, growth, tvlDrawdown, tvlVolatility } from '../../analytics/tvl.ts';
import { ApiError } from '../../errors.ts';
import { isoDaySchema } from '../../lib/dates.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { REPO_PATTERN } from '../../providers/github/types.ts';
import type { Protocol, TvlHistory } from '../../providers/projects/types.ts';
import { datedAnswer } from '../common/dating.ts';
import { cursorSchema, limitSchema, page } from '../common/paging.ts';
import type { ServerDeps } from '../deps.ts';
import { findChain, findProject, formerNameToken, linkedProjectToken, resolveProject, sameChain } from './common.ts';
import { dueDiligence } from './diligence.ts';
import { dayRangeShape } from '../common/output-shapes-2.ts';
import { categoryShape, familyShape, flagShape, historyStatsShape, notCoveredShape, projectHistoryShape, projectShape, tvlPointsShape } from './outputs.ts';

const ISO_DAY = isoDaySchema;
const projectSchema = z.string().trim().min(1).max(100).describe('A DeFi project by name or DefiLlama slug, e.g. "Aave V3", "lido".');
const chainSchema = z.string().trim().min(1).max(60).describe('A chain by DefiLlama name, e.g. "Ethereum", "Solana", "BSC".');

/**
 * What the snapshot has for a project without a TVL history: its TVL on the listing's day, with
 * that day, and that the history is not in the snapshot (its histories are Solana/Move lending only).
 */
function noHistory(p: Protocol, list: { as_of: string; source: string }) {
  return {
    covered: false as const,
    tvl_usd: p.tvl_usd,
    as_of: list.as_of,
    reason: list.source.startsWith('snapshot')
      ? `The TVL history of ${p.name} is not in the snapshot (its per-protocol histories cover Solana and Move lending protocols only); its TVL on ${list.as_of} is given.`
      : `The source has no TVL history for ${p.name}; its TVL on ${list.as_of} is given.`,
  };
}

/** Growth, volatility and drawdown of a history, each saying how far back the data went. */
export function historyStats(h: TvlHistory) {
  const pts = h.points;
  const last = pts[pts.length - 1];
  const dd = tvlDrawdown(pts);
  return {
    from: pts[0]?.date ?? null,
    to: last?.date ?? null,
    points: pts.length,
    last_tvl_usd: last?.tvl_usd ?? null,
    growth: { d30: growth(pts, 30), d90: growth(pts, 90), d365: growth(pts, 365) },
    volatility_annualised_90d: tvlVolatility(pts, 90),
    max_drawdown: dd && { value: dd.max_drawdown, peak: dd.peak, trough: dd.trough },
    all_time_high: dd && { ...dd.all_time_high, last_vs_ath: dd.from_all_time_high },
    source: h.source,
  };
}

const projectView = (p: Protocol) => ({ name: p.name, slug: p.slug, category: p.category, tvl_usd: p.tvl_usd, chains: p.chains, oracles: p.oracles, url: p.url });

export function projectTools(deps: ServerDeps): ToolDefinition[] {
  const { projects, market } = deps;
  const protocols = (signal: AbortSignal) => projects.protocols(signal);
  const sourceOf = (s: string) => (projects.name === 'snapshot' ? 'snapshot' : s);

  return [
    defineTool({
      name: 'search_projects',
      title: 'Search projects',
      description: 'Returns DeFi projects (category, TVL in USD, chains, oracles, website) matching a name, category, chain and minimum TVL, largest TVL first, paginated.',
      input: z
        .object({
          query: z.string().trim().max(100).optional().describe('Part of the name (case-insensitive).'),
          category: z.string().trim().max(60).optional().describe('DefiLlama category, e.g. "Lending", "Dexs", "Liquid Staking".'),
          chain: chainSchema.optional(),
          min_tvl_usd: z.number().min(0).max(1e13).optional(),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.object({ total: z.number().int(), projects: z.array(projectShape) }),
      credits: 0,
      handler: async (args, ctx) => {
        const list = await protocols(ctx.signal);
        const q = args.query?.toLowerCase();
        const hits = list.protocols
          .filter(
            (p) =>
              (!q || p.name.toLowerCase().includes(q)) &&
              (!args.category || p.category?.toLowerCase() === args.category.toLowerCase()) &&
              (!args.chain || p.chains.some((c) => sameChain(c, args.chain!))) &&
              (args.min_tvl_usd === undefined || (p.tvl_usd ?? 0) >= args.min_tvl_usd),
          )
          .sort((a, b) => (b.tvl_usd ?? -1) - (a.tvl_usd ?? -1) || (a.name < b.name ? -1 : 1));
        const { items, next_cursor, truncated, share } = page(hits, args.limit, args.cursor);
        return { data: { total: hits.length, projects: items.map(projectView) }, source: sourceOf(list.source), data_as_of: list.as_of, next_cursor, truncated, page: share };
      },
    }),
    defineTool({
      name: 'get_project_profile',
      title: 'Project profile',
      description: "Returns a DeFi project's category, chains, TVL (USD) and rank, oracles, website, its token and price where known, how its listing changed since 2023, and its TVL history's growth, volatility and drawdown (fractions) where the data has one.",
      input: z.object({ project: projectSchema }).strict(),
      output: projectShape.extend({
        tvl_rank: z.number().int().nullable(),
        chain_tvls: z.record(z.string(), z.number()).nullable().describe('TVL per chain, where the source splits it.'),
        token: z
          .object({
            id: z.string(),
            symbol: z.string(),
            name: z.string(),
            linked_by: z.enum(['defillama_gecko_id', 'name_and_website', 'name_only']),
            price_usd: z.number().nullable(),
            change_30d_pct: z.number().nullable(),
            as_of: z.string().nullable(),
            source: z.string().nullable(),
          })
          .nullable(),
        listing_2023: z.object({ chains: z.array(z.string()), category: z.string(), chains_added_since: z.array(z.string()), chains_dropped_since: z.array(z.string()) }).nullable(),
        tvl_history: projectHistoryShape,
        resolved_from: familyShape.optional(),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const list = await protocols(ctx.signal);
        const { protocol: p, family } = resolveProject(list.protocols, args.project);
        const [history, link] = [await projects.protocolTvl(p, ctx.signal), linkedProjectToken(market.registry, deps.tokens, p) ?? formerNameToken(market.registry, args.project)];
        const token = link?.asset;
        const quote = token ? (await market.quotes([token.id], ctx.signal))[0] : undefined;
        const listed = deps.projectsData().listing2023.get(p.name.toLowerCase());
        const rank = list.protocols.filter((x) => (x.tvl_usd ?? 0) > (p.tvl_usd ?? 0)).length + 1;
        return {
          data: {
            ...projectView(p),
            tvl_rank: p.tvl_usd === null ? null : rank,
            chain_tvls: p.chain_tvls ?? null,
            token: token
              ? { id: token.id, symbol: token.symbol, name: token.name, linked_by: link!.linked_by, price_usd: quote?.price_usd ?? null, change_30d_pct: quote?.change_30d_pct ?? null, as_of: quote?.as_of ?? null, source: quote?.source ?? null }
              : null,
            listing_2023: listed ? { ...listed, chains_added_since: p.chains.filter((c) => !listed.chains.some((o) => sameChain(o, c))), chains_dropped_since: listed.chains.filter((o) => !p.chains.some((c) => sameChain(o, c))) } : null,
            tvl_history: history ? historyStats(history) : noHistory(p, list),
            ...(family ? { resolved_from: family } : {}),
          },
          source: sourceOf(list.source),
          ...datedAnswer([
            { label: 'TVL and listing', as_of: list.as_of },
            { label: 'TVL history', as_of: history?.points.at(-1)?.date ?? null },
            { label: 'token price', as_of: token ? (quote?.as_of ?? null) : null },
          ]),
        };
      },
    }),
    defineTool({
      name: 'get_tvl_history',
      title: 'TVL history',
      description: 'Returns the daily TVL in USD of a project, a chain or (by default) all of DeFi, oldest first over a date range, paginated.',
      input: z
        .object({
          project: projectSchema.optional(),
          chain: chainSchema.optional(),
          total: z.boolean().default(false).describe('True for the TVL of all of DeFi (also what neither project nor chain gives).'),
          from: ISO_DAY.optional(),
          to: ISO_DAY.optional(),
          limit: z.number().int().min(1).max(100).default(100),
          cursor: cursorSchema,
        })
        .strict()
        .refine((a) => [a.project !== undefined, a.chain !== undefined, a.total].filter(Boolean).length <= 1, {
          message: 'give at most one of project, chain or total (none: all of DeFi)',
          path: ['project'],
        })
        .refine((a) => !a.from || !a.to || a.from <= a.to, { message: 'from must not be after to', path: ['from'] }),
      output: z.object({ subject: z.string(), covered_range: dayRangeShape, total: z.number().int(), points: tvlPointsShape }),
      credits: 1,
      handler: async (args, ctx) => {
        let history: TvlHistory | undefined;
        if (args.project !== undefined) {
          const list = await protocols(ctx.signal);
          const p = findProject(list.protocols, args.project);
          history = await projects.protocolTvl(p, ctx.signal);
          if (!history) {
            // Offline, only some protocols have a history: name them so the caller can pick one.
            const withHistory = projects.name === 'snapshot' ? { projects_with_history: [...deps.projectsData().protocolTvl.keys()].sort() } : {};
            throw new ApiError('NOT_FOUND', `The data has no TVL history for ${p.name} (only its current TVL).`, { project: p.name, ...withHistory });
          }
        } else if (args.chain !== undefined) {
          const { chains } = await projects.chains(ctx.signal);
          const name = findChain(chains.map((c) => c.name), args.chain);
          history = await projects.chainTvl(name, ctx.signal);
          if (!history) throw new ApiError('NOT_FOUND', `The data has no TVL history for the chain ${name}.`, { chain: name });
        } else {
          history = { subject: 'DeFi total', points: deps.projectsData().totalTvl, source: 'snapshot:defillama-total-tvl' };
        }
        const all = history.points;
        const first = all[0]?.date ?? '';
        const last = all[all.length - 1]?.date ?? '';
        if ((args.from && args.from > last) || (args.to && args.to < first)) {
          throw new ApiError('INVALID_PARAMS', `The TVL history of ${history.subject} covers ${first} to ${last}.`, {
            issues: [{ path: args.from && args.from > last ? 'from' : 'to', message: `outside ${first}..${last}` }],
            covered_range: { from: first, to: last },
          });
        }
        const points = all.filter((p) => (!args.from || p.date >= args.from) && (!args.to || p.date <= args.to));
        const { items, next_cursor, truncated, share } = page(points, args.limit, args.cursor);
        return {
          data: { subject: history.subject, covered_range: { from: first, to: last }, total: points.length, points: items },
          source: sourceOf(history.source),
          data_as_of: last,
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
    defineTool({
      name: 'compare_projects',
      title: 'Compare projects',
      description: 'Returns 2 to 5 DeFi projects side by side: TVL (USD) and rank, growth, volatility and drawdown (fractions) where a TVL history exists, chain count and concentration, oracles.',
      input: z.object({ projects: z.array(projectSchema).min(2).max(5) }).strict(),
      output: z.object({
        as_of: z.string(),
        projects: z.array(
          projectShape.extend({
            tvl_rank: z.number().int().nullable(),
            chain_count: z.number().int(),
            chain_concentration: z.object({ hhi: z.number().nullable(), largest_chain_share: z.number().nullable(), basis: z.string() }),
            history: projectHistoryShape,
          }),
        ),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const list = await protocols(ctx.signal);
        const found: Protocol[] = [];
        const missing: Record<string, unknown>[] = [];
        for (const q of args.projects) {
          try {
            const p = findProject(list.protocols, q);
            if (!found.includes(p)) found.push(p);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            missing.push(err.details);
          }
        }
        if (missing.length > 0) throw new ApiError('NOT_FOUND', `No DeFi project matches ${missing.map((m) => `"${String(m.project)}"`).join(', ')}.`, { missing });
        if (found.length < 2) throw new ApiError('INVALID_PARAMS', 'Name at least two different projects.', { issues: [{ path: 'projects', message: 'at least two distinct projects' }] });
        const rows = await Promise.all(
          found.map(async (p) => {
            const h = await projects.protocolTvl(p, ctx.signal);
            const split = p.chain_tvls ? concentration(Object.values(p.chain_tvls), 1) : null;
            return {
              ...projectView(p),
              tvl_rank: p.tvl_usd === null ? null : list.protocols.filter((x) => (x.tvl_usd ?? 0) > (p.tvl_usd ?? 0)).length + 1,
              chain_count: p.chains.length,
              chain_concentration: split
                ? { hhi: split.hhi, largest_chain_share: split.top_share, basis: 'TVL per chain' }
                : { hhi: null, largest_chain_share: null, basis: `${p.chains.length} chain(s) listed; the offline data does not split TVL by chain` },
              history: h ? historyStats(h) : noHistory(p, list),
            };
          }),
        );
        return { data: { as_of: list.as_of, projects: rows }, source: sourceOf(list.source), data_as_of: list.as_of };
      },
    }),
    defineTool({
      name: 'get_category_overview',
      title: 'Category overview',
      description: 'Returns TVL (USD) by DeFi category, or one category: total, number of projects, leaders and concentration (top-3 share, Herfindahl index 0-1).',
      input: z
        .object({
          category: z.string().trim().max(60).optional().describe('One category in detail; omit for all categories ranked by TVL.'),
          leaders: z.number().int().min(1).max(20).default(5),
          limit: limitSchema,
          cursor: cursorSchema,
        })
        .strict(),
      output: z.union([
        categoryShape,
        z.object({ categories_total: z.number().int(), tvl_usd_all: z.number(), note: z.string(), categories: z.array(categoryShape) }),
      ]),
      credits: 2,
      handler: async (args, ctx) => {
        const list = await protocols(ctx.signal);
        const byCat = new Map<string, Protocol[]>();
        for (const p of list.protocols) {
          if (!p.category) continue;
          const ps = byCat.get(p.category);
          if (ps) ps.push(p);
          else byCat.set(p.category, [p]);
        }
        const summarise = (cat: string, ps: Protocol[]) => {
          const withTvl = ps.filter((p) => p.tvl_usd !== null).sort((a, b) => b.tvl_usd! - a.tvl_usd!);
          const total = withTvl.reduce((s, p) => s + p.tvl_usd!, 0);
          const c = concentration(withTvl.map((p) => p.tvl_usd!));
          return {
            category: cat,
            tvl_usd: total,
            projects: ps.length,
            projects_with_tvl: withTvl.length,
            top3_share: c.top_share,
            hhi: c.hhi,
            leaders: withTvl.slice(0, args.leaders).map((p) => ({ name: p.name, tvl_usd: p.tvl_usd, share: total > 0 ? p.tvl_usd! / total : null })),
          };
        };
        if (args.category) {
          const cat = [...byCat.keys()].find((c) => c.toLowerCase() === args.category!.toLowerCase());
          if (!cat) {
            throw new ApiError('NOT_FOUND', `No DeFi category "${args.category}".`, { category: args.category, available: [...byCat.keys()].sort() });
          }
          return { data: summarise(cat, byCat.get(cat)!), source: sourceOf(list.source), data_as_of: list.as_of };
        }
        const all = [...byCat.entries()].map(([c, ps]) => summarise(c, ps)).sort((a, b) => b.tvl_usd - a.tvl_usd || (a.category < b.category ? -1 : 1));
        const { items, next_cursor, truncated, share } = page(all, args.limit, args.cursor);
        return {
          data: {
            categories_total: all.length,
            tvl_usd_all: all.reduce((s, c) => s + c.tvl_usd, 0),
            note: "TVL sums DefiLlama's per-protocol totals; categories that hold other protocols' deposits (e.g. liquid restaking) count them again.",
            categories: items,
          },
          source: sourceOf(list.source),
          data_as_of: list.as_of,
          next_cursor,
          truncated,
          page: share,
        };
      },
    }),
    defineTool({
      name: 'get_chain_overview',
      title: 'Chain overview',
      description: "Returns a chain's TVL (USD) with its history's growth and drawdown (fractions), the projects listed on it by TVL and category, and the bridges that reached it in 2023.",
      input: z.object({ chain: chainSchema, top: z.number().int().min(1).max(50).default(10) }).strict(),
      output: z.object({
        chain: z.string(),
        tvl: z.union([z.object({ tvl_usd: z.number(), as_of: z.string(), source: z.string() }), notCoveredShape]),
        history: z.union([historyStatsShape, notCoveredShape]),
        projects: z.object({
          as_of: z.string(),
          count: z.number().int(),
          single_chain: z.number().int(),
          by_category: z.array(z.object({ category: z.string(), count: z.number().int() })),
          top: z.array(z.object({ name: z.string(), category: z.string().nullable(), tvl_usd: z.number().nullable(), chains: z.number().int() })),
          note: z.string(),
        }),
        bridges_2023: z.array(z.string()),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const [{ chains, source: chainSource }, list] = await Promise.all([projects.chains(ctx.signal), protocols(ctx.signal)]);
        const projectChains = new Set(list.protocols.flatMap((p) => p.chains));
        const name = findChain([...chains.map((c) => c.name), ...[...projectChains].filter((c) => !chains.some((x) => sameChain(x.name, c)))], args.chain);
        const history = await projects.chainTvl(name, ctx.signal);
        const on = list.protocols.filter((p) => p.chains.some((c) => sameChain(c, name))).sort((a, b) => (b.tvl_usd ?? -1) - (a.tvl_usd ?? -1));
        const cats = new Map<string, number>();
        for (const p of on) if (p.category) cats.set(p.category, (cats.get(p.category) ?? 0) + 1);
        const bridges = deps.projectsData().bridges.filter((b) => b.chains.some((c) => sameChain(c, name))).map((b) => b.name);
        const current = chains.find((c) => sameChain(c.name, name));
        return {
          data: {
            chain: name,
            tvl: current ? { tvl_usd: current.tvl_usd, as_of: current.as_of, source: chainSource } : { covered: false as const, reason: `no chain TVL for ${name} in the data` },
            history: history ? historyStats(history) : { covered: false as const, reason: `no TVL history for ${name} in the data` },
            projects: {
              as_of: list.as_of,
              count: on.length,
              single_chain: on.filter((p) => p.chains.length === 1).length,
              by_category: [...cats.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([category, count]) => ({ category, count })),
              top: on.slice(0, args.top).map((p) => ({ name: p.name, category: p.category, tvl_usd: p.tvl_usd, chains: p.chains.length })),
              note: "A project's TVL is its total over all its chains (the offline data does not split it by chain).",
            },
            bridges_2023: bridges,
          },
          source: sourceOf(list.source),
          // The chain TVL history may end years before the listing (offline: 2023-07-25).
          ...datedAnswer([
            { label: 'chain TVL', as_of: current?.as_of ?? null },
            { label: 'TVL history', as_of: history?.points.at(-1)?.date ?? null },
            { label: 'projects on the chain', as_of: list.as_of },
          ]),
        };
      },
    }),
    defineTool({
      name: 'due_diligence_report',
      longRunning: true,
      title: 'Due diligence report',
      description:
        'Returns red, amber, green or neutral flags on a DeFi project (TVL size, trend and drawdowns, oracle and chain dependence, social attention and sentiment, token market data, developer activity where known), each with the data it rests on.',
      input: z
        .object({
          project: projectSchema,
          github_repo: z.string().regex(REPO_PATTERN, 'owner/name').optional().describe('The project\'s main GitHub repository ("aave/aave-v3-core"), for developer activity.'),
        })
        .strict(),
      output: z.object({
        project: projectShape.omit({ slug: true }),
        summary: z.object({ red: z.number().int(), amber: z.number().int(), green: z.number().int(), neutral: z.number().int() }).describe('Flags per level.'),
        flags: z.array(flagShape),
        note: z.string(),
      }),
      credits: 10,
      handler: async (args, ctx) => {
        const list = await protocols(ctx.signal);
        const p = findProject(list.protocols, args.project);
        const report = await dueDiligence(deps, p, list, ctx.signal, args.github_repo);
        return { data: report, source: sourceOf(list.source), data_as_of: list.as_of };
      },
    }),
  ];
}
