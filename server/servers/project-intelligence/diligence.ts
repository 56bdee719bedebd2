// due_diligence_report: flags on a DeFi project, each with the numbers it rests on and where they
// come from. Thresholds are rules of thumb stated in each flag, not predictions.
import { concentration, growth, tvlDrawdown } from '../../analytics/tvl.ts';
import { gapsOf } from '../../analytics/candles.ts';
import { distanceFromAllTimeHigh } from '../../analytics/risk.ts';
import { ApiError } from '../../errors.ts';
import type { GitHubClient } from '../../providers/github/live.ts';
import type { DeveloperActivity } from '../../providers/github/types.ts';
import { ProviderError } from '../../errors.ts';
import type { Protocol, ProtocolList } from '../../providers/projects/types.ts';
import type { ServerDeps } from '../deps.ts';
import { baseName, projectToken } from './common.ts';
import type { Flag } from './outputs.ts';

type Level = Flag['level'];

/** Categories whose protocols price collateral or positions, and so depend on price oracles. */
const ORACLE_DEPENDENT = new Set(['Lending', 'CDP', 'Derivatives', 'Synthetics', 'Options', 'Leveraged Farming', 'Perps', 'Yield Aggregator', 'Insurance']);

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const usd = (x: number) => `$${Math.round(x).toLocaleString('en-US')}`;

export async function dueDiligence(deps: ServerDeps, p: Protocol, list: ProtocolList, signal: AbortSignal, githubRepo?: string) {
  const flags: Flag[] = [];
  const listSource = list.source;

  // Size.
  if (p.tvl_usd === null) {
    flags.push({ level: 'amber', topic: 'tvl_size', finding: 'DefiLlama reports no TVL for this project.', data: { tvl_usd: null, as_of: list.as_of, source: listSource } });
  } else {
    const level: Level = p.tvl_usd >= 1e9 ? 'green' : p.tvl_usd < 1e7 ? 'red' : 'neutral';
    flags.push({ level, topic: 'tvl_size', finding: `TVL ${usd(p.tvl_usd)} (green at $1B or more, red under $10M).`, data: { tvl_usd: p.tvl_usd, as_of: list.as_of, source: listSource } });
  }

  // Trend and drawdowns, where a history exists.
  const history = await deps.projects.protocolTvl(p, signal);
  if (history && history.points.length > 1) {
    const pts = history.points;
    const last = pts[pts.length - 1]!;
    const g90 = growth(pts, 90);
    if (g90 !== null) {
      const level: Level = g90 <= -0.3 ? 'red' : g90 <= -0.1 ? 'amber' : g90 >= 0.1 ? 'green' : 'neutral';
      flags.push({ level, topic: 'tvl_trend', finding: `TVL changed ${pct(g90)} over the 90 days to ${last.date} (red at -30% or worse, amber at -10%, green at +10%).`, data: { growth_90d: g90, growth_30d: growth(pts, 30), growth_365d: growth(pts, 365), last, source: history.source } });
    }
    const dd = tvlDrawdown(pts)!;
    const level: Level = dd.from_all_time_high <= -0.5 ? 'red' : dd.from_all_time_high <= -0.25 ? 'amber' : 'green';
    flags.push({
      level,
      topic: 'tvl_drawdown',
      finding: `TVL is ${pct(-dd.from_all_time_high)} below its high of ${usd(dd.all_time_high.tvl_usd)} (${dd.all_time_high.date}); deepest fall ${pct(-dd.max_drawdown)} (red 50% or more below the high, amber 25%).`,
      data: { all_time_high: dd.all_time_high, last, last_vs_ath: dd.from_all_time_high, max_drawdown: dd.max_drawdown, peak: dd.peak, trough: dd.trough, source: history.source },
    });
  } else {
    flags.push({ level: 'neutral', topic: 'tvl_trend', finding: 'Not covered: the data has no TVL history for this project, so trend and drawdowns cannot be judged.', data: { covered: false } });
  }

  // Oracles.
  const needsOracle = p.category !== null && ORACLE_DEPENDENT.has(p.category);
  if (p.oracles.length === 0) {
    flags.push({
      level: needsOracle ? 'red' : 'neutral',
      topic: 'oracles',
      finding: needsOracle ? `No oracle is listed for a ${p.category} protocol, which needs prices: its price source is unknown.` : 'No oracle listed (the category does not usually need one).',
      data: { oracles: [], category: p.category, source: listSource },
    });
  } else {
    flags.push({
      level: p.oracles.length === 1 ? (needsOracle ? 'amber' : 'neutral') : 'green',
      topic: 'oracles',
      finding: p.oracles.length === 1 ? `Depends on one oracle provider (${p.oracles[0]}).` : `Uses ${p.oracles.length} oracle providers (${p.oracles.join(', ')}).`,
      data: { oracles: p.oracles, category: p.category, source: listSource },
    });
  }

  // Chains.
  const split = p.chain_tvls ? concentration(Object.values(p.chain_tvls), 1) : null;
  if (split && split.top_share > 0.9 && p.chains.length > 1) {
    flags.push({ level: 'amber', topic: 'chains', finding: `Deployed on ${p.chains.length} chains but ${pct(split.top_share)} of TVL sits on one.`, data: { chains: p.chains, chain_tvls: p.chain_tvls, source: listSource } });
  } else {
    const level: Level = p.chains.length === 1 ? 'amber' : p.chains.length >= 3 ? 'green' : 'neutral';
    flags.push({
      level,
      topic: 'chains',
      finding: p.chains.length === 1 ? `Depends on a single chain (${p.chains[0]}).` : `Deployed on ${p.chains.length} chains.`,
      data: { chains: p.chains, chain_count: p.chains.length, source: listSource },
    });
  }

  // Social attention: Reddit posts and comments naming the project or mentioning its token.
  const token = projectToken(deps.market.registry, p);
  const cov = await deps.social.coverage('reddit', signal);
  const posts = await deps.social.posts({ platform: 'reddit', from: cov.from, to: cov.to }, signal);
  const name = baseName(p);
  const nameRe = new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i');
  const about = posts.filter((x) => nameRe.test(x.text) || (token !== undefined && x.assets.includes(token.id)));
  if (about.length === 0) {
    flags.push({ level: 'amber', topic: 'social', finding: `No Reddit post or comment from ${cov.from} to ${cov.to} names ${name}${token ? ` or mentions ${token.symbol.toUpperCase()}` : ''}: no social attention in the data.`, data: { mentions: 0, covered_range: { from: cov.from, to: cov.to }, source: cov.source } });
  } else {
    const m = about.reduce((s, x) => s + x.compound, 0) / about.length;
    const level: Level = about.length < 5 ? 'neutral' : m <= -0.05 ? 'red' : m >= 0.05 ? 'green' : 'neutral';
    flags.push({
      level,
      topic: 'social',
      finding: `${about.length} Reddit posts and comments from ${cov.from} to ${cov.to}, mean sentiment ${m.toFixed(3)} (VADER compound; red at -0.05 or lower, green at 0.05 or higher, with at least 5 mentions).`,
      data: { mentions: about.length, mean_compound: m, matched_by: { name, token: token?.id ?? null }, covered_range: { from: cov.from, to: cov.to }, source: cov.source },
    });
  }

  // Token market data.
  if (!token) {
    flags.push({ level: 'neutral', topic: 'token', finding: 'Not covered: no token with price history could be matched to this project.', data: { token: null } });
  } else {
    const series = await deps.market.candles(token.id, { interval: 'daily' }, signal);
    // A high is a level, not a return: it is taken over every candle, and a break in the data is
    // named, since the true high may lie inside it.
    const ath = distanceFromAllTimeHigh(series.candles);
    const breaks = gapsOf(series.candles);
    const level: Level = ath.distance <= -0.8 ? 'red' : ath.distance <= -0.5 ? 'amber' : 'green';
    flags.push({
      level,
      topic: 'token',
      finding: `${token.symbol.toUpperCase()} closed at ${series.candles[series.candles.length - 1]?.close} on ${series.as_of}, ${pct(-ath.distance)} below its high in the data (red 80% or more below, amber 50%).${breaks.length > 0 ? ` Its prices have ${breaks.length === 1 ? 'a break' : `${breaks.length} breaks`} (the longest ${Math.max(...breaks.map((b) => b.missing_days))} days, the last from ${breaks.at(-1)!.from} to ${breaks.at(-1)!.to}): the high may lie inside one.` : ''}`,
      data: { token: { id: token.id, symbol: token.symbol }, as_of: series.as_of, ...ath, price_gaps: breaks, source: series.source },
    });
  }

  // Developer activity, from GitHub when it is configured and a repository is named.
  if (!githubRepo || !deps.github) {
    flags.push({
      level: 'neutral',
      topic: 'developers',
      finding: !githubRepo ? 'Not covered: name the project\'s GitHub repository (github_repo) to judge developer activity.' : 'Not covered: GitHub is not configured on this deployment (GITHUB_API_URL / GITHUB_TOKEN).',
      data: { github_repo: githubRepo ?? null },
    });
  } else {
    const a = await githubActivity(deps.github, githubRepo, signal);
    if ('unavailable' in a) {
      flags.push({ level: 'neutral', topic: 'developers', finding: `Not covered: GitHub did not answer (${a.unavailable}).`, data: { github_repo: githubRepo, source: 'live:github' } });
    } else {
      const c13 = a.commits?.weeks_13 ?? null;
      const level: Level = a.archived ? 'red' : c13 === null ? 'neutral' : c13 === 0 ? 'red' : c13 >= 20 ? 'green' : 'amber';
      flags.push({
        level,
        topic: 'developers',
        finding: a.archived
          ? `${a.repo} is archived.`
          : c13 === null
            ? `GitHub is still computing ${a.repo}'s commit statistics; last push ${a.last_push ?? 'unknown'}.`
            : `${c13} commits to ${a.repo} in the last 13 weeks (red at none, green at 20 or more); ${a.contributors.count}${a.contributors.capped_at_100 ? '+' : ''} contributors.`,
        data: { ...a, commits: a.commits && { weeks_4: a.commits.weeks_4, weeks_13: a.commits.weeks_13, weeks_52: a.commits.weeks_52 } },
      });
    }
  }

  const count = (l: Level) => flags.filter((f) => f.level === l).length;
  return {
    project: { name: p.name, category: p.category, tvl_usd: p.tvl_usd, chains: p.chains, oracles: p.oracles, url: p.url },
    summary: { red: count('red'), amber: count('amber'), green: count('green'), neutral: count('neutral') },
    flags,
    note: 'Flags are rules of thumb on the data shown with each; "not covered" means the data cannot answer, not that the project is fine.',
  };
}

/**
 * A repository GitHub does not know is the caller's mistake (404, not charged); GitHub being down
 * or slow leaves only the developer flag unanswered, not the whole report.
 */
async function githubActivity(github: GitHubClient, repo: string, signal: AbortSignal): Promise<DeveloperActivity | { unavailable: string }> {
  try {
    return await github.activity(repo, signal);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'not_found') throw new ApiError('NOT_FOUND', `GitHub has no repository "${repo}".`, { github_repo: repo, provider: 'live:github' });
    return { unavailable: err.kind };
  }
}
