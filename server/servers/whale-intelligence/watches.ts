// Per-account watchlists: watch_address, list_watches, unwatch_address, get_watch_activity. Each
// watch keeps the last block checked; get_watch_activity reports what happened after it and
// moves the mark only once the whole answer is ready, so a failed call leaves the marks as they were.
import { getAddress, type Address } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/chains.ts';
import { MAX_WATCHES_PER_ACCOUNT, type Watch, type WatchMark } from '../../watchlists/store.ts';
import { addressSchema, chainSchema, evmNetwork } from '../common/evm.ts';
import type { ServerDeps } from '../deps.ts';
import { assetFacts, headBlock, labeller, labelView, pricesAsOf, pricesUsed, scanNative, scanTransfers, units, usd, WHALE_MAX_BLOCKS, type AssetFacts, type Movement } from './scan.ts';

/**
 * How long one call spends fetching blocks (a third of the default 30 s tool timeout). A watch far
 * behind a busy chain then catches up over several calls instead of timing out on every one.
 */
const WATCH_SCAN_BUDGET_MS = 10_000;

/** A chain filter: unlike the chain argument of other tools, absent means every chain. */
const chainFilter = z.enum([...EVM_NETWORKS, 'solana']).optional();

const watchView = (w: Watch) => ({
  chain: w.chain,
  address: getAddress(w.address),
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
      description: `Adds an address to your account's watchlist (at most ${MAX_WATCHES_PER_ACCOUNT}); get_watch_activity then reports its transfers after the current block. Watching an address again keeps its mark and only replaces the note.`,
      input: z.object({ chain: chainSchema, address: addressSchema, note: z.string().trim().max(200).optional().describe('Your note, up to 200 characters.') }).strict(),
      credits: 1,
      handler: async (args, ctx) => {
        const network = evmNetwork(args.chain, 'watch_address');
        const head = await headBlock(deps.evm.client(network), network);
        const outcome = await watches.add(ctx.account.id, { chain: network, address: args.address.toLowerCase(), note: args.note, block: head });
        if (!outcome.ok) {
          throw new ApiError('INVALID_PARAMS', `An account watches at most ${outcome.limit} addresses; unwatch one first.`, {
            issues: [{ path: 'address', message: `watchlist full (${outcome.limit})` }],
            limit: outcome.limit,
          });
        }
        const label = deps.labels.get(args.address, network);
        return {
          data: { created: outcome.created, watch: watchView(outcome.watch), label: labelView(label), limit: MAX_WATCHES_PER_ACCOUNT },
          source: 'account',
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'list_watches',
      description: `Returns your account's watched addresses (at most ${MAX_WATCHES_PER_ACCOUNT}) with their labels, notes and the block each was last checked at.`,
      input: z.object({ chain: chainFilter.describe('Only this chain (default: all).') }).strict(),
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
      description: 'Removes an address from your watchlist; an address you do not watch is NOT_FOUND.',
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      credits: 0,
      handler: async (args, ctx) => {
        const removed = await watches.remove(ctx.account.id, args.chain, args.address.toLowerCase());
        if (!removed) throw new ApiError('NOT_FOUND', 'You do not watch that address on that chain.', { chain: args.chain, address: args.address });
        return { data: { removed: true, chain: args.chain, address: getAddress(args.address) }, source: 'account', data_as_of: null };
      },
    }),
    defineTool({
      name: 'get_watch_activity',
      description: `Returns the native and ERC-20 transfers of your watched addresses since the last check (at most ${WHALE_MAX_BLOCKS} blocks per chain per call), oldest first, labelled, then moves each watch's mark past what it reported; caught_up is false when more remains.`,
      input: z.object({ chain: chainFilter.describe('Only watches on this chain (default: all).'), limit: z.number().int().min(1).max(50).default(20).describe('Transfers per call (1-50, so the answer always fits whole); a block is never split.') }).strict(),
      credits: 2,
      handler: async (args, ctx) => {
        const list = (await watches.list(ctx.account.id, args.chain)).filter((w): w is Watch & { chain: EvmNetwork } => w.chain !== 'solana');
        const labellers = new Map<EvmNetwork, ReturnType<typeof labeller>>();
        const labelOn = (network: EvmNetwork, address: string) => {
          if (!labellers.has(network)) labellers.set(network, labeller(deps.labels, network));
          return labellers.get(network)!(address);
        };
        const byChain = Map.groupBy(list, (w) => w.chain);
        const events: (Movement & { chain: EvmNetwork; watch: Watch })[] = [];
        const scanned: { watch: Watch; chain: EvmNetwork; head: number; from: number; to: number }[] = [];
        const allFacts: { network: EvmNetwork; f: AssetFacts }[] = [];
        // Everything is read before anything is written: an RPC failure leaves every mark as it was.
        const deadline = Date.now() + WATCH_SCAN_BUDGET_MS;
        for (const [network, group] of byChain) {
          const client = deps.evm.client(network);
          const head = await headBlock(client, network);
          // One scan per chain covers every watch, from the oldest mark on, for at most
          // WHALE_MAX_BLOCKS blocks; a watch further ahead waits until the laggard catches up.
          const froms = group.map((w) => (w.last_checked_block ?? head) + 1);
          const spanTo = Math.min(head, Math.min(...froms) + WHALE_MAX_BLOCKS - 1);
          const ranges = group.map((w, i) => ({ watch: w, chain: network, head, from: froms[i]!, to: spanTo }));
          scanned.push(...ranges);
          const open = ranges.filter((r) => r.from <= r.to);
          if (open.length === 0) continue;
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
              if (inRange(side, m.block)) events.push({ ...m, chain: network, watch: parties.get(side)!.watch });
            }
          }
          const facts = await assetFacts(deps, network, moved.map((m) => m.token), ctx.signal);
          allFacts.push(...[...facts.values()].map((f) => ({ network, f })));
        }
        events.sort((a, b) => a.chain.localeCompare(b.chain) || a.block - b.block || a.position - b.position);

        // Cut at a block boundary after `limit` transfers (a block is never split, so one block
        // with more transfers than the limit comes whole); marks then stop before the cut block.
        const before = (a: { chain: string; block: number }, b: { chain: string; block: number }) => a.chain < b.chain || (a.chain === b.chain && a.block < b.block);
        let cut: { chain: EvmNetwork; block: number } | undefined;
        if (events.length > args.limit) {
          const head = events[0]!;
          const atLimit = events[args.limit]!;
          cut = before(head, atLimit) ? atLimit : events.find((e) => before(head, e));
        }
        const reported = cut ? events.filter((e) => before(e, cut)) : events;
        const marks: WatchMark[] = [];
        const coverage = scanned.map((s) => {
          let to = s.to;
          if (cut && s.chain === cut.chain) to = Math.min(s.to, cut.block - 1);
          else if (cut && s.chain > cut.chain) to = s.from - 1;
          if (to >= s.from) marks.push({ id: s.watch.id, expected: s.watch.last_checked_block, to });
          return { address: getAddress(s.watch.address), chain: s.chain, from_block: s.from, to_block: Math.max(to, s.from - 1), caught_up: Math.max(to, s.from - 1) >= s.head };
        });
        if (ctx.signal.aborted) throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: 'tool' });
        await watches.advance(ctx.account.id, marks);

        const factsOf = (network: EvmNetwork, token: Address | null) => allFacts.find((x) => x.network === network && x.f.token === token)!.f;
        return {
          data: {
            watches: list.length,
            caught_up: coverage.every((c) => c.caught_up),
            coverage,
            total: reported.length,
            activity: reported.map((e) => {
              const f = factsOf(e.chain, e.token);
              const self = getAddress(e.watch.address);
              const incoming = e.to === self;
              const counterparty = incoming ? e.from : e.to;
              return {
                chain: e.chain,
                watched: self,
                watched_label: labelView(labelOn(e.chain, self)),
                direction: incoming ? 'in' : 'out',
                block: e.block,
                tx_hash: e.tx_hash,
                asset: f.symbol,
                token: e.token,
                amount: units(e.value, f),
                amount_raw: e.value.toString(),
                usd: usd(e.value, f),
                counterparty,
                counterparty_label: labelView(labelOn(e.chain, counterparty)),
              };
            }),
            prices: pricesUsed(allFacts.map((x) => x.f)),
          },
          source: list.length ? `rpc:${[...byChain.keys()].join(',')}` : 'account',
          data_as_of: pricesAsOf(allFacts.map((x) => x.f)),
        };
      },
    }),
  ];
}
