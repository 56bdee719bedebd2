// Social alert rules: create_social_alert, and the evaluator the alert job runs for them. A rule
// fires when the mentions of an asset on the platform's latest day stand `threshold` standard
// deviations above the mean of the preceding `baseline_days` days (the z-score detect_social_spike
// uses), once per day: the day is the event. Offline the latest day is the dataset's last one.
import { z } from 'zod';
import type { AlertRule, FiredEvent, RuleEvaluator } from '../../alerts/types.ts';
import { ApiError } from '../../errors.ts';
import { addDays } from '../../lib/dates.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { Platform } from '../../providers/social/types.ts';
import { ALERT_TERMS, alertManagementTools, alertRuleFields, createdOutput, createRule } from '../common/alert-tools.ts';
import { assetArgument } from '../common/asset-param.ts';
import type { ServerDeps } from '../deps.ts';
import { assetSchema, mean, platformSchema } from './common.ts';

interface SocialParams {
  asset: string;
  symbol: string;
  platform: Platform;
  threshold: number;
  baseline_days: number;
}

const input = z
  .object({
    asset: assetSchema,
    platform: platformSchema,
    threshold: z.number().positive().max(10).default(2.5).describe('z-score of the latest day against the baseline at or above which it fires (must be positive).'),
    baseline_days: z.number().int().min(3).max(90).default(14).describe('Preceding days the baseline is measured over (3-90).'),
    ...alertRuleFields,
  })
  .strict();

export function socialAlertTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'create_social_alert',
      accountBound: true,
      title: 'Create a social spike alert',
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
      description: `Returns a new social alert rule: it fires when the mentions of an asset on its platform's latest day spike above their baseline (z-score against the preceding days), at most once a day; checked about every minute. ${ALERT_TERMS}`,
      input,
      output: createdOutput,
      credits: 2,
      handler: async (args, ctx) => {
        const asset = assetArgument(deps.market.registry, args.asset);
        if (!deps.social.platforms().includes(args.platform)) {
          throw new ApiError('INVALID_PARAMS', `This deployment reads ${deps.social.platforms().join(', ')} only.`, { issues: [{ path: 'platform', message: `one of ${deps.social.platforms().join(', ')}` }] });
        }
        const params: SocialParams = { asset: asset.id, symbol: asset.symbol, platform: args.platform, threshold: args.threshold, baseline_days: args.baseline_days };
        const data = await createRule(deps.alerts, ctx, { kind: 'social', server: 'social-intelligence', params: { ...params }, state: {}, note: args.note, webhook_url: args.webhook_url });
        return { data, source: deps.social.name, data_as_of: null };
      },
    }),
    ...alertManagementTools(deps.alerts),
  ];
}

/** The latest day's mentions against the preceding days: the spike, if there is one. */
async function spikeOf(deps: ServerDeps, p: SocialParams, signal: AbortSignal): Promise<FiredEvent | null> {
  const cov = await deps.social.coverage(p.platform, signal);
  const day = cov.to;
  const from = addDays(day, -p.baseline_days);
  const posts = await deps.social.posts({ platform: p.platform, asset: p.asset, from, to: day }, signal);
  const counts = new Map<string, number>();
  for (let d = from; d <= day; d = addDays(d, 1)) counts.set(d, 0);
  for (const post of posts) {
    const d = post.created.slice(0, 10);
    if (counts.has(d)) counts.set(d, counts.get(d)! + 1);
  }
  const today = counts.get(day)!;
  const base = [...counts.entries()].filter(([d]) => d < day).map(([, n]) => n);
  const mu = mean(base);
  const sd = Math.sqrt(base.reduce((s, v) => s + (v - mu) ** 2, 0) / (base.length - 1 || 1));
  if (sd === 0) return null;
  const z = (today - mu) / sd;
  if (z < p.threshold) return null;
  return {
    event_id: `spike:${p.platform}:${day}`,
    title: `${p.symbol} mentions on ${p.platform} spiked on ${day}: ${today} against a baseline of ${mu.toFixed(1)} (z = ${z.toFixed(2)})`,
    data: { asset: p.asset, symbol: p.symbol, platform: p.platform, day, mentions: today, baseline_mean: mu, baseline_sd: sd, baseline_days: p.baseline_days, z, threshold: p.threshold, source: cov.source },
  };
}

export function socialEvaluator(deps: ServerDeps): RuleEvaluator {
  return async (rules: readonly AlertRule[], signal) =>
    Promise.all(
      rules.map(async (r) => {
        try {
          const spike = await spikeOf(deps, r.params as unknown as SocialParams, signal);
          return { rule_id: r.id, fired: spike ? [spike] : [], state: {} };
        } catch (err) {
          return { rule_id: r.id, error: (err as Error).message };
        }
      }),
    );
}
