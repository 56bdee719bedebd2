// Price alert rules: create_price_alert, and the evaluator the alert job runs for them. A level
// rule fires when the price crosses the level in the rule's direction (from the side it was on
// at the previous evaluation: a rule made while already past its level waits for a crossing); a
// move rule fires when the price moved at least `percent` either way within `window_minutes`,
// measured on the prices seen at each evaluation, and starts measuring afresh after firing.
import { z } from 'zod';
import type { AlertRule, FiredEvent, RuleEvaluator } from '../../alerts/types.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { Quote } from '../../providers/market/types.ts';
import { ALERT_TERMS, alertManagementTools, alertRuleFields, createdOutput, createRule } from '../common/alert-tools.ts';
import { assetArgument } from '../common/asset-param.ts';
import type { ServerDeps } from '../deps.ts';

type PriceParams =
  | { asset: string; symbol: string; condition: 'above' | 'below'; level: number }
  | { asset: string; symbol: string; condition: 'move'; percent: number; window_minutes: number };
interface Sample {
  t: number;
  p: number;
}

const input = z
  .object({
    asset: z.string().trim().min(1).max(100).describe('Asset id, ticker or name, e.g. "bitcoin", "ETH".'),
    condition: z
      .enum(['above', 'below', 'move'])
      .default('move')
      .describe('above / below: the price crosses `level` upwards / downwards (level required); move (default): it moves `percent` either way within `window_minutes`.'),
    level: z.number().positive().optional().describe('USD price level, required for above / below (must be positive).'),
    percent: z.number().positive().max(1000).default(10).describe('For move: the move in percent that fires (default 10).'),
    window_minutes: z.number().int().min(5).max(10_080).default(60).describe('For move: the window, 5 minutes to 7 days.'),
    ...alertRuleFields,
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.condition !== 'move' && a.level === undefined) ctx.addIssue({ code: 'custom', path: ['level'], message: `condition "${a.condition}" needs a positive level` });
  });

const sideOf = (price: number, level: number) => (price >= level ? 'above' : 'below');

export function priceAlertTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'create_price_alert',
      accountBound: true,
      title: 'Create a price alert',
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
      description: `Returns a new price alert rule: it fires when an asset's price crosses a level (above or below), or moves more than N percent within a window; checked about every minute against ${deps.market.name === 'snapshot' ? 'the offline snapshot (whose prices do not move: rules fire only on live data)' : 'live prices'}. ${ALERT_TERMS}`,
      input,
      output: createdOutput,
      credits: 2,
      handler: async (args, ctx) => {
        const asset = assetArgument(deps.market.registry, args.asset);
        const [quote] = await deps.market.quotes([asset.id], ctx.signal);
        const params: PriceParams =
          args.condition === 'move'
            ? { asset: asset.id, symbol: asset.symbol, condition: 'move', percent: args.percent, window_minutes: args.window_minutes }
            : { asset: asset.id, symbol: asset.symbol, condition: args.condition, level: args.level! };
        const state = quote ? (params.condition === 'move' ? { samples: [{ t: Date.now(), p: quote.price_usd }] } : { side: sideOf(quote.price_usd, params.level), price: quote.price_usd }) : {};
        const data = await createRule(deps.alerts, ctx, { kind: 'price', server: 'price-prediction', params: { ...params }, state, note: args.note, webhook_url: args.webhook_url });
        return { data, source: deps.market.name, data_as_of: quote?.as_of ?? null };
      },
    }),
    ...alertManagementTools(deps.alerts),
  ];
}

/** What one rule makes of the current quote: events and the new state. */
export function priceRuleStep(params: PriceParams, state: Record<string, unknown>, quote: Quote, now: number): { fired: FiredEvent[]; state: Record<string, unknown> } {
  const price = quote.price_usd;
  const base = { asset: params.asset, symbol: params.symbol, price_usd: price, price_source: quote.source, price_as_of: quote.as_of };
  if (params.condition !== 'move') {
    const side = sideOf(price, params.level);
    const crossed = state.side !== undefined && state.side !== side && side === params.condition;
    const fired = crossed
      ? [{ event_id: `cross:${side}:${params.level}:${quote.as_of}:${price}`, title: `${params.symbol} crossed ${side} ${params.level} USD (now ${price})`, data: { ...base, condition: params.condition, level: params.level, previous_price_usd: state.price ?? null } }]
      : [];
    return { fired, state: { side, price } };
  }
  const windowMs = params.window_minutes * 60_000;
  const samples = [...((state.samples as Sample[] | undefined) ?? []).filter((s) => s.t >= now - windowMs), { t: now, p: price }];
  const extreme = samples.reduce((best, s) => (Math.abs(price / s.p - 1) > Math.abs(price / best.p - 1) ? s : best), samples[0]!);
  const change = (price / extreme.p - 1) * 100;
  if (Math.abs(change) < params.percent) return { fired: [], state: { samples } };
  return {
    fired: [
      {
        event_id: `move:${quote.as_of}:${now}`,
        title: `${params.symbol} moved ${change.toFixed(2)}% within ${params.window_minutes} minutes (now ${price} USD)`,
        data: { ...base, condition: 'move', percent: params.percent, window_minutes: params.window_minutes, change_pct: change, from_price_usd: extreme.p, from_time: new Date(extreme.t).toISOString() },
      },
    ],
    state: { samples: [{ t: now, p: price }] },
  };
}

export function priceEvaluator(deps: ServerDeps, now: () => number = Date.now): RuleEvaluator {
  return async (rules: readonly AlertRule[], signal) => {
    const params = (r: AlertRule) => r.params as unknown as PriceParams;
    const quotes = await deps.market.quotes([...new Set(rules.map((r) => params(r).asset))], signal);
    return rules.map((r) => {
      const quote = quotes.find((q) => q.asset_id === params(r).asset);
      if (!quote) return { rule_id: r.id, error: `no price for ${params(r).asset}` };
      return { rule_id: r.id, ...priceRuleStep(params(r), r.state, quote, now()) };
    });
  };
}
