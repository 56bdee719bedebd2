// Alert rules shared by the servers that create them (price-prediction, whale-intelligence,
// social-intelligence): the arguments every create tool takes (webhook_url, note), turning the
// store's outcomes into answers and coded errors, and the tools that manage any kind of rule and
// pull the feed: list_alert_rules, pause_alert_rule, resume_alert_rule, delete_alert_rule,
// get_alerts. These five are listed on each of those servers and once on the all-in-one endpoint.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { hasControlCharacters } from '../../lib/text.ts';
import { defineTool, type ToolContext, type ToolDefinition } from '../../mcp/tool.ts';
import { ALERT_CAPS_TEXT, ALERT_DELIVERY_CREDITS, type AlertRule, type AlertStore, type NewRule } from '../../alerts/types.ts';

/** What every create_*_alert tool's description ends with before the registry's "Costs N credits.". */
export const ALERT_TERMS = `Rules per account: ${ALERT_CAPS_TEXT}. Each alert is stored once; pull them with get_alerts (1 credit per call returning alerts) or give webhook_url to have each POSTed, signed per Standard Webhooks, retried for about a day: ${ALERT_DELIVERY_CREDITS} credit per alert delivered, none if it fails.`;

export const alertRuleFields = {
  webhook_url: z
    .string()
    .trim()
    .max(2000)
    .url()
    .optional()
    .describe('Where each alert is POSTed (https, a public address). The first rule naming a URL answers its signing secret (whsec_...) once.'),
  note: z
    .string()
    .trim()
    .max(200)
    .refine((s) => !hasControlCharacters(s, 'text'), 'contains a control character other than tab or a line break')
    .optional()
    .describe('Your note, up to 200 characters.'),
};

export const ruleOutput = z.object({
  id: z.string(),
  kind: z.enum(['price', 'whale', 'social']),
  server: z.string(),
  status: z.enum(['active', 'paused']),
  params: z.record(z.string(), z.unknown()),
  note: z.string().nullable(),
  webhook_url: z.string().nullable(),
  created_at: z.string(),
  last_evaluated_at: z.string().nullable(),
  last_error: z.string().nullable(),
  fired: z.number().int(),
  last_fired_at: z.string().nullable(),
});

export const ruleView = (r: AlertRule): z.input<typeof ruleOutput> => ({
  id: r.id,
  kind: r.kind,
  server: r.server,
  status: r.status,
  params: r.params,
  note: r.note,
  webhook_url: r.webhook?.url ?? null,
  created_at: r.created_at,
  last_evaluated_at: r.last_evaluated_at,
  last_error: r.last_error,
  fired: r.fired,
  last_fired_at: r.last_fired_at,
});

export const createdOutput = z.object({
  rule: ruleOutput,
  rules_used: z.number().int().describe('Rules the account holds now, this one included.'),
  limit: z.number().int().describe("The plan's cap on rules."),
  webhook: z
    .object({ url: z.string(), created: z.boolean(), secret: z.string().nullable().describe('The endpoint signing secret, only when this call created the endpoint.') })
    .nullable(),
  delivery_credits: z.number().int().describe('Credits per alert delivered by webhook.'),
});

/** Creates the rule; a rule over the plan's cap is 403 PLAN_FORBIDDEN, a refused webhook URL 400 INVALID_PARAMS. */
export async function createRule(alerts: AlertStore, ctx: ToolContext, rule: NewRule): Promise<z.input<typeof createdOutput>> {
  const outcome = await alerts.create(ctx.account.id, rule);
  if (!outcome.ok && outcome.code === 'CAP_REACHED') {
    throw new ApiError('PLAN_FORBIDDEN', `Your plan (${outcome.plan}) allows ${outcome.limit} alert rules; delete one first or change plan.`, {
      plan: outcome.plan,
      limit: outcome.limit,
      reason: 'alert_rule_cap',
    });
  }
  if (!outcome.ok) {
    throw new ApiError('INVALID_PARAMS', `The webhook URL is refused: ${outcome.reason}.`, { issues: [{ path: 'webhook_url', message: outcome.reason }] });
  }
  const used = await alerts.usage(ctx.account.id);
  return {
    rule: ruleView(outcome.rule),
    rules_used: used.rules,
    limit: outcome.limit,
    webhook: outcome.webhook && { url: outcome.webhook.url, created: outcome.webhook.created, secret: outcome.webhook.secret },
    delivery_credits: ALERT_DELIVERY_CREDITS,
  };
}

const ruleId = z.object({ rule_id: z.string().uuid().describe('From create_*_alert or list_alert_rules.') }).strict();

async function setStatus(alerts: AlertStore, ctx: ToolContext, id: string, status: 'active' | 'paused') {
  const rule = await alerts.setStatus(ctx.account.id, id, status);
  if (!rule) throw new ApiError('NOT_FOUND', 'You have no alert rule with that id.', { rule_id: id });
  return { data: { rule: ruleView(rule) }, source: 'account', data_as_of: null };
}

/** pause_alert_rule and resume_alert_rule: the same tool but for the status it sets. */
function statusTool(alerts: AlertStore, name: string, title: string, status: 'active' | 'paused', description: string): ToolDefinition {
  return defineTool({
    name,
    accountBound: true,
    openWorld: false,
    title,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
    description,
    input: ruleId,
    output: z.object({ rule: ruleOutput }),
    credits: 0,
    handler: (args, ctx) => setStatus(alerts, ctx, args.rule_id, status),
  });
}

const alertOutput = z.object({
  cursor: z.number().int().describe('Pass as `cursor` to get what came after this alert.'),
  rule_id: z.string().nullable().describe('null once the rule was deleted.'),
  kind: z.enum(['price', 'whale', 'social']),
  event_id: z.string().describe('With rule_id, the idempotency id: a redelivered alert has the same.'),
  title: z.string(),
  fired_at: z.string(),
  data: z.record(z.string(), z.unknown()).describe('What happened: prices, amounts in USD, transaction, counts, as the kind has them.'),
});

export function alertManagementTools(alerts: AlertStore): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_alert_rules',
      accountBound: true,
      openWorld: false,
      title: 'List alert rules',
      description: `Returns your account's alert rules of every kind (price, whale, social) with their status, what each watches, how often it fired, and your plan's cap (${ALERT_CAPS_TEXT} rules).`,
      input: z.object({ kind: z.enum(['price', 'whale', 'social']).optional().describe('Only rules of this kind (default: all).') }).strict(),
      output: z.object({ total: z.number().int(), limit: z.number().int(), plan: z.string(), rules: z.array(ruleOutput) }),
      credits: 0,
      handler: async (args, ctx) => {
        const [rules, used] = await Promise.all([alerts.list(ctx.account.id, args.kind), alerts.usage(ctx.account.id)]);
        return { data: { total: rules.length, limit: used.limit, plan: used.plan, rules: rules.map(ruleView) }, source: 'account', data_as_of: null };
      },
    }),
    statusTool(alerts, 'pause_alert_rule', 'Pause an alert rule', 'paused', 'Returns the rule after pausing it: it is not evaluated until resumed (it still counts against your cap). A rule you do not have is NOT_FOUND.'),
    statusTool(
      alerts,
      'resume_alert_rule',
      'Resume an alert rule',
      'active',
      'Returns the rule after resuming it: it is evaluated at once and then on schedule; what happened while it was paused is still seen where the kind keeps a mark (whale rules scan on from their last block).',
    ),
    defineTool({
      name: 'delete_alert_rule',
      accountBound: true,
      openWorld: false,
      title: 'Delete an alert rule',
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
      description: 'Deletes an alert rule (its alerts stay in the feed with rule_id null); a rule you do not have is NOT_FOUND.',
      input: ruleId,
      output: z.object({ deleted: z.literal(true), rule_id: z.string() }),
      credits: 0,
      handler: async (args, ctx) => {
        if (!(await alerts.remove(ctx.account.id, args.rule_id))) throw new ApiError('NOT_FOUND', 'You have no alert rule with that id.', { rule_id: args.rule_id });
        return { data: { deleted: true as const, rule_id: args.rule_id }, source: 'account', data_as_of: null };
      },
    }),
    defineTool({
      name: 'get_alerts',
      accountBound: true,
      openWorld: false,
      title: 'Get alerts',
      description:
        'Returns the alerts your rules fired after `cursor`, oldest first, each with what happened (prices, USD amounts, the transaction, mention counts) and its cursor; pass next_cursor back to continue. The feed only grows and a cursor never skips an alert. A call that returns no alert is free.',
      input: z
        .object({
          cursor: z.number().int().min(0).default(0).describe('The last cursor you have seen (0: from the start).'),
          limit: z.number().int().min(1).max(100).default(20).describe('Alerts per call.'),
        })
        .strict(),
      output: z.object({ alerts: z.array(alertOutput), next_cursor: z.number().int().describe('Pass this as cursor next time (the same cursor when nothing came).'), more: z.boolean() }),
      credits: 1,
      handler: async (args, ctx) => {
        const page = await alerts.since(ctx.account.id, args.cursor, args.limit + 1);
        const shown = page.slice(0, args.limit);
        return {
          data: {
            alerts: shown.map((a) => ({ cursor: a.id, rule_id: a.rule_id, kind: a.kind, event_id: a.event_id, title: a.title, fired_at: a.fired_at, data: a.data })),
            next_cursor: shown.at(-1)?.id ?? args.cursor,
            more: page.length > args.limit,
          },
          source: 'account',
          data_as_of: null,
          empty: shown.length === 0,
        };
      },
    }),
  ];
}
