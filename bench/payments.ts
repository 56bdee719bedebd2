// npm run bench:payments — what paying costs in latency, side by side in one run on the anvil
// devnet with a real PostgreSQL (issue 21):
//  - the same tools/call (market-intelligence get_prices, 1 credit) keyed on /mcp, and paid per
//    call on /x402/mcp through the official @x402/fetch client (402, sign, verify, run, settle
//    with @x402/evm's facilitator on anvil): the ratio is what x402 adds to a call;
//  - an on-chain order: POST /api/orders/{id}/submit for a mined, confirmed USDC transfer until
//    it is credited (receipt, head, linked wallets, the crediting transaction).
// Sequential calls after a warm-up: per-call latency, p50 and p95. BENCH_ITERATIONS (default 20).
// anvil mines at once and answers on loopback: a public chain adds its block time and RPC latency.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { toHex } from 'viem';
import { startEmbedded } from '../server/db/embedded.ts';
import { createDatabase } from '../server/db/pool.ts';
import { startDevnet } from '../server/devnet/devnet.ts';
import { CookieClient, rpcEnv, signInEvm } from '../test/dashboard/helpers.ts';
import { devnetAccount, devnetClients, transferToken } from '../test/payments/helpers.ts';
import { createAccountWithKey, createUnlimitedPlan, post, startTestService, toolCall } from '../test/helpers/service.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);
const WARMUP = 2;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-payments-'));
fs.chmodSync(root, 0o755);
const pg = await startEmbedded(path.join(root, 'pg'));
const devnet = await startDevnet();
const m = devnet.manifest;
const db = createDatabase({ url: pg.url, max: 4 });
const svc = await startTestService(pg.url, {
  ...rpcEnv(m.rpc_url),
  MCP_SERVERS: 'market-intelligence',
  DASHBOARD_SIGN_IN_LIMIT: '1000',
  PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 } }),
  PAYMENT_VERIFY_INTERVAL_MS: '600000',
  X402_PAY_TO: m.payments.treasury.address,
  X402_NETWORK: `eip155:${m.chain_id}`,
  X402_ASSET: m.payments.usdc.address,
  X402_RPC_URL: m.rpc_url,
  X402_SETTLEMENT_KEY: toHex(devnetAccount(10).getHdKey().privateKey!),
  X402_REQUESTS_PER_MINUTE: '100000',
  X402_BURST: '100000',
});
await createUnlimitedPlan(db, 'bench-payments', 10_000_000);
const { key } = await createAccountWithKey(db, { plan: 'bench-payments' });

const payer = devnetAccount(12);
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(toClientEvmSigner(payer, devnetClients(m).pub)) }],
  spendControls: { allowedAssets: [{ network: `eip155:${m.chain_id}`, asset: m.payments.usdc.address }] },
});
const body = JSON.stringify(toolCall('get_prices', { assets: ['bitcoin'] }));
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function timed(label: string, once: () => Promise<void>): Promise<{ label: string; p50: number; p95: number }> {
  for (let i = 0; i < WARMUP; i++) await once();
  const ms: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await once();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { label, p50: ms[Math.floor(ms.length / 2)]!, p95: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)]! };
}

const keyed = await timed('keyed /mcp tools/call', async () => {
  const res = await post(`${svc.url}/mcp/market-intelligence`, JSON.parse(body), { 'x-api-key': key });
  if (res.status !== 200) throw new Error(`keyed call: ${res.status}`);
});
const paid = await timed('x402 tools/call via @x402/fetch', async () => {
  const res = await pay(`${svc.url}/x402/mcp/market-intelligence`, { method: 'POST', headers, body });
  if (res.status !== 200) throw new Error(`x402 call: ${res.status} ${await res.text()}`);
});

const submitMs: number[] = [];
const client = new CookieClient(svc.url);
await signInEvm(client, payer);
const order = await timed('order submit → credited (1 confirmation)', async () => {
  const o = (await client.post('/api/orders', { kind: 'pack', item: 'credits-1k', chain: 'ethereum' })).body.order as { id: string; amount: string };
  const hash = await transferToken(m, payer, m.payments.usdc.address, m.payments.treasury.address, BigInt(o.amount));
  const t = performance.now();
  const res = await client.post(`/api/orders/${o.id}/submit`, { tx_hash: hash });
  if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
  submitMs.push(performance.now() - t);
});

for (const r of [keyed, paid]) console.log(`${r.label.padEnd(44)} p50 ${r.p50.toFixed(1)} ms  p95 ${r.p95.toFixed(1)} ms`);
console.log(`x402 / keyed (p50): ${(paid.p50 / keyed.p50).toFixed(1)}x`);
submitMs.sort((a, b) => a - b);
console.log(`${'order submit → credited'.padEnd(44)} p50 ${submitMs[Math.floor(submitMs.length / 2)]!.toFixed(1)} ms (the transfer itself: ${(order.p50 - submitMs[Math.floor(submitMs.length / 2)]!).toFixed(1)} ms more)`);

await svc.close();
await db.close();
await devnet.stop();
await pg.stop();
fs.rmSync(root, { recursive: true, force: true });
