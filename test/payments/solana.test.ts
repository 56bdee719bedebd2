// Paying an order in SPL USDC on Solana (issue 21): the service verifies the signature over Solana
// JSON-RPC — getSignatureStatuses (finalized, or confirmed with enough confirmations; err) and
// getTransaction with jsonParsed (pre/postTokenBalances: the treasury's USDC gain and who paid it).
// No Solana node can run here, so a local JSON-RPC stand-in over a real socket serves the shapes
// the Solana RPC documentation gives for those two methods (https://solana.com/docs/rpc/http/
// getsignaturestatuses, .../gettransaction), built for each test transaction. The service,
// dashboard API, sign-in with a real ed25519 key and PostgreSQL are real.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { base58 } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ledgerSum, startTestService } from '../helpers/service.ts';
import { CookieClient, signInSolana, solanaWallet, type SolanaTestWallet } from '../dashboard/helpers.ts';

const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const OTHER_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const treasury = solanaWallet().address;

interface Chain {
  status: { slot: number; confirmations: number | null; err: unknown; confirmationStatus: 'processed' | 'confirmed' | 'finalized' } | null;
  tx: unknown;
}
const ledger = new Map<string, Chain>();
let stand: http.Server;
let db: TestDatabase;
let service: RunningService;

/** A parsed SPL transfer as getTransaction (jsonParsed, version 0) returns it. */
function transfer(opts: { signature: string; from: string; to: string; mint?: string; amount: bigint; err?: unknown }) {
  const mint = opts.mint ?? USDC_MINT;
  const fromAta = base58.encode(randomBytes(32));
  const toAta = base58.encode(randomBytes(32));
  const balance = (accountIndex: number, owner: string, amount: bigint) => ({
    accountIndex,
    mint,
    owner,
    programId: TOKEN_PROGRAM,
    uiTokenAmount: { amount: amount.toString(), decimals: 6, uiAmount: Number(amount) / 1e6, uiAmountString: (Number(amount) / 1e6).toString() },
  });
  const start = 500_000_000n;
  const moved = opts.err ? 0n : opts.amount;
  return {
    slot: 301_234_567,
    blockTime: Math.floor(Date.now() / 1000) - 30,
    version: 0,
    meta: {
      err: opts.err ?? null,
      status: opts.err ? { Err: opts.err } : { Ok: null },
      fee: 5000,
      preBalances: [2_000_000_000, 2_039_280, 2_039_280, 1],
      postBalances: [1_999_995_000, 2_039_280, 2_039_280, 1],
      preTokenBalances: [balance(1, opts.from, start), balance(2, opts.to, 0n)],
      postTokenBalances: [balance(1, opts.from, start - moved), balance(2, opts.to, moved)],
      innerInstructions: [],
      logMessages: [`Program ${TOKEN_PROGRAM} invoke [1]`, 'Program log: Instruction: TransferChecked', `Program ${TOKEN_PROGRAM} success`],
      computeUnitsConsumed: 6200,
    },
    transaction: {
      signatures: [opts.signature],
      message: {
        accountKeys: [
          { pubkey: opts.from, signer: true, writable: true, source: 'transaction' },
          { pubkey: fromAta, signer: false, writable: true, source: 'transaction' },
          { pubkey: toAta, signer: false, writable: true, source: 'transaction' },
          { pubkey: TOKEN_PROGRAM, signer: false, writable: false, source: 'transaction' },
        ],
        instructions: [
          {
            program: 'spl-token',
            programId: TOKEN_PROGRAM,
            parsed: {
              type: 'transferChecked',
              info: { source: fromAta, destination: toAta, mint, authority: opts.from, tokenAmount: { amount: opts.amount.toString(), decimals: 6 } },
            },
            stackHeight: null,
          },
        ],
        recentBlockhash: base58.encode(randomBytes(32)),
      },
    },
  };
}

const newSignature = () => base58.encode(randomBytes(64));
const finalized = { slot: 301_234_567, confirmations: null, err: null, confirmationStatus: 'finalized' as const };

function record(opts: Parameters<typeof transfer>[0] & { status?: Chain['status'] }): string {
  ledger.set(opts.signature, { status: opts.status === undefined ? { ...finalized, err: opts.err ?? null } : opts.status, tx: transfer(opts) });
  return opts.signature;
}

beforeAll(async () => {
  stand = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      let result: unknown;
      if (method === 'getSignatureStatuses') {
        const [signatures] = params as [string[]];
        result = { context: { apiVersion: '2.2.7', slot: 301_234_600 }, value: signatures.map((s) => ledger.get(s)?.status ?? null) };
      } else if (method === 'getTransaction') {
        const [signature, config] = params as [string, { encoding: string; maxSupportedTransactionVersion: number }];
        expect(config).toMatchObject({ encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 });
        const entry = ledger.get(signature);
        result = entry?.status ? entry.tx : null;
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
  db = await createTestDatabase();
  service = await startTestService(db.url, {
    MCP_SERVERS: 'market-intelligence',
    DASHBOARD_SIGN_IN_LIMIT: '1000',
    SOLANA_RPC_URL: `http://127.0.0.1:${(stand.address() as AddressInfo).port}`,
    EVM_RETRIES: '0',
    PAYMENT_CHAINS: JSON.stringify({ solana: { treasury } }),
    PAYMENT_VERIFY_INTERVAL_MS: '600000',
  });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
  await new Promise((resolve) => stand?.close(resolve));
});

let client: CookieClient;
let wallet: SolanaTestWallet;
let accountId: string;

async function order(kind: 'plan' | 'pack' = 'plan', item = 'basic') {
  const res = await client.post('/api/orders', { kind, item, chain: 'solana' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.order as { id: string; amount: string; token: string; treasury: string };
}
const submit = (id: string, signature: string) => client.post(`/api/orders/${id}/submit`, { tx_hash: signature });
const balance = async () => (await db.query<{ balance: number; plan: string }>('SELECT balance, plan FROM accounts WHERE id = $1', [accountId])).rows[0]!;

describe('Solana SPL USDC payments against the JSON-RPC stand-in', () => {
  beforeAll(async () => {
    client = new CookieClient(service.url);
    wallet = solanaWallet();
    const { res } = await signInSolana(client, wallet);
    accountId = res.body.account.id;
  });

  it('an order names SPL USDC (6 decimals) and the Solana treasury', async () => {
    expect(await order()).toMatchObject({ amount: '29000000', token: USDC_MINT, treasury });
  });

  it('refusals credit nothing: wrong mint, wrong recipient, short amount, failed transaction, sender not linked, malformed and unknown signatures', async () => {
    const before = await balance();
    const o = await order();
    const cases: [string, number, string, Record<string, unknown>][] = [
      [record({ signature: newSignature(), from: wallet.address, to: treasury, mint: OTHER_MINT, amount: 29_000_000n }), 422, 'PAYMENT_MISMATCH', { field: 'token', found: OTHER_MINT }],
      [record({ signature: newSignature(), from: wallet.address, to: solanaWallet().address, amount: 29_000_000n }), 422, 'PAYMENT_MISMATCH', { field: 'recipient' }],
      [record({ signature: newSignature(), from: wallet.address, to: treasury, amount: 28_999_999n }), 422, 'PAYMENT_MISMATCH', { field: 'amount', found: '28999999' }],
      [record({ signature: newSignature(), from: wallet.address, to: treasury, amount: 29_000_000n, err: { InstructionError: [0, { Custom: 1 }] } }), 422, 'PAYMENT_MISMATCH', { field: 'status' }],
      [record({ signature: newSignature(), from: solanaWallet().address, to: treasury, amount: 29_000_000n }), 403, 'WALLET_NOT_LINKED', {}],
      [newSignature(), 409, 'PAYMENT_UNCONFIRMED', { confirmations: 0 }],
      ['0xabc', 400, 'INVALID_PARAMS', {}],
    ];
    for (const [signature, status, code, details] of cases) {
      const res = await submit(o.id, signature);
      expect([res.status, res.body.error.code], code).toEqual([status, code]);
      expect(res.body.error.details).toMatchObject(details);
    }
    expect(await balance()).toEqual(before);
  });

  it('a confirmed but not finalized transfer waits for the confirmations; once finalized the plan is bought, once', async () => {
    const o = await order();
    const signature = record({ signature: newSignature(), from: wallet.address, to: treasury, amount: 29_000_000n, status: { slot: 301_234_590, confirmations: 5, err: null, confirmationStatus: 'confirmed' } });
    const early = await submit(o.id, signature);
    expect(early.body.error).toMatchObject({ code: 'PAYMENT_UNCONFIRMED', details: { confirmations: 5, required: 31 } });
    expect((await balance()).plan).toBe('free');
    ledger.get(signature)!.status = finalized;
    const paid = await submit(o.id, signature);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.account).toMatchObject({ plan: 'basic', balance: 5000 });
    const again = await submit(o.id, signature);
    expect(again.body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
    const other = await order('pack', 'credits-1k');
    expect((await submit(other.id, signature)).body.error.code).toBe('PAYMENT_ALREADY_CREDITED');
    const rows = await db.query('SELECT chain, tx_hash, payer FROM payments WHERE account_id = $1', [accountId]);
    expect(rows.rows).toEqual([{ chain: 'solana', tx_hash: signature, payer: wallet.address }]);
    expect(await ledgerSum(db, accountId)).toBe(5000);
  });
});
