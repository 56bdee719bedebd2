// Solana over its JSON-RPC (https://solana.com/docs/rpc): SOL balances, SPL token accounts (both
// token programs), signatures for an address, and parsed transactions. Uses the project's one
// HTTP client (timeouts, retries with backoff, Retry-After); JSON-RPC errors become ProviderError.
import { z } from 'zod';
import { getJson } from '../http.ts';
import { ProviderError } from '../../errors.ts';

const TOKEN_PROGRAMS = ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'] as const;
const LAMPORTS_PER_SOL = 1_000_000_000;
const PROVIDER = 'solana';

const rpcEnvelope = z.union([
  z.object({ result: z.unknown() }),
  z.object({ error: z.object({ code: z.number(), message: z.string() }) }),
]);
const tokenAmount = z.object({ amount: z.string(), decimals: z.number(), uiAmountString: z.string().optional() });
const tokenAccountsSchema = z.object({
  value: z.array(
    z.object({
      pubkey: z.string(),
      account: z.object({ data: z.object({ parsed: z.object({ info: z.object({ mint: z.string(), owner: z.string(), tokenAmount }) }) }) }),
    }),
  ),
});
const signaturesSchema = z.array(
  z.object({ signature: z.string(), slot: z.number(), err: z.unknown().nullable(), blockTime: z.number().nullable().optional(), memo: z.string().nullable().optional() }),
);
const tokenBalance = z.object({ accountIndex: z.number(), mint: z.string(), owner: z.string().optional(), uiTokenAmount: tokenAmount });
const transactionSchema = z
  .object({
    slot: z.number(),
    blockTime: z.number().nullable().optional(),
    meta: z.object({
      fee: z.number(),
      err: z.unknown().nullable(),
      preBalances: z.array(z.number()),
      postBalances: z.array(z.number()),
      preTokenBalances: z.array(tokenBalance).optional(),
      postTokenBalances: z.array(tokenBalance).optional(),
    }),
    transaction: z.object({
      signatures: z.array(z.string()),
      message: z.object({ accountKeys: z.array(z.union([z.string(), z.object({ pubkey: z.string(), signer: z.boolean().optional() })])) }),
    }),
  })
  .nullable();

const signatureStatusSchema = z.object({
  slot: z.number(),
  confirmations: z.number().nullable(),
  err: z.unknown().nullable(),
  confirmationStatus: z.enum(['processed', 'confirmed', 'finalized']).nullable().optional(),
});
const signatureStatusesSchema = z.object({ context: z.object({ slot: z.number() }), value: z.array(signatureStatusSchema.nullable()) });
export type SignatureStatus = z.infer<typeof signatureStatusSchema>;

export interface SolanaTokenHolding {
  token_account: string;
  mint: string;
  amount: string;
  decimals: number;
  ui_amount: string;
}

export interface SolanaTransaction {
  signature: string;
  slot: number;
  block_time: string | null;
  status: 'success' | 'failed';
  fee_sol: number;
  signers: string[];
  /** Change of each account's SOL balance (lamports), non-zero ones only. */
  sol_changes: { account: string; lamports: number }[];
  /** Change of each owner's token balance, by mint (smallest unit, decimal string). */
  token_changes: { owner: string | null; mint: string; change: string; decimals: number }[];
}

export class SolanaRpc {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #deadlineMs: number | undefined;
  #id = 0;

  constructor(opts: { url: string; timeoutMs?: number; retries?: number; deadlineMs?: number }) {
    this.#url = opts.url;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#retries = opts.retries ?? 2;
    this.#deadlineMs = opts.deadlineMs;
  }

  async #call<T>(method: string, params: unknown[], schema: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    const raw = await getJson(this.#url, {
      provider: PROVIDER,
      body: { jsonrpc: '2.0', id: ++this.#id, method, params },
      timeoutMs: this.#timeoutMs,
      retries: this.#retries,
      ...(this.#deadlineMs !== undefined ? { deadlineMs: this.#deadlineMs } : {}),
      signal,
    });
    const envelope = rpcEnvelope.safeParse(raw);
    if (!envelope.success) throw new ProviderError(PROVIDER, 'error', `${method}: not a JSON-RPC answer`);
    if ('error' in envelope.data) {
      throw new ProviderError(PROVIDER, 'error', `${method}: ${envelope.data.error.message} (${envelope.data.error.code})`);
    }
    const parsed = schema.safeParse(envelope.data.result);
    if (!parsed.success) throw new ProviderError(PROVIDER, 'error', `${method}: unexpected result shape`);
    return parsed.data;
  }

  /** SOL balance in lamports and SOL. */
  async balance(address: string, signal?: AbortSignal): Promise<{ lamports: number; sol: number; slot: number }> {
    const r = await this.#call('getBalance', [address, { commitment: 'confirmed' }], z.object({ context: z.object({ slot: z.number() }), value: z.number() }), signal);
    return { lamports: r.value, sol: r.value / LAMPORTS_PER_SOL, slot: r.context.slot };
  }

  /** SPL token accounts of an owner under both token programs (Token and Token-2022). */
  async tokenAccounts(owner: string, signal?: AbortSignal): Promise<SolanaTokenHolding[]> {
    const pages = await Promise.all(
      TOKEN_PROGRAMS.map((programId) =>
        this.#call('getTokenAccountsByOwner', [owner, { programId }, { encoding: 'jsonParsed', commitment: 'confirmed' }], tokenAccountsSchema, signal),
      ),
    );
    return pages.flatMap((p) =>
      p.value.map((a) => {
        const info = a.account.data.parsed.info;
        return {
          token_account: a.pubkey,
          mint: info.mint,
          amount: info.tokenAmount.amount,
          decimals: info.tokenAmount.decimals,
          ui_amount: info.tokenAmount.uiAmountString ?? info.tokenAmount.amount,
        };
      }),
    );
  }

  /** Recent transaction signatures of an address, newest first (at most 1000 per call). */
  async signatures(address: string, opts: { limit: number; before?: string }, signal?: AbortSignal) {
    const rows = await this.#call(
      'getSignaturesForAddress',
      [address, { limit: Math.min(1000, opts.limit), ...(opts.before ? { before: opts.before } : {}), commitment: 'confirmed' }],
      signaturesSchema,
      signal,
    );
    return rows.map((r) => ({
      signature: r.signature,
      slot: r.slot,
      status: r.err === null ? ('success' as const) : ('failed' as const),
      block_time: r.blockTime ? new Date(r.blockTime * 1000).toISOString() : null,
      memo: r.memo ?? null,
    }));
  }

  /**
   * A signature's status (getSignatureStatuses, searching the history): null if the node does not
   * know it; `confirmations` is null once the slot is finalized.
   */
  async signatureStatus(signature: string, signal?: AbortSignal): Promise<SignatureStatus | null> {
    const r = await this.#call('getSignatureStatuses', [[signature], { searchTransactionHistory: true }], signatureStatusesSchema, signal);
    return r.value[0] ?? null;
  }

  /** A recent blockhash a wallet can build a transaction on (getLatestBlockhash, finalized). */
  async latestBlockhash(signal?: AbortSignal): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    const r = await this.#call(
      'getLatestBlockhash',
      [{ commitment: 'finalized' }],
      z.object({ value: z.object({ blockhash: z.string(), lastValidBlockHeight: z.number() }) }),
      signal,
    );
    return r.value;
  }

  /** A parsed transaction; throws ProviderError 'not_found' if the node does not know it. */
  async transaction(signature: string, signal?: AbortSignal): Promise<SolanaTransaction> {
    const tx = await this.#call(
      'getTransaction',
      [signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }],
      transactionSchema,
      signal,
    );
    if (!tx) throw new ProviderError(PROVIDER, 'not_found', `no transaction ${signature}`);
    const keys = tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? { pubkey: k, signer: false } : { pubkey: k.pubkey, signer: k.signer ?? false }));
    const sol_changes = keys
      .map((k, i) => ({ account: k.pubkey, lamports: (tx.meta.postBalances[i] ?? 0) - (tx.meta.preBalances[i] ?? 0) }))
      .filter((c) => c.lamports !== 0);
    const tokenKey = (b: z.infer<typeof tokenBalance>) => `${b.owner ?? keys[b.accountIndex]?.pubkey ?? ''}|${b.mint}`;
    const changes = new Map<string, { owner: string | null; mint: string; change: bigint; decimals: number }>();
    for (const [sign, list] of [[-1n, tx.meta.preTokenBalances ?? []], [1n, tx.meta.postTokenBalances ?? []]] as const) {
      for (const b of list) {
        const key = tokenKey(b);
        const entry = changes.get(key) ?? { owner: b.owner ?? null, mint: b.mint, change: 0n, decimals: b.uiTokenAmount.decimals };
        entry.change += sign * BigInt(b.uiTokenAmount.amount);
        changes.set(key, entry);
      }
    }
    return {
      signature: tx.transaction.signatures[0] ?? signature,
      slot: tx.slot,
      block_time: tx.blockTime ? new Date(tx.blockTime * 1000).toISOString() : null,
      status: tx.meta.err === null ? 'success' : 'failed',
      fee_sol: tx.meta.fee / LAMPORTS_PER_SOL,
      signers: keys.filter((k) => k.signer).map((k) => k.pubkey),
      sol_changes,
      token_changes: [...changes.values()].filter((c) => c.change !== 0n).map((c) => ({ ...c, change: c.change.toString() })),
    };
  }
}
