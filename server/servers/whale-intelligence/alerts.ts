// Whale alert rules: create_whale_alert, and the evaluator the alert job runs for them. A rule
// fires on a native or ERC-20 transfer worth at least min_usd that moves to or from a labelled
// exchange, or to or from one of your watched addresses (your watchlist, so every watch_address
// is a rule of this kind), or a given address. Each rule keeps the last block it covered: every
// pass scans on from there (one scan per chain for all rules), so nothing is missed or fired twice.
import { getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';
import type { AlertRule, FiredEvent, RuleEvaluator, RuleOutcome } from '../../alerts/types.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/types.ts';
import { ALERT_TERMS, alertManagementTools, alertRuleFields, createdOutput, createRule } from '../common/alert-tools.ts';
import type { ServerDeps } from '../deps.ts';
import { assetFacts, direction, headBlock, labeller, labelView, pricedTokens, scanNative, scanTransfers, units, usd, WHALE_MAX_BLOCKS, type Movement } from './scan.ts';

interface WhaleParams {
  chain: EvmNetwork;
  min_usd: number;
  match: 'exchange' | 'watchlist' | 'address';
  direction: 'to' | 'from' | 'either';
  address?: string;
}

const input = z
  .object({
    chain: z.enum(EVM_NETWORKS).describe('ethereum, base, polygon or bsc (EVM chains: transfers are read block by block).'),
    min_usd: z.number().positive().max(1e12).describe('Fire on a transfer worth at least this many USD (must be positive).'),
    match: z
      .enum(['exchange', 'watchlist', 'address'])
      .default('exchange')
      .describe('exchange: to or from an address labelled as an exchange; watchlist: to or from an address on your watchlist (watch_address); address: to or from `address`.'),
    direction: z.enum(['to', 'from', 'either']).default('either').describe('to: into the exchange / watched address; from: out of it; either.'),
    address: z.string().trim().optional().describe('With match "address": a 0x address.'),
    ...alertRuleFields,
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.match === 'address' && (a.address === undefined || !isAddress(a.address, { strict: false }))) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: 'match "address" needs a 0x-prefixed 20-byte hex address' });
    }
    if (a.match !== 'address' && a.address !== undefined) ctx.addIssue({ code: 'custom', path: ['address'], message: 'only with match "address"' });
  });

export function whaleAlertTools(deps: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'create_whale_alert',
      accountBound: true,
      title: 'Create a whale alert',
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
      description: `Returns a new whale alert rule: it fires on each native or ERC-20 transfer worth at least min_usd (at the market price) that moves to or from a labelled exchange, a watched address or a given address, from the current block on; checked about every minute. ${ALERT_TERMS}`,
      input,
      output: createdOutput,
      credits: 2,
      handler: async (args, ctx) => {
        const head = await headBlock(deps.evm.client(args.chain), args.chain);
        const params: WhaleParams = { chain: args.chain, min_usd: args.min_usd, match: args.match, direction: args.direction, ...(args.address ? { address: getAddress(args.address) } : {}) };
        const data = await createRule(deps.alerts, ctx, { kind: 'whale', server: 'whale-intelligence', params: { ...params }, state: { mark: head }, note: args.note, webhook_url: args.webhook_url });
        return { data, source: `rpc:${args.chain}`, data_as_of: null };
      },
    }),
    ...alertManagementTools(deps.alerts),
  ];
}

/** Whether a movement concerns the rule's side (exchange, watched set or address) in its direction. */
function matches(p: WhaleParams, from: { exchange: boolean; party: boolean }, to: { exchange: boolean; party: boolean }): boolean {
  const side = (s: { exchange: boolean; party: boolean }) => (p.match === 'exchange' ? s.exchange : s.party);
  if (p.direction === 'to') return side(to);
  if (p.direction === 'from') return side(from);
  return side(to) || side(from);
}

export function whaleEvaluator(deps: ServerDeps): RuleEvaluator {
  return async (rules, signal) => {
    const out: Awaited<ReturnType<RuleEvaluator>> = [];
    for (const [chain, group] of Map.groupBy(rules, (r) => (r.params as unknown as WhaleParams).chain)) {
      try {
        out.push(...(await evaluateChain(deps, chain, group, signal)));
      } catch (err) {
        for (const r of group) out.push({ rule_id: r.id, error: `${chain}: ${(err as Error).message}` });
      }
    }
    return out;
  };
}

async function evaluateChain(deps: ServerDeps, network: EvmNetwork, rules: readonly AlertRule[], signal: AbortSignal): Promise<RuleOutcome[]> {
  const client = deps.evm.client(network);
  const head = await headBlock(client, network);
  const markOf = (r: AlertRule) => (typeof r.state.mark === 'number' ? r.state.mark : head);
  const from = Math.min(...rules.map(markOf)) + 1;
  const to = Math.min(head, from + WHALE_MAX_BLOCKS - 1);
  if (from > to) return rules.map((r) => ({ rule_id: r.id, fired: [], state: { mark: markOf(r) } }));
  const span = { from, to };
  const [native, logs] = await Promise.all([scanNative(client, network, span, () => true, signal), scanTransfers(client, network, span, { token: pricedTokens(deps, network) })]);
  const moved: Movement[] = [...native.movements, ...logs];
  const facts = await assetFacts(deps, network, moved.map((m) => m.token), signal);
  const labelOf = labeller(deps.labels, network);
  // The watched addresses of each account with a watchlist rule, read once per account.
  const watched = new Map<string, Set<Address>>();
  for (const r of rules) {
    if ((r.params as unknown as WhaleParams).match !== 'watchlist' || watched.has(r.account_id)) continue;
    const list = await deps.watches.list(r.account_id, network);
    watched.set(r.account_id, new Set(list.map((w) => getAddress(w.address))));
  }
  return rules.map((r) => {
    const p = r.params as unknown as WhaleParams;
    const mark = markOf(r);
    const parties = p.match === 'watchlist' ? (watched.get(r.account_id) ?? new Set<Address>()) : new Set<Address>(p.address ? [getAddress(p.address)] : []);
    const fired: FiredEvent[] = [];
    for (const m of moved) {
      if (m.block <= mark) continue;
      const f = facts.get(m.token)!;
      const value = usd(m.value, f);
      if (value === null || value < p.min_usd) continue;
      const fromLabel = labelOf(m.from);
      const toLabel = labelOf(m.to);
      const dir = direction(fromLabel, toLabel);
      const fromSide = { exchange: fromLabel?.kind === 'exchange', party: parties.has(m.from) };
      const toSide = { exchange: toLabel?.kind === 'exchange', party: parties.has(m.to) };
      if (p.match === 'exchange' && dir === 'within_exchange') continue;
      if (!matches(p, fromSide, toSide)) continue;
      fired.push({
        event_id: `${network}:${m.tx_hash}:${m.token === null ? 'tx' : 'log'}:${m.position}`,
        title: `${units(m.value, f) ?? m.value.toString()} ${f.symbol ?? 'tokens'} (${value.toLocaleString('en-US', { style: 'currency', currency: 'USD' })}) ${dir === 'none' ? 'moved' : dir.replace('_', ' ')} on ${network}`,
        data: {
          chain: network,
          block: m.block,
          tx_hash: m.tx_hash,
          asset: f.symbol,
          token: m.token,
          amount: units(m.value, f),
          amount_raw: m.value.toString(),
          usd: value,
          price: f.quote ? { usd: f.quote.price_usd, source: f.quote.source, as_of: f.quote.as_of } : null,
          from: m.from,
          to: m.to,
          from_label: labelView(fromLabel),
          to_label: labelView(toLabel),
          direction: dir,
        },
      });
    }
    return { rule_id: r.id, fired, state: { mark: Math.max(mark, to) } };
  });
}
