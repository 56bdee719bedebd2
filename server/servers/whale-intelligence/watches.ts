// Per-account watchlists: watch_address, list_watches, unwatch_address, get_watch_activity. Each
// watch keeps the last block (Solana: slot) checked; get_watch_activity reports what happened
// after it and moves the mark only once the whole answer is ready, so a failed call leaves the
// marks as they were.
import { formatUnits, getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { hasControlCharacters } from '../../lib/text.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/types.ts';
import type { SolanaTransaction } from '../../providers/solana/live.ts';
import { MAX_WATCHES_PER_ACCOUNT, type Watch, type WatchMark } from '../../watchlists/types.ts';
import { anyChainSchema } from '../common/evm.ts';
import { chainFailureShape, chainShape } from '../common/output-shapes-2.ts';
import { failureOf } from '../common/unavailable.ts';
import type { ServerDeps } from '../deps.ts';
import { assetFacts, headBlock, labeller, labelView, pricesAsOf, pricesUsed, scanNative, scanTransfers, units, usd, WHALE_MAX_BLOCKS, type AssetFacts, type Movement } from './scan.ts';
import { activityRowShape, labelShape, pricesShape, watchShape, type ActivityRow } from './outputs.ts';
import { SOLANA_ADDRESS, solanaMark, solanaMoves, solanaPricing, solanaSince } from './solana-watch.ts';

/**
 * How long one call spends fetching blocks (a third of the default 30 s tool timeout). A watch far
 * behind a busy chain then catches up over several calls instead of timing out on every one.
 */
const WATCH_SCAN_BUDGET_MS = 10_000;

/** Characters of activity rows one answer carries, below the gateway's cap of about 40,000 for the whole result. */
const ACTIVITY_CHARS = 30_000;

/** A chain filter: unlike the chain argument of other tools, absent means every chain. */
const chainFilter = z.enum([...EVM_NETWORKS, 'solana']).optional();

type Chain = EvmNetwork | 'solana';

/** chain + address, the address checked against the chain's format (INVALID_PARAMS naming `address`). */
const target = {
  chain: anyChainSchema,
  address: z.string().trim().max(64).describe('A 0x address (EVM chains) or a base58 address (solana).'),
};
function checkAddress(a: { chain: Chain; address: string }, ctx: z.RefinementCtx): void {
  const ok = a.chain === 'solana' ? SOLANA_ADDRESS.test(a.address) : isAddress(a.address, { strict: false });
  if (!ok) ctx.addIssue({ code: 'custom', path: ['address'], message: a.chain === 'solana' ? 'expected a base58 Solana address' : 'expected a 0x-prefixed 20-byte hex address' });
}
/** How an address is stored: EVM lower-case, Solana as given (base58 is case-sensitive). */
const stored = (chain: Chain, address: string) => (chain === 'solana' ? address : address.toLowerCase());
/** How an address is shown: EVM checksummed. */
const shown = (chain: string, address: string) => (chain === 'solana' ? address : getAddress(address));

const watchView = (w: Watch) => ({
  // The store keeps only chains the tools' schemas accepted.
  chain: w.chain as Chain,
  address: shown(w.chain, w.address),
  note: w.note,
  created_at: w.created_at,
  last_checked_at: w.last_checked_at,
  last_checked_block: w.last_checked_block,
});

export function watchTools(deps: ServerDeps): ToolDefinition[] {
  const { watches } = deps;
  return [
    defineTool({
      name: 'watch_address',
      accountBound: true,
      title: 'Watch an address',
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
      openWorld: false,
      description: `Adds an address to your account's watchlist (at most ${MAX_WATCHES_PER_ACCOUNT}, on EVM chains or Solana); get_watch_activity then reports its transfers from now on. Watching an address again keeps its mark and only replaces the note.`,
      input: z.object({ ...target, note: z.string().trim().max(200).refine((s) => !hasControlCharacters(s, 'text'), 'contains a control character other than tab or a line break').optional().describe('Your note, up to 200 characters.') }).strict().superRefine(checkAddress),
      output: z.object({ created: z.boolean().describe('false: it was watched already.'), watch: watchShape, label: labelShape, limit: z.number().int() }),
      credits: 1,
      handler: async (args, ctx) => {
        const chain = args.chain;
        // The mark starts now: the head block, or on Solana the slot of the address's newest transaction.
        const mark = chain === 'solana' ? await solanaMark(deps, args.address, ctx.signal) : await headBlock(deps.evm.client(chain), chain);
        const outcome = await watches.add(ctx.account.id, { chain, address: stored(chain, args.address), note: args.note, block: mark });
        if (!outcome.ok) {
          throw new ApiError('INVALID_PARAMS', `An account watches at most ${outcome.limit} addresses; unwatch one first.`, {
            issues: [{ path: 'address', message: `watchlist full (${outcome.limit})` }],
            limit: outcome.limit,
          });
        }
        return {
          data: { created: outcome.created, watch: watchView(outcome.watch), label: labelView(deps.labels.get(args.address, chain)), limit: MAX_WATCHES_PER_ACCOUNT },
          source: 'account',
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'list_watches',
      accountBound: true,
      title: 'List watched addresses',
      openWorld: false,
      description: `Returns your account's watched addresses (at most ${MAX_WATCHES_PER_ACCOUNT}) with their labels, notes and the block (Solana: slot) each was last checked at.`,
      input: z.object({ chain: chainFilter.describe('Only this chain (default: all).') }).strict(),
      output: z.object({ total: z.number().int(), limit: z.number().int(), watches: z.array(watchShape.extend({ label: labelShape })) }),
      credits: 0,
      handler: async (args, ctx) => {
        const list = await watches.list(ctx.account.id, args.chain);
        return {
          data: { total: list.length, limit: MAX_WATCHES_PER_ACCOUNT, watches: list.map((w) => ({ ...watchView(w), label: labelView(deps.labels.get(w.address, w.chain)) })) },
          source: 'account',
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'unwatch_address',
      accountBound: true,
      title: 'Stop watching an address',
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
      openWorld: false,
      description: 'Removes an address from your watchlist; an address you do not watch is NOT_FOUND.',
      input: z.object(target).strict().superRefine(checkAddress),
      output: z.object({ removed: z.literal(true), chain: chainShape, address: z.string() }),
      credits: 0,
      handler: async (args, ctx) => {
        const removed = await watches.remove(ctx.account.id, args.chain, stored(args.chain, args.address));
        if (!removed) throw new ApiError('NOT_FOUND', 'You do not watch that address on that chain.', { chain: args.chain, address: args.address });
        return { data: { removed: true as const, chain: args.chain, address: shown(args.chain, args.address) }, source: 'account', data_as_of: null };
      },
    }),
    defineTool({
      name: 'get_watch_activity',
      accountBound: true,
      title: 'Watched address activity',
      description: `Returns what your watched addresses moved since the last check, oldest first (native and ERC-20 transfers on EVM chains, at most ${WHALE_MAX_BLOCKS} blocks per chain per call; SOL and SPL changes on Solana) in whole units and USD, then moves each watch's mark past what it reported; caught_up is false when more remains. A chain whose node fails is listed under unavailable (its marks stay).`,
      input: z
        .object({
          chain: chainFilter.describe('Only watches on this chain (default: all).'),
          limit: z.number().int().min(1).max(50).default(20).describe('Transfers (Solana: transactions) per call, 1-50 so the answer always fits whole; a block or slot is never split.'),
        })
        .strict(),
      output: z.object({
        watches: z.number().int(),
        caught_up: z.boolean(),
        coverage: z.array(
          z.object({
            address: z.string(),
            chain: chainShape,
            unit: z.enum(['block', 'slot']),
            from_block: z.number().int(),
            to_block: z.number().int(),
            caught_up: z.boolean(),
            skipped_older: z.literal(true).optional(),
            note: z.string().optional(),
          }),
        ),
        unavailable: z.array(chainFailureShape.extend({ watches: z.array(z.string()) })).optional(),
        total: z.number().int(),
        activity: z.array(activityRowShape),
        prices: pricesShape,
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const list = await watches.list(ctx.account.id, args.chain);
        const labellers = new Map<EvmNetwork, ReturnType<typeof labeller>>();
        const labelOn = (network: EvmNetwork, address: string) => {
          if (!labellers.has(network)) labellers.set(network, labeller(deps.labels, network));
          return labellers.get(network)!(address);
        };
        const byChain = Map.groupBy(list, (w) => w.chain as Chain);
        /** One thing to report: an EVM movement as one watch sees it, or a Solana transaction of one watch. */
        type Item = { chain: Chain; block: number; position: number; watch: Watch } & ({ kind: 'evm'; m: Movement } | { kind: 'solana'; signature: string });
        const items: Item[] = [];
        const scanned: { watch: Watch; chain: Chain; head: number; from: number; to: number; skipped_older?: boolean }[] = [];
        const allFacts: { network: EvmNetwork; f: AssetFacts }[] = [];
        // Everything is read before anything is written: a chain whose RPC fails moves none of its
        // marks and is listed under `unavailable`; the other chains answer. All failing is an error.
        const deadline = Date.now() + WATCH_SCAN_BUDGET_MS;
        const unavailable: { chain: Chain; code: string; provider: string; watches: string[] }[] = [];
        let firstError: unknown;
        for (const [chain, group] of byChain) {
          const chainItems: Item[] = [];
          const chainScanned: typeof scanned = [];
          const chainFacts: typeof allFacts = [];
          const scanChain = async (): Promise<void> => {
            if (chain === 'solana') {
              const news = await Promise.all(group.map((w) => solanaSince(deps, w.address, w.last_checked_block ?? 0, ctx.signal)));
              group.forEach((w, i) => {
                const n = news[i]!;
                const from = (w.last_checked_block ?? 0) + 1;
                chainScanned.push({ watch: w, chain, head: n.newest, from, to: n.newest, ...(n.complete ? {} : { skipped_older: true }) });
                n.signatures.forEach((sig, k) => chainItems.push({ kind: 'solana', chain, block: sig.slot, position: k, watch: w, signature: sig.signature }));
              });
              return;
            }
            const network = chain;
            const client = deps.evm.client(network);
            const head = await headBlock(client, network);
            // One scan per chain covers every watch, from the oldest mark on, for at most
            // WHALE_MAX_BLOCKS blocks; a watch further ahead waits until the laggard catches up.
            const froms = group.map((w) => (w.last_checked_block ?? head) + 1);
            const spanTo = Math.min(head, Math.min(...froms) + WHALE_MAX_BLOCKS - 1);
            const ranges = group.map((w, i) => ({ watch: w, chain, head, from: froms[i]!, to: spanTo }));
            chainScanned.push(...ranges);
            const open = ranges.filter((r) => r.from <= r.to);
            if (open.length === 0) return;
            const span = { from: Math.min(...open.map((r) => r.from)), to: spanTo };
            const parties = new Map(open.map((r) => [getAddress(r.watch.address), r]));
            const inRange = (a: Address, block: number) => {
              const r = parties.get(a);
              return r !== undefined && block >= r.from && block <= r.to;
            };
            const [native, logs] = await Promise.all([
              scanNative(client, network, span, (m) => inRange(m.from, m.block) || inRange(m.to, m.block), ctx.signal, { stopAt: deadline }),
              scanTransfers(client, network, span, { parties: [...parties.keys()] }),
            ]);
            // The block scan may stop early (its time budget): everything then ends where it did.
            for (const r of ranges) r.to = Math.min(r.to, native.to);
            const moved = [...native.movements, ...logs.filter((m) => m.block <= native.to)];
            for (const m of moved) {
              // One movement between two watched addresses is news for each of them.
              for (const side of new Set([m.from, m.to])) {
                if (inRange(side, m.block)) chainItems.push({ kind: 'evm', chain, block: m.block, position: m.position, watch: parties.get(side)!.watch, m });
              }
            }
            const facts = await assetFacts(deps, network, moved.map((m) => m.token), ctx.signal);
            chainFacts.push(...[...facts.values()].map((f) => ({ network, f })));
          };
          try {
            await scanChain();
            items.push(...chainItems);
            scanned.push(...chainScanned);
            allFacts.push(...chainFacts);
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            firstError ??= err;
            unavailable.push({ chain, ...failureOf(err, chain), watches: group.map((w) => shown(chain, w.address)) });
          }
        }
        if (unavailable.length > 0 && unavailable.length === byChain.size) throw firstError;
        items.sort((a, b) => a.chain.localeCompare(b.chain) || a.block - b.block || a.position - b.position);

        // Cut after `limit` items at a block (slot) boundary: a block is never split, so one block
        // with more than the limit comes whole; marks then stop before the cut block.
        const before = (a: { chain: string; block: number }, b: { chain: string; block: number }) => a.chain < b.chain || (a.chain === b.chain && a.block < b.block);
        let cut: { chain: Chain; block: number } | undefined;
        if (items.length > args.limit) {
          const first = items[0]!;
          const atLimit = items[args.limit]!;
          cut = before(first, atLimit) ? atLimit : items.find((e) => before(first, e));
        }
        const limitCut = cut;
        let reported = limitCut ? items.filter((e) => before(e, limitCut)) : items;

        // Solana transactions are read in full only for what is reported.
        const solanaItems = reported.filter((e): e is Item & { kind: 'solana' } => e.kind === 'solana');
        const txs = new Map<string, SolanaTransaction>();
        await Promise.all([...new Set(solanaItems.map((e) => e.signature))].map(async (sig) => txs.set(sig, await deps.solana.transaction(sig, ctx.signal))));
        const solanaRows = solanaItems.flatMap((e) => solanaMoves(txs.get(e.signature)!, e.watch.address).map((move) => ({ e, move })));
        const solPrices = await solanaPricing(deps, solanaRows.map((r) => r.move.mint), ctx.signal);

        const factsOf = (network: EvmNetwork, token: Address | null) => allFacts.find((x) => x.network === network && x.f.token === token)!.f;
        const rowsOf = (e: Item): ActivityRow[] => {
          if (e.kind === 'solana') {
            return solanaRows
              .filter((r) => r.e === e)
              .map(({ move }) => {
                const abs = move.change < 0n ? -move.change : move.change;
                return {
                  chain: e.chain,
                  watched: e.watch.address,
                  watched_label: null,
                  direction: move.change > 0n ? 'in' : 'out',
                  block: e.block,
                  tx_hash: e.signature,
                  asset: solPrices.symbol(move.mint),
                  token: move.mint,
                  amount: formatUnits(abs, move.decimals),
                  amount_raw: abs.toString(),
                  usd: solPrices.usd(move),
                  counterparty: move.counterparty,
                  counterparty_label: null,
                };
              });
          }
          const network = e.chain as EvmNetwork;
          const f = factsOf(network, e.m.token);
          const self = getAddress(e.watch.address);
          const incoming = e.m.to === self;
          const counterparty = incoming ? e.m.from : e.m.to;
          return [
            {
              chain: e.chain,
              watched: self,
              watched_label: labelView(labelOn(network, self)),
              direction: incoming ? 'in' : 'out',
              block: e.block,
              tx_hash: e.m.tx_hash,
              asset: f.symbol,
              token: e.m.token,
              amount: units(e.m.value, f),
              amount_raw: e.m.value.toString(),
              usd: usd(e.m.value, f),
              counterparty,
              counterparty_label: labelView(labelOn(network, counterparty)),
            },
          ];
        };

        // The answer must fit the gateway's result cap whole: a cut answer would lose rows the
        // marks already passed. Whole blocks (slots) are left for the next call until it fits; a
        // Solana transaction can yield several rows (SOL and each token), so the limit alone is not enough.
        // Each item's rows and their size are built once; dropping a block subtracts its size.
        const built = new Map(reported.map((e) => {
          const rows = rowsOf(e);
          return [e, { rows, chars: rows.reduce((m, r) => m + JSON.stringify(r).length + 1, 0) }] as const;
        }));
        let chars = reported.reduce((n, e) => n + built.get(e)!.chars, 0);
        while (chars > ACTIVITY_CHARS) {
          const last = reported[reported.length - 1]!;
          const start = reported.find((e) => e.chain === last.chain && e.block === last.block)!;
          if (start === reported[0]) break; // one block: it comes whole
          cut = start;
          for (const e of reported) if (!before(e, start)) chars -= built.get(e)!.chars;
          reported = reported.filter((e) => before(e, start));
        }

        const marks: WatchMark[] = [];
        const coverage = scanned.map((s) => {
          let to = s.to;
          if (cut && s.chain === cut.chain) to = Math.min(s.to, cut.block - 1);
          else if (cut && s.chain > cut.chain) to = s.from - 1;
          if (to >= s.from) marks.push({ id: s.watch.id, expected: s.watch.last_checked_block, to });
          const reached = Math.max(to, s.from - 1);
          return {
            address: shown(s.chain, s.watch.address),
            chain: s.chain,
            unit: s.chain === 'solana' ? ('slot' as const) : ('block' as const),
            from_block: s.from,
            to_block: reached,
            caught_up: reached >= s.head,
            ...(s.skipped_older ? { skipped_older: true as const, note: 'more new transactions than one call reads; the oldest of them were skipped' } : {}),
          };
        });
        if (ctx.signal.aborted) throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: 'tool' });
        await watches.advance(ctx.account.id, marks);

        const activity = reported.flatMap((e) => built.get(e)!.rows);
        const evmAsOf = pricesAsOf(allFacts.map((x) => x.f));
        const solAsOf = solPrices.quotes.map((q) => q.as_of).sort()[0] ?? null;
        return {
          data: {
            watches: list.length,
            caught_up: unavailable.length === 0 && coverage.every((c) => c.caught_up),
            coverage,
            ...(unavailable.length ? { unavailable } : {}),
            total: activity.length,
            activity,
            prices: [...pricesUsed(allFacts.map((x) => x.f)), ...solPrices.quotes.filter((q) => !allFacts.some((x) => x.f.quote?.asset_id === q.asset_id))],
          },
          source: list.length ? [...byChain.keys()].map((c) => (c === 'solana' ? 'rpc:solana' : `rpc:${c}`)).join(',') : 'account',
          data_as_of: [evmAsOf, solAsOf].filter((d): d is string => d !== null).sort()[0] ?? null,
          // Nothing moved (or nothing is watched): the scan found no news, which is free.
          empty: activity.length === 0,
        };
      },
    }),
  ];
}
