// Does this transaction pay this order? Read from the chain by RPC (issue 21): the right token,
// the treasury as recipient, at least the amount, success, enough confirmations, and who sent it.
// Outcomes are values; an unreachable node is a thrown fault (the caller answers 503 and retries).
import type { PublicClient } from 'viem';
import { TransactionReceiptNotFoundError } from 'viem';
import type { PaymentChain } from '../config.ts';
import type { SolanaRpc } from '../providers/solana/live.ts';
import { ProviderError } from '../errors.ts';

/** What an order asks to receive. */
export interface Expected {
  token: string;
  treasury: string;
  /** Token base units. */
  amount: bigint;
}

export type Verdict =
  | { ok: true; payer: string; received: bigint; confirmations: number }
  | { ok: false; kind: 'unconfirmed'; confirmations: number; required: number }
  | { ok: false; kind: 'mismatch'; field: 'token' | 'recipient' | 'amount' | 'status'; expected: string; found: string | null }
  | { ok: false; kind: 'not_linked'; senders: string[] };

export interface ChainVerifier {
  /** A well-formed transaction id on this chain (a 0x hash, or a base58 signature). */
  wellFormed(hash: string): boolean;
  verify(hash: string, expected: Expected, linked: ReadonlySet<string>): Promise<Verdict>;
}

/** Thrown when the chain's node cannot be reached (answered as 503; verification resumes later). */
export class ChainUnavailableError extends Error {
  readonly chain: string;
  constructor(chain: string, cause: unknown) {
    super(`${chain} RPC unavailable`, { cause });
    this.name = 'ChainUnavailableError';
    this.chain = chain;
  }
}

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const topicAddress = (topic: string | undefined) => (topic ? `0x${topic.slice(-40)}`.toLowerCase() : '');

export function evmVerifier(chain: PaymentChain, client: PublicClient): ChainVerifier {
  return {
    wellFormed: (hash) => /^0x[0-9a-fA-F]{64}$/.test(hash),
    async verify(hash, expected, linked) {
      let receipt;
      let head: bigint;
      try {
        receipt = await client.getTransactionReceipt({ hash: hash as `0x${string}` });
        head = await client.getBlockNumber({ cacheTime: 0 });
      } catch (err) {
        // Not mined yet, or mined on a branch that a reorg dropped: not confirmed, nothing credited.
        if (err instanceof TransactionReceiptNotFoundError) return { ok: false, kind: 'unconfirmed', confirmations: 0, required: chain.confirmations };
        throw new ChainUnavailableError(chain.chain, err);
      }
      if (receipt.status !== 'success') return { ok: false, kind: 'mismatch', field: 'status', expected: 'success', found: receipt.status };
      const transfers = receipt.logs
        .filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3)
        .map((l) => ({ token: l.address.toLowerCase(), from: topicAddress(l.topics[1]), to: topicAddress(l.topics[2]), value: BigInt(l.data) }));
      const ofToken = transfers.filter((t) => t.token === expected.token);
      if (ofToken.length === 0) return { ok: false, kind: 'mismatch', field: 'token', expected: expected.token, found: transfers[0]?.token ?? null };
      const toTreasury = ofToken.filter((t) => t.to === expected.treasury);
      if (toTreasury.length === 0) return { ok: false, kind: 'mismatch', field: 'recipient', expected: expected.treasury, found: ofToken[0]!.to };
      const fromLinked = toTreasury.filter((t) => linked.has(t.from));
      if (fromLinked.length === 0) return { ok: false, kind: 'not_linked', senders: [...new Set(toTreasury.map((t) => t.from))] };
      const received = fromLinked.reduce((sum, t) => sum + t.value, 0n);
      if (received < expected.amount) return { ok: false, kind: 'mismatch', field: 'amount', expected: expected.amount.toString(), found: received.toString() };
      const confirmations = Number(head - receipt.blockNumber + 1n);
      if (confirmations < chain.confirmations) return { ok: false, kind: 'unconfirmed', confirmations: Math.max(0, confirmations), required: chain.confirmations };
      return { ok: true, payer: fromLinked[0]!.from, received, confirmations };
    },
  };
}

/**
 * Solana: the signature's status (getSignatureStatuses: finalized, or confirmed with enough
 * confirmations; an `err` is a failed transaction) and the parsed transaction's token balance
 * changes (getTransaction jsonParsed, pre/postTokenBalances): the treasury's owner gains at least
 * the amount of the order's mint, and the owner whose balance of that mint fell is the sender.
 */
export function solanaVerifier(chain: PaymentChain, rpc: SolanaRpc): ChainVerifier {
  return {
    wellFormed: (hash) => /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(hash),
    async verify(hash, expected, linked) {
      try {
        const status = await rpc.signatureStatus(hash);
        if (!status) return { ok: false, kind: 'unconfirmed', confirmations: 0, required: chain.confirmations };
        if (status.err !== null) return { ok: false, kind: 'mismatch', field: 'status', expected: 'success', found: 'failed' };
        const finalized = status.confirmationStatus === 'finalized';
        const confirmations = finalized ? chain.confirmations : (status.confirmations ?? 0);
        if (!finalized && confirmations < chain.confirmations) return { ok: false, kind: 'unconfirmed', confirmations, required: chain.confirmations };
        const tx = await rpc.transaction(hash);
        if (tx.status !== 'success') return { ok: false, kind: 'mismatch', field: 'status', expected: 'success', found: 'failed' };
        const ofMint = tx.token_changes.filter((c) => c.mint === expected.token);
        const gains = ofMint.filter((c) => BigInt(c.change) > 0n);
        if (gains.length === 0) {
          const other = tx.token_changes.find((c) => BigInt(c.change) > 0n);
          return { ok: false, kind: 'mismatch', field: 'token', expected: expected.token, found: other?.mint ?? null };
        }
        const toTreasury = gains.find((c) => c.owner === expected.treasury);
        if (!toTreasury) return { ok: false, kind: 'mismatch', field: 'recipient', expected: expected.treasury, found: gains[0]!.owner };
        const senders = ofMint.filter((c) => BigInt(c.change) < 0n).map((c) => c.owner ?? '');
        const payer = senders.find((s) => linked.has(s));
        if (!payer) return { ok: false, kind: 'not_linked', senders };
        const received = BigInt(toTreasury.change);
        if (received < expected.amount) return { ok: false, kind: 'mismatch', field: 'amount', expected: expected.amount.toString(), found: received.toString() };
        return { ok: true, payer, received, confirmations };
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'not_found') return { ok: false, kind: 'unconfirmed', confirmations: 0, required: chain.confirmations };
        throw new ChainUnavailableError(chain.chain, err);
      }
    },
  };
}
