// npm run bench:onchain — latency of every on-chain tool, end to end (the MCP SDK client over real
// HTTP, metering in a real PostgreSQL, the seeded devnet behind a counting JSON-RPC proxy), and
// how many HTTP round trips to the node each call makes. Sequential calls, after a warm-up, so
// the figures are per-call latency, not throughput. Prints p50/p95 and round trips per tool.
// BENCH_ITERATIONS (default 20). The devnet is local: these are our own costs plus anvil's, not
// what a public RPC's network latency would add (each round trip there costs ~50-200 ms).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbedded } from '../server/db/embedded.ts';
import { createDatabase } from '../server/db/pool.ts';
import { startDevnet } from '../server/devnet/devnet.ts';
import { countingProxy } from '../test/helpers/chain.ts';
import { createAccountWithKey, createUnlimitedPlan, mcpClient, startTestService } from '../test/helpers/service.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);
const WARMUP = 2;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-onchain-'));
fs.chmodSync(root, 0o755);
const pg = await startEmbedded(path.join(root, 'pg'));
const devnet = await startDevnet();
const m = devnet.manifest;

const proxy = await countingProxy(m.rpc_url);
const proxyUrl = proxy.url;
const manifestFile = path.join(root, 'manifest.json');
fs.writeFileSync(manifestFile, JSON.stringify({ ...m, rpc_url: proxyUrl }));

const db = createDatabase({ url: pg.url, max: 4 });
const svc = await startTestService(pg.url, {
  MCP_SERVERS: 'blockchain-explorer,token-intelligence,portfolio-analytics,whale-intelligence',
  ETHEREUM_RPC_URL: proxyUrl,
  DEVNET_MANIFEST: manifestFile,
  EVM_RETRIES: '0',
});
await createUnlimitedPlan(db, 'bench-onchain', 10_000_000);
const { key } = await createAccountWithKey(db, { plan: 'bench-onchain' });

const token = (s: string) => m.tokens.find((t) => t.symbol === s)!.address;
const byKind = (k: string) => m.accounts.find((a) => a.kind === k)!.address;
const wallets = m.accounts.map((a) => a.address);
const cases: [server: string, tool: string, args: Record<string, unknown>][] = [
  ['blockchain-explorer', 'get_gas', {}],
  ['blockchain-explorer', 'get_block', { number: m.transfers[0]!.block }],
  ['blockchain-explorer', 'get_transaction', { hash: m.transfers[0]!.tx_hash }],
  ['blockchain-explorer', 'get_address_summary', { address: byKind('exchange') }],
  ['blockchain-explorer', 'get_address_transactions', { address: byKind('exchange'), from_block: 0 }],
  ['blockchain-explorer', 'get_token_transfers', { token: token('DPT') }],
  ['blockchain-explorer', 'read_contract', { address: token('DPT'), signature: 'function balanceOf(address) view returns (uint256)', args: [byKind('exchange')] }],
  ['blockchain-explorer', 'get_contract_info', { address: token('DUP') }],
  ['token-intelligence', 'search_token', { query: 'USDC' }],
  ['token-intelligence', 'get_token_profile', { address: token('DUSD') }],
  ['token-intelligence', 'get_holder_analysis', { token: token('DPT') }],
  ['token-intelligence', 'get_token_security', { address: token('DMT') }],
  ['token-intelligence', 'get_risk_score', { address: token('DMT') }],
  ['portfolio-analytics', 'get_portfolio', { addresses: [byKind('exchange')], chains: ['ethereum'] }],
  ['portfolio-analytics', 'get_portfolio', { addresses: wallets, chains: ['ethereum'] }],
  ['portfolio-analytics', 'get_risk_metrics', { addresses: [byKind('fund')], chains: ['ethereum'] }],
  ['portfolio-analytics', 'compare_wallets', { addresses: wallets.slice(0, 5), chains: ['ethereum'] }],
];

const clients = new Map<string, Awaited<ReturnType<typeof mcpClient>>>();
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const rows: string[] = [];
// whale-intelligence's tools are listed too when that server offers them, with its own examples.
const whale = await mcpClient(svc.url, 'whale-intelligence', key);
const whaleTools = new Set((await whale.listTools()).tools.map((t) => t.name));
if (whaleTools.has('get_whale_transactions')) cases.push(['whale-intelligence', 'get_whale_transactions', { from_block: 0 }]);
if (whaleTools.has('profile_wallet')) cases.push(['whale-intelligence', 'profile_wallet', { address: byKind('exchange') }]);
await whale.close();

for (const [server, tool, args] of cases) {
  let client = clients.get(server);
  if (!client) clients.set(server, (client = await mcpClient(svc.url, server, key)));
  const times: number[] = [];
  let tripsTotal = 0;
  let failed = '';
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const before = proxy.requests();
    const t0 = performance.now();
    const res = await client.callTool({ name: tool, arguments: args });
    const ms = performance.now() - t0;
    if (res.isError) failed = JSON.stringify(res.content).slice(0, 120);
    if (i >= WARMUP) {
      times.push(ms);
      tripsTotal += proxy.requests() - before;
    }
  }
  const label = `${tool}${tool === 'get_portfolio' ? ` (${(args.addresses as string[]).length} address${(args.addresses as string[]).length > 1 ? 'es' : ''})` : ''}`;
  rows.push(
    `${label.padEnd(34)} ${quantile(times, 0.5).toFixed(1).padStart(8)} ${quantile(times, 0.95).toFixed(1).padStart(8)} ${(tripsTotal / ITERATIONS).toFixed(1).padStart(8)}${failed ? `  FAILED: ${failed}` : ''}`,
  );
}

console.log(`bench:onchain — ${ITERATIONS} sequential calls per tool after ${WARMUP} warm-up calls; devnet (anvil) on loopback`);
console.log(`${'tool'.padEnd(34)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'RPC/call'.padStart(8)}`);
for (const r of rows) console.log(r);

for (const c of clients.values()) await c.close();
await svc.close();
await db.close();
await proxy.close();
await devnet.stop();
await pg.stop();
fs.rmSync(root, { recursive: true, force: true });
