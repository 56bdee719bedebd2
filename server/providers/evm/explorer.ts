// An Etherscan-style block-explorer API (Etherscan API v2: one base URL for every chain, chosen
// by `chainid`; https://docs.etherscan.io/etherscan-v2). It answers what JSON-RPC cannot cheaply:
// an address's transaction history and its first and last activity. Optional: without an API
// key the tools say so and fall back to what a node can answer.
// Answers are {status: "1"|"0", message, result}; "0" with "No transactions found" is an empty
// list, any other "0" is an error whose text is in `result` (e.g. "Invalid API Key",
// "Max rate limit reached").
import { z } from 'zod';
import { getJson } from '../http.ts';
import { ProviderError } from '../../errors.ts';
import type { EvmNetwork } from './chains.ts';

const PROVIDER = 'explorer';
export const CHAIN_IDS: Record<EvmNetwork, number> = { ethereum: 1, base: 8453, polygon: 137, bsc: 56 };

const envelope = z.object({ status: z.string(), message: z.string(), result: z.unknown() });
const txSchema = z.object({
  blockNumber: z.string(),
  timeStamp: z.string(),
  hash: z.string(),
  nonce: z.string(),
  from: z.string(),
  to: z.string(),
  value: z.string(),
  gas: z.string(),
  gasPrice: z.string(),
  gasUsed: z.string(),
  isError: z.string(),
  input: z.string(),
  contractAddress: z.string().optional(),
  functionName: z.string().optional(),
});

export interface ExplorerTransaction {
  hash: string;
  block: number;
  timestamp: string;
  from: string;
  /** Null for a contract creation. */
  to: string | null;
  value_wei: string;
  fee_wei: string;
  status: 'success' | 'failed';
  /** The 4-byte selector of the call, or null for a plain transfer. */
  method_id: string | null;
  function_name: string | null;
  created_contract: string | null;
}

export interface ExplorerOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  retries?: number;
  /** All attempts and waits of one call together (GetJsonOptions.deadlineMs). */
  deadlineMs?: number;
}

export class ExplorerApi {
  readonly #opts: ExplorerOptions;
  constructor(opts: ExplorerOptions) {
    this.#opts = opts;
  }

  async #get(network: EvmNetwork, params: Record<string, string | number>, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(this.#opts.baseUrl);
    url.searchParams.set('chainid', String(CHAIN_IDS[network]));
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
    url.searchParams.set('apikey', this.#opts.apiKey);
    const body = envelope.safeParse(await getJson(url.toString(), { provider: PROVIDER, timeoutMs: this.#opts.timeoutMs, retries: this.#opts.retries, deadlineMs: this.#opts.deadlineMs, signal }));
    if (!body.success) throw new ProviderError(PROVIDER, 'error', 'the explorer answered in an unexpected shape');
    const { status, message, result } = body.data;
    if (status === '1') return result;
    if (/no transactions found|no records found/i.test(message)) return [];
    const text = typeof result === 'string' ? result : message;
    throw new ProviderError(PROVIDER, /rate limit/i.test(text) ? 'rate_limited' : 'error', `explorer: ${text}`);
  }

  /**
   * One page of an address's normal transactions, newest first. The explorer caps page × offset
   * at 10,000 results; callers page with the block bound instead when they need more.
   */
  async transactions(
    network: EvmNetwork,
    address: string,
    opts: { page: number; pageSize: number; sort: 'asc' | 'desc'; startBlock?: number; endBlock?: number },
    signal?: AbortSignal,
  ): Promise<ExplorerTransaction[]> {
    const result = await this.#get(
      network,
      {
        module: 'account',
        action: 'txlist',
        address,
        startblock: opts.startBlock ?? 0,
        endblock: opts.endBlock ?? 99_999_999,
        page: opts.page,
        offset: opts.pageSize,
        sort: opts.sort,
      },
      signal,
    );
    const rows = z.array(txSchema).safeParse(result);
    if (!rows.success) throw new ProviderError(PROVIDER, 'error', 'the explorer answered txlist in an unexpected shape');
    return rows.data.map((t) => ({
      hash: t.hash,
      block: Number(t.blockNumber),
      timestamp: new Date(Number(t.timeStamp) * 1000).toISOString(),
      from: t.from,
      to: t.to === '' ? null : t.to,
      value_wei: t.value,
      fee_wei: (BigInt(t.gasUsed) * BigInt(t.gasPrice)).toString(),
      status: t.isError === '1' ? 'failed' : 'success',
      method_id: t.input.length >= 10 ? t.input.slice(0, 10) : null,
      function_name: t.functionName ? t.functionName : null,
      created_contract: t.contractAddress ? t.contractAddress : null,
    }));
  }

  /** First and last activity of an address (two one-row txlist queries). */
  async activity(network: EvmNetwork, address: string, signal?: AbortSignal): Promise<{ first: ExplorerTransaction | null; last: ExplorerTransaction | null }> {
    const [first, last] = await Promise.all([
      this.transactions(network, address, { page: 1, pageSize: 1, sort: 'asc' }, signal),
      this.transactions(network, address, { page: 1, pageSize: 1, sort: 'desc' }, signal),
    ]);
    return { first: first[0] ?? null, last: last[0] ?? null };
  }
}
