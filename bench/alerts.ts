// npm run bench:alerts — delivery lag of alert webhooks, end to end on the devnet: two replicas of
// the service on one embedded PostgreSQL run the job queue; a whale rule (to an exchange, at least
// 1,000 USD) has a local receiver that verifies each Standard Webhooks signature; ETH transfers
// to a labelled exchange are sent on anvil in bursts. Printed: p50/p99/max of (a) rule fires →
// webhook received (the alert row's fired_at, stored by alert_insert, to the receiver accepting
// the signed POST) and (b) transfer mined → webhook received (adds the evaluation period, which
// BENCH_EVALUATE_MS sets: 1000 ms here; 60 s by default in production). BENCH_ALERTS (100),
// BENCH_BURST (10), BENCH_REPLICAS (2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicClient, createWalletClient, http as viemHttp, parseEther, type Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startEmbedded } from '../server/db/embedded.ts';
import { createDatabase } from '../server/db/pool.ts';
import { startDevnet } from '../server/devnet/devnet.ts';
import { createAccountWithKey, mcpClient, startTestService } from '../test/helpers/service.ts';
import { startReceiver } from '../test/alerts/receiver.ts';

const ALERTS = Number(process.env.BENCH_ALERTS ?? 100);
const BURST = Number(process.env.BENCH_BURST ?? 10);
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 2);
const EVALUATE_MS = process.env.BENCH_EVALUATE_MS ?? '1000';
const MNEMONIC = 'test test test test test test test test test test test junk';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-alerts-'));
fs.chmodSync(root, 0o755);
const pg = await startEmbedded(path.join(root, 'pg'));
const devnet = await startDevnet();
const manifestFile = path.join(root, 'manifest.json');
fs.writeFileSync(manifestFile, JSON.stringify(devnet.manifest));
const env = { MCP_SERVERS: 'whale-intelligence', ETHEREUM_RPC_URL: devnet.manifest.rpc_url, DEVNET_MANIFEST: manifestFile, WEBHOOK_ALLOW_PRIVATE: '1', ALERT_EVALUATE_INTERVAL_MS: EVALUATE_MS };
const services = [];
for (let i = 0; i < REPLICAS; i++) services.push(await startTestService(pg.url, env));
const db = createDatabase({ url: pg.url, max: 2 });
const { key } = await createAccountWithKey(db, { plan: 'premium' });
const receiver = await startReceiver();

const client = await mcpClient(services[0]!.url, 'whale-intelligence', key);
const created = (await client.callTool({ name: 'create_whale_alert', arguments: { chain: 'ethereum', min_usd: 1000, match: 'exchange', direction: 'to', webhook_url: receiver.url } })).structuredContent as {
  data: { webhook: { secret: string } };
};
await client.close();
receiver.secret = created.data.webhook.secret;

const exchange = devnet.manifest.accounts.find((a) => a.kind === 'exchange')!.address as Address;
const sender = mnemonicToAccount(MNEMONIC, { addressIndex: devnet.manifest.accounts.findIndex((a) => a.kind !== 'exchange') });
const wallet = createWalletClient({ account: sender, chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) });
const chain = createPublicClient({ chain: foundry, transport: viemHttp(devnet.manifest.rpc_url) });

const minedAt = new Map<string, number>();
const started = Date.now();
for (let sent = 0; sent < ALERTS; sent += BURST) {
  const n = Math.min(BURST, ALERTS - sent);
  for (let i = 0; i < n; i++) {
    const hash = await wallet.sendTransaction({ to: exchange, value: parseEther('1') });
    await chain.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    minedAt.set(hash, Date.now());
  }
  await receiver.waitFor(sent + n, 120_000);
}
const elapsed = (Date.now() - started) / 1000;

const fired = await db.query<{ tx_hash: string; fired_ms: string }>("SELECT data->>'tx_hash' AS tx_hash, (extract(epoch FROM fired_at) * 1000)::bigint AS fired_ms FROM alerts");
const firedAt = new Map(fired.rows.map((r) => [r.tx_hash, Number(r.fired_ms)]));
const fireLag: number[] = [];
const chainLag: number[] = [];
for (const r of receiver.received) {
  const tx = String(r.body.data.tx_hash);
  fireLag.push(r.at - firedAt.get(tx)!);
  chainLag.push(r.at - minedAt.get(tx)!);
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!;
const line = (name: string, xs: number[]) => `${name}: p50 ${q(xs, 0.5)} ms, p99 ${q(xs, 0.99)} ms, max ${Math.max(...xs)} ms`;
const attempts = [...receiver.attempts.values()];
console.log(`${receiver.received.length} alerts delivered in ${elapsed.toFixed(1)} s by ${REPLICAS} replicas (evaluation every ${EVALUATE_MS} ms), bursts of ${BURST}`);
console.log(line('rule fires -> webhook received', fireLag));
console.log(line('transfer mined -> webhook received', chainLag));
console.log(`deliveries sent more than once: ${attempts.filter((n) => n > 1).length}; signatures rejected: ${receiver.rejected}`);

await receiver.close();
await Promise.all(services.map((s) => s.close()));
await db.close();
await devnet.stop();
await pg.stop();
fs.rmSync(root, { recursive: true, force: true });
