// npm run bench:intel-memory — the memory the social, KOL and project data cost. Starts the real
// service (all nine servers, --max-old-space-size=256 as `npm start` runs it) on an embedded
// PostgreSQL and reads its resident set (VmRSS, and the peak VmHWM, from /proc) side by side:
// right after start (the offline social and DeFi data are not loaded yet: they load on first use),
// after one call of each of the three servers (data loaded), and after a round of their heaviest
// tools. Prints MB and the ratios to the start.
import fs from 'node:fs';
import { accountCreate } from '../server/accounts/accounts.ts';
import { planUpsert } from '../server/accounts/plans.ts';
import { migrate } from '../server/db/migrate.ts';
import { keyCreate } from '../server/keys/store.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import { spawnServer, stopServer } from '../test/helpers/process.ts';
import { openBenchDatabase } from './support/database.ts';

function memory(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function call(url: string, key: string, server: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/mcp/${server}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean } };
  if (!res.ok || body.result?.isError) throw new Error(`${server}.${name} failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
}

async function main() {
  const { url: databaseUrl, db, close } = await openBenchDatabase('cmcp-mem-', 2);
  let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    await migrate(db.pool);
    await planUpsert(db, { name: 'bench-mem', display_name: 'Bench', credits: 1_000_000, renewal: 'one-time', requests_per_minute: 100_000, burst: 10_000, servers: [...SERVER_NAMES], max_keys: 5 });
    const account = await accountCreate(db, { wallet: `0x${'c'.repeat(24)}${Date.now().toString(16).padStart(16, '0')}`, chain: 'ethereum', plan: 'bench-mem' });
    const key = (await keyCreate(db, account.id, { name: 'bench' })).plaintext;
    server = await spawnServer(databaseUrl, { NODE_OPTIONS: '--max-old-space-size=256' });
    const pid = server.child.pid!;
    const { url } = server;
    const rows: [string, { rss: number; peak: number }][] = [['started (nine servers, data not loaded)', memory(pid)]];

    await call(url, key, 'social-intelligence', 'get_social_volume', { asset: 'btc' });
    await call(url, key, 'project-intelligence', 'search_projects', { query: 'aave' });
    rows.push(['social + DeFi data loaded', memory(pid)]);

    for (const platform of ['reddit', 'twitter']) {
      await call(url, key, 'kol-analytics', 'rank_kols', { platform, min_calls: 1 });
      await call(url, key, 'social-intelligence', 'get_trending_topics', { platform, days: 30 });
      await call(url, key, 'social-intelligence', 'detect_social_spike', { platform, days: 365 });
    }
    await call(url, key, 'kol-analytics', 'get_kol_performance', { handle: 'Cointelegraph' });
    await call(url, key, 'project-intelligence', 'get_category_overview', {});
    await call(url, key, 'project-intelligence', 'due_diligence_report', { project: 'Kamino Lend' });
    rows.push(['after the heaviest social/KOL/project tools', memory(pid)]);

    const base = rows[0]![1].rss;
    console.log('resident memory of one service process (MB), measured in one run:');
    for (const [label, m] of rows) console.log(`  ${label.padEnd(46)} rss ${m.rss.toFixed(0).padStart(4)}  peak ${m.peak.toFixed(0).padStart(4)}  rss/start ${(m.rss / base).toFixed(2)}`);
  } finally {
    if (server) await stopServer(server.child);
    await close();
  }
}

await main();
