// Usage per key and per server/tool with failures and 429s beside successes (GET /api/usage/breakdown),
// over preset or custom ranges, from what the gateway really logged: calls made over HTTP with two
// keys are counted exactly as their answers came back (200, 502, 400, 429). And the request log's
// retention is a setting (REQUEST_LOG_RETENTION_DAYS) that the dashboard honours and the sweep enforces.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accountSetPlan } from '../../server/accounts/accounts.ts';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { requestLogInsertMany, requestLogSweep, type RequestLogEntry } from '../../server/dashboard/requestLog.ts';
import type { RunningService } from '../../server/runtime.ts';
import { addDays } from '../../server/lib/dates.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createUnlimitedPlan, post, startTestService, toolCall } from '../helpers/service.ts';
import { clearOfMidnight } from '../helpers/wait.ts';
import { signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', REQUEST_LOG_RETENTION_DAYS: '7' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

const signedIn = () => signedInNewAccount(service.url);

const today = () => new Date().toISOString().slice(0, 10);
// Each test compares the days the service logged its calls on with today() computed after them.
beforeEach(() => clearOfMidnight());

describe('usage breakdown from the gateway\'s log', () => {
  it('counts each key\'s calls per tool as they were answered: successes, failures and 429s apart, with the error codes', async () => {
    const { client, accountId } = await signedIn();
    // A plan whose burst is small enough to reach the rate limit in a few calls.
    await createUnlimitedPlan(db, 'usage-tight', 1000, { requests_per_minute: 2, burst: 4 });
    await accountSetPlan(db, accountId, 'usage-tight');
    const keyA = (await client.post('/api/keys', { name: 'a' })).body;
    const keyB = (await client.post('/api/keys', { name: 'b' })).body;
    const url = `${service.url}/mcp/market-intelligence`;
    const seen: { key: string; tool: string; status: number }[] = [];
    const call = async (key: { plaintext: string; key: { id: string } }, tool: string) => {
      const r = await post(url, toolCall(tool, tool === 'bench_echo' ? { message: 'x' } : {}), { 'x-api-key': key.plaintext });
      seen.push({ key: key.key.id, tool, status: r.status });
    };
    await call(keyA, 'bench_echo');
    await call(keyA, 'bench_fail');
    await call(keyB, 'no_such_tool');
    for (let i = 0; i < 6; i++) await call(keyB, 'bench_echo');
    const count = (pred: (s: (typeof seen)[number]) => boolean) => seen.filter(pred).length;
    expect(count((s) => s.status === 429)).toBeGreaterThan(0);
    expect(count((s) => s.status === 502)).toBe(1);
    expect(count((s) => s.status === 400)).toBe(1);

    // The gateway writes the log in batches: wait until every call is there.
    let breakdown;
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      breakdown = (await client.get('/api/usage/breakdown?days=7')).body;
      if (breakdown.daily.reduce((n: number, d: { requests: number }) => n + d.requests, 0) >= seen.length) break;
    }
    expect(breakdown.from).toBe(addDays(today(), -6));
    expect(breakdown.to).toBe(today());
    const ok = count((s) => s.status === 200);
    const limited = count((s) => s.status === 429);
    const failed = seen.length - ok - limited;
    expect(breakdown.daily).toEqual([{ day: today(), requests: seen.length, ok, errors: failed, rate_limited: limited, credits: ok }]);

    const byKey = new Map(breakdown.by_key.map((k: { key_id: string }) => [k.key_id, k]));
    for (const key of [keyA, keyB]) {
      const mine = seen.filter((s) => s.key === key.key.id);
      expect(byKey.get(key.key.id)).toMatchObject({
        requests: mine.length,
        ok: mine.filter((s) => s.status === 200).length,
        rate_limited: mine.filter((s) => s.status === 429).length,
      });
    }
    const echo = breakdown.by_tool.find((t: { tool: string }) => t.tool === 'bench_echo');
    expect(echo).toMatchObject({ server: 'market-intelligence', method: 'tools/call', ok, rate_limited: limited, errors: 0 });
    expect(breakdown.by_tool.find((t: { tool: string }) => t.tool === 'bench_fail')).toMatchObject({ ok: 0, errors: 1 });
    const errors = Object.fromEntries(breakdown.by_error.map((e: { error_code: string; requests: number }) => [e.error_code, e.requests]));
    expect(errors).toMatchObject({ RATE_LIMITED: limited, UPSTREAM_ERROR: 1, UNKNOWN_TOOL: 1 });

    // One key's view holds that key's requests only.
    const onlyA = (await client.get(`/api/usage/breakdown?days=7&key=${keyA.key.id}`)).body;
    expect(onlyA.key).toBe(keyA.key.id);
    expect(onlyA.by_key.map((k: { key_id: string }) => k.key_id)).toEqual([keyA.key.id]);
    expect(onlyA.daily[0]).toMatchObject({ requests: 2, ok: 1, errors: 1, rate_limited: 0 });

    // The request log's status filters agree with the breakdown.
    const logged = async (status: string) => (await client.get(`/api/requests?status=${status}&limit=200`)).body.rows.length;
    expect(await logged('ok')).toBe(ok);
    expect(await logged('rate_limited')).toBe(limited);
    expect(await logged('error')).toBe(failed);
  });

  it('a custom from/to range counts the days in it only, both ends included; bad ranges are refused', async () => {
    const { client, accountId } = await signedIn();
    const entry = (day: string, status: number): RequestLogEntry => ({
      account_id: accountId,
      key_id: null,
      request_id: `${day}-${status}-${Math.random()}`,
      server: 'market-intelligence',
      method: 'tools/call',
      tool: 'get_prices',
      status,
      error_code: status === 200 ? null : status === 429 ? 'RATE_LIMITED' : 'INTERNAL_ERROR',
      credits: status === 200 ? 1 : 0,
      latency_ms: 4,
      created_at: new Date(`${day}T12:00:00Z`),
    });
    const d = (n: number) => addDays(today(), -n);
    await requestLogInsertMany(db, [entry(d(5), 200), entry(d(4), 429), entry(d(3), 500), entry(d(3), 200), entry(d(1), 200)]);
    const res = (await client.get(`/api/usage/breakdown?from=${d(4)}&to=${d(3)}`)).body;
    expect(res).toMatchObject({ from: d(4), to: d(3), days: 2 });
    expect(res.daily).toEqual([
      { day: d(4), requests: 1, ok: 0, errors: 0, rate_limited: 1, credits: 0 },
      { day: d(3), requests: 2, ok: 1, errors: 1, rate_limited: 0, credits: 1 },
    ]);
    // The ledger-based series takes the same range.
    const usage = (await client.get(`/api/usage?from=${d(4)}&to=${d(3)}`)).body;
    expect(usage).toMatchObject({ from: d(4), to: d(3), days: 2 });

    for (const bad of [`from=${d(3)}&to=${d(4)}`, `from=${d(3)}`, 'from=2025-02-30&to=2025-03-02', 'from=2024-01-01&to=2025-06-01', 'days=0', `days=3&from=${d(3)}&to=${d(3)}`]) {
      const r = await client.get(`/api/usage/breakdown?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code).toBe('INVALID_PARAMS');
    }
  });
});

describe('request log retention (REQUEST_LOG_RETENTION_DAYS)', () => {
  it('is a setting: shown to the page, honoured by the log and the usage breakdown, enforced by the sweep in batches', async () => {
    const { client, accountId } = await signedIn();
    expect((await client.get('/api/config')).body.request_log_retention_days).toBe(7);
    const entry = (daysAgo: number, i: number): RequestLogEntry => ({
      account_id: accountId,
      key_id: null,
      request_id: `r-${daysAgo}-${i}`,
      server: 'market-intelligence',
      method: 'tools/list',
      tool: null,
      status: 200,
      error_code: null,
      credits: 0,
      latency_ms: 2,
      created_at: new Date(Date.now() - daysAgo * 86400_000),
    });
    const old = Array.from({ length: 25 }, (_, i) => entry(8, i));
    await requestLogInsertMany(db, [...old, entry(6, 0)]);
    expect((await client.get('/api/requests?limit=200')).body.rows.map((r: { request_id: string }) => r.request_id)).toEqual(['r-6-0']);
    expect((await client.get('/api/usage/breakdown?days=30')).body.retained_from).toBe(addDays(today(), -7));

    expect(await requestLogSweep(db, 7, 10)).toBe(25);
    const kept = await db.query<{ request_id: string }>('SELECT request_id FROM request_log WHERE account_id = $1', [accountId]);
    expect(kept.rows.map((r) => r.request_id)).toEqual(['r-6-0']);
    // The daily counts keep the days the log still covers, and drop the ones wholly past it.
    const days = await db.query<{ day: string; requests: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, requests FROM request_log_daily WHERE account_id = $1`,
      [accountId],
    );
    expect(days.rows).toEqual([{ day: new Date(Date.now() - 6 * 86400_000).toISOString().slice(0, 10), requests: 1 }]);
  });

  it('defaults to 30 days and refuses a value outside 1..366 at start', () => {
    const base = { DATABASE_URL: 'postgres://x@localhost/x' };
    expect(loadConfig(base).dashboard.requestLogRetentionDays).toBe(30);
    expect(loadConfig({ ...base, REQUEST_LOG_RETENTION_DAYS: '90' }).dashboard.requestLogRetentionDays).toBe(90);
    expect(() => loadConfig({ ...base, REQUEST_LOG_RETENTION_DAYS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REQUEST_LOG_RETENTION_DAYS: '400' })).toThrow(ConfigError);
  });
});
