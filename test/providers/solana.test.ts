// The Solana JSON-RPC adapter against a loopback server replaying the documented response shapes
// (https://solana.com/docs/rpc/http), including JSON-RPC errors, 429s and slow answers.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../server/errors.ts';
import { SolanaRpc } from '../../server/providers/solana/live.ts';

const OWNER = 'A1TMhSGzQxMr1TboBKtgixKz1sS6REASMxPo1qsyTSJd';
const MINT = '2cHr7QS3xfuSV8wdxo3ztuF4xbiarF6Nrgx3qpx3HzXR';
const SIG = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

let mode: 'ok' | 'rpc-error' | '429-once' | 'slow' = 'ok';
let requests: { method: string; params: unknown[] }[] = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString('utf8')));
  req.on('end', () => {
    const msg = JSON.parse(body) as { id: number; method: string; params: unknown[] };
    requests.push({ method: msg.method, params: msg.params });
    const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    if (mode === 'slow') return void setTimeout(() => reply({ context: { slot: 1 }, value: 0 }), 3000);
    if (mode === '429-once') {
      mode = 'ok';
      return void res.writeHead(429, { 'retry-after': '0' }).end('{}');
    }
    if (mode === 'rpc-error') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'Invalid param: WrongSize' } }));
    }
    switch (msg.method) {
      case 'getBalance':
        return reply({ context: { apiVersion: '2.0.15', slot: 341197053 }, value: 2_500_000_000 });
      case 'getTokenAccountsByOwner': {
        const program = (msg.params[1] as { programId: string }).programId;
        if (program.startsWith('Tokenz')) return reply({ context: { slot: 341197933 }, value: [] });
        return reply({
          context: { apiVersion: '2.0.15', slot: 341197933 },
          value: [
            {
              pubkey: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA',
              account: {
                data: {
                  program: 'spl-token',
                  parsed: { info: { isNative: false, mint: MINT, owner: OWNER, state: 'initialized', tokenAmount: { amount: '420000000000000', decimals: 6, uiAmount: 420000000.0, uiAmountString: '420000000' } }, type: 'account' },
                  space: 165,
                },
                executable: false,
                lamports: 2039280,
                owner: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
                rentEpoch: 361,
                space: 165,
              },
            },
          ],
        });
      }
      case 'getSignaturesForAddress':
        return reply([
          { signature: SIG, slot: 114, err: null, memo: null, blockTime: 1700000000, confirmationStatus: 'finalized' },
          { signature: `${SIG.slice(0, -1)}X`, slot: 110, err: { InstructionError: [0, 'Custom'] }, memo: 'hi', blockTime: null, confirmationStatus: 'finalized' },
        ]);
      case 'getTransaction':
        if (msg.params[0] !== SIG) return reply(null);
        return reply({
          slot: 114,
          blockTime: 1700000000,
          meta: {
            err: null,
            fee: 5000,
            preBalances: [1_000_000_000, 0, 1],
            postBalances: [899_995_000, 100_000_000, 1],
            preTokenBalances: [{ accountIndex: 1, mint: MINT, owner: OWNER, uiTokenAmount: { amount: '1000', decimals: 6, uiAmountString: '0.001' } }],
            postTokenBalances: [{ accountIndex: 1, mint: MINT, owner: OWNER, uiTokenAmount: { amount: '4000', decimals: 6, uiAmountString: '0.004' } }],
          },
          transaction: {
            signatures: [SIG],
            message: {
              accountKeys: [
                { pubkey: OWNER, signer: true, writable: true, source: 'transaction' },
                { pubkey: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA', signer: false, writable: true, source: 'transaction' },
                { pubkey: '11111111111111111111111111111111', signer: false, writable: false, source: 'transaction' },
              ],
              instructions: [],
            },
          },
        });
      default:
        return res.writeHead(404).end('{}');
    }
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  mode = 'ok';
  requests = [];
});

describe('SolanaRpc', () => {
  it('reads a SOL balance in lamports and SOL', async () => {
    expect(await new SolanaRpc({ url }).balance(OWNER)).toEqual({ lamports: 2_500_000_000, sol: 2.5, slot: 341197053 });
    expect(requests[0]).toMatchObject({ method: 'getBalance', params: [OWNER, { commitment: 'confirmed' }] });
  });

  it('lists SPL token accounts under both token programs, parsed', async () => {
    const holdings = await new SolanaRpc({ url }).tokenAccounts(OWNER);
    expect(holdings).toEqual([{ token_account: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA', mint: MINT, amount: '420000000000000', decimals: 6, ui_amount: '420000000' }]);
    expect(requests.map((r) => (r.params[1] as { programId: string }).programId).sort()).toEqual([
      'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
      'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
    ]);
  });

  it('lists signatures with their status and time', async () => {
    const sigs = await new SolanaRpc({ url }).signatures(OWNER, { limit: 10 });
    expect(sigs[0]).toEqual({ signature: SIG, slot: 114, status: 'success', block_time: '2023-11-14T22:13:20.000Z', memo: null });
    expect(sigs[1]).toMatchObject({ status: 'failed', block_time: null, memo: 'hi' });
  });

  it('parses a transaction: fee, signers, SOL and token balance changes', async () => {
    const tx = await new SolanaRpc({ url }).transaction(SIG);
    expect(tx).toEqual({
      signature: SIG,
      slot: 114,
      block_time: '2023-11-14T22:13:20.000Z',
      status: 'success',
      fee_sol: 0.000005,
      signers: [OWNER],
      sol_changes: [
        { account: OWNER, lamports: -100_005_000 },
        { account: 'BGocb4GEpbTFm8UFV2VsDSaBXHELPfAXrvd4vtt8QWrA', lamports: 100_000_000 },
      ],
      token_changes: [{ owner: OWNER, mint: MINT, change: '3000', decimals: 6 }],
    });
  });

  it('an unknown transaction is not_found; a JSON-RPC error is error with its message', async () => {
    await expect(new SolanaRpc({ url }).transaction(`${SIG.slice(0, -2)}ZZ`)).rejects.toMatchObject({ kind: 'not_found', provider: 'solana' });
    mode = 'rpc-error';
    const err = await new SolanaRpc({ url, retries: 0 }).balance(OWNER).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'error', message: expect.stringContaining('Invalid param') });
  });

  it('a 429 is retried; a slow node times out', async () => {
    mode = '429-once';
    expect((await new SolanaRpc({ url, retries: 2 }).balance(OWNER)).lamports).toBe(2_500_000_000);
    expect(requests).toHaveLength(2);
    mode = 'slow';
    await expect(new SolanaRpc({ url, timeoutMs: 200, retries: 0 }).balance(OWNER)).rejects.toMatchObject({ kind: 'timeout' });
  });
});
