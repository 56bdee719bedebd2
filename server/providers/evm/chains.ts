// EVM chain access: one viem public client per network, over HTTP JSON-RPC with request batching
// (concurrent calls share one HTTP request), timeouts and retries. RPC URLs come from
// configuration; the defaults are public endpoints.
import { createPublicClient, http, TimeoutError, type PublicClient, type Transport } from 'viem';
import { base, bsc, mainnet, polygon } from 'viem/chains';
import { observedFetch } from '../http.ts';

import type { EvmNetwork } from './types.ts';

export { DEFAULT_RPC_URLS, EVM_NETWORKS, type EvmNetwork } from './types.ts';

const CHAINS = { ethereum: mainnet, base, polygon, bsc } as const;

export interface EvmOptions {
  rpcUrls: Record<EvmNetwork, string>;
  /** Per attempt. */
  timeoutMs: number;
  retries: number;
  /** One request, all attempts and waits together; past it the request fails as a timeout. Default: unbounded. */
  deadlineMs?: number;
}

/**
 * The transport with a deadline over all of one request's attempts: viem's own timeout is per
 * attempt, so a node that never answers would otherwise hold a call for (retries + 1) timeouts.
 */
function withDeadline(transport: Transport, deadlineMs: number | undefined, url: string): Transport {
  if (deadlineMs === undefined) return transport;
  return (params) => {
    const t = transport(params);
    const request = ((args, options) => {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError({ body: { method: args.method }, url })), deadlineMs);
      });
      return Promise.race([t.request(args, options), expired]).finally(() => clearTimeout(timer));
    }) as typeof t.request;
    return { ...t, request };
  };
}

export interface EvmClients {
  client(network: EvmNetwork): PublicClient;
  rpcUrl(network: EvmNetwork): string;
}

export function createEvmClients(opts: EvmOptions): EvmClients {
  const clients = new Map<EvmNetwork, PublicClient>();
  return {
    rpcUrl: (network) => opts.rpcUrls[network],
    client(network) {
      let c = clients.get(network);
      if (!c) {
        // The chain's id is not assumed: a devnet or fork answers with its own, and viem reads it
        // from the node when asked. The chain object supplies formatters and the native currency.
        c = createPublicClient({
          chain: CHAINS[network],
          // viem would otherwise reuse eth_blockNumber answers for 4 s (its polling interval):
          // a tool asked for "up to the latest block" must see the block mined a second ago.
          cacheTime: 0,
          // observedFetch: every JSON-RPC request is counted and traced under provider evm:<network>.
          transport: withDeadline(
            http(opts.rpcUrls[network], {
              batch: { wait: 0 },
              timeout: opts.timeoutMs,
              retryCount: opts.retries,
              fetchFn: observedFetch(`evm:${network}`),
            }),
            opts.deadlineMs,
            opts.rpcUrls[network],
          ),
        }) as PublicClient;
        clients.set(network, c);
      }
      return c;
    },
  };
}
