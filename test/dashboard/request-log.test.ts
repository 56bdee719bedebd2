// The request log behind the dashboard (server/dashboard/requestLog.ts, GET /api/requests): what
// the gateway's hook records is read back newest first, filtered by key, server, tool and status,
// paged without gaps or repeats, only for the signed-in account, and only within the retention.
// Whatever an entry holds, it is stored made to fit, or alone is dropped: never a whole batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../server/db/pool.ts';
import { createRequestLog, requestLogSweep, type RequestLogEntry } from '../../server/dashboard/requestLog.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { CookieClient, signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let pool: Database;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence' });
  pool = createDatabase({ url: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.close();
  await service?.close();
  await db?.drop();
});

const signedIn = () => signedInNewAccount(service.url);

describe('request log', () => {
  it('shows what the hook recorded, newest first, filtered by key, server, tool and status, paged without gaps, to its account only', async () => {
    const { client, accountId } = await signedIn();
    const a = (await client.post('/api/keys', { name: 'a' })).body.key.id as string;
    const b = (await client.post('/api/keys', { name: 'b' })).body.key.id as string;
    const log = createRequestLog(pool, { flushMs: 60_000 });
    const t0 = Date.now();
    const entry = (i: number, over: Partial<RequestLogEntry>): RequestLogEntry => ({
      account_id: accountId,
      key_id: a,
      request_id: `req-${i}`,
      server: 'market-intelligence',
      method: 'tools/call',
      tool: 'get_prices',
      status: 200,
      error_code: null,
      credits: 2,
      latency_ms: 12.4,
      created_at: new Date(t0 + i),
      ...over,
    });
    log.record(entry(1, {}));
    log.record(entry(2, { key_id: b, tool: 'get_capabilities', credits: 0 }));
    log.record(entry(3, { status: 429, error_code: 'RATE_LIMITED', credits: 0 }));
    log.record(entry(4, { status: 402, error_code: 'INSUFFICIENT_CREDITS', credits: 0, key_id: b }));
    log.record(entry(5, { server: 'price-prediction', tool: 'get_forecast' }));
    await log.close();

    const all = (await client.get('/api/requests')).body;
    expect(all.rows.map((r: { request_id: string }) => r.request_id)).toEqual(['req-5', 'req-4', 'req-3', 'req-2', 'req-1']);
    expect(all.rows[4]).toMatchObject({ key_id: a, server: 'market-intelligence', tool: 'get_prices', status: 200, credits: 2, latency_ms: 12 });
    const ids = async (query: string) => (await client.get(`/api/requests?${query}`)).body.rows.map((r: { request_id: string }) => r.request_id);
    expect(await ids(`key=${b}`)).toEqual(['req-4', 'req-2']);
    expect(await ids('server=price-prediction')).toEqual(['req-5']);
    expect(await ids('tool=get_prices')).toEqual(['req-4', 'req-3', 'req-1']);
    expect(await ids('status=ok')).toEqual(['req-5', 'req-2', 'req-1']);
    expect(await ids('status=rate_limited')).toEqual(['req-3']);
    expect(await ids('status=error')).toEqual(['req-4']);
    expect(await ids('status=402')).toEqual(['req-4']);
    // Pages of two: every row once, in order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { rows: { request_id: string }[]; next: string | null } = (await client.get(`/api/requests?limit=2${cursor ? `&before=${cursor}` : ''}`)).body;
      seen.push(...page.rows.map((r) => r.request_id));
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual(['req-5', 'req-4', 'req-3', 'req-2', 'req-1']);
    expect((await client.get('/api/requests?status=teapot')).status).toBe(400);
    const stranger = await signedIn();
    expect((await stranger.client.get('/api/requests')).body.rows).toEqual([]);
    expect((await new CookieClient(service.url).get('/api/requests')).status).toBe(401);
  });

  it('rows past the retention period are neither shown nor kept by the sweep', async () => {
    const { client, accountId } = await signedIn();
    const log = createRequestLog(pool);
    const base = { account_id: accountId, key_id: null, server: 'market-intelligence', method: 'tools/list', tool: null, status: 200, error_code: null, credits: 0, latency_ms: 3 };
    log.record({ ...base, request_id: 'old', created_at: new Date(Date.now() - 31 * 86400_000) });
    log.record({ ...base, request_id: 'new', created_at: new Date() });
    await log.close();
    expect((await client.get('/api/requests')).body.rows.map((r: { request_id: string }) => r.request_id)).toEqual(['new']);
    await requestLogSweep(pool);
    const kept = await pool.query<{ request_id: string }>('SELECT request_id FROM request_log WHERE account_id = $1', [accountId]);
    expect(kept.rows.map((r) => r.request_id)).toEqual(['new']);
  });

  it('every field is stored clamped and cleaned, and a row that still cannot be stored is dropped and counted alone, its batch kept', async () => {
    const { client, accountId } = await signedIn();
    const other = await signedIn();
    const errors: string[] = [];
    const log = createRequestLog(pool, { flushMs: 60_000, onError: (err) => errors.push((err as Error).message) });
    const base = { account_id: accountId, key_id: null, server: 'market-intelligence', method: 'tools/call', tool: 'get_prices', status: 200, error_code: null, credits: 1, latency_ms: 5, created_at: new Date() };
    log.record({ ...base, request_id: 'ok-1' });
    log.record({
      account_id: other.accountId,
      key_id: null,
      request_id: `r${'\u0000'.repeat(200)}`,
      server: `srv\u0000${'s'.repeat(100)}`,
      method: 'm\u0007\u009b',
      tool: `t${'\u{1F600}'.repeat(200)}`,
      status: 1000,
      error_code: `E${'\n'.repeat(80)}`,
      credits: -3,
      latency_ms: Number.NaN,
      created_at: new Date(Number.NaN),
    });
    // Nothing makes a malformed account id fit its uuid column: this row alone must go.
    log.record({ ...base, account_id: 'not-a-uuid', request_id: 'unstorable' });
    log.record({ ...base, request_id: 'ok-2', credits: 2 });
    await log.close();

    expect((await client.get('/api/requests')).body.rows.map((r: { request_id: string }) => r.request_id)).toEqual(['ok-2', 'ok-1']);
    const daily = await pool.query<{ requests: number; credits: string }>('SELECT requests, credits FROM request_log_daily WHERE account_id = $1', [accountId]);
    expect(daily.rows.map((r) => [r.requests, Number(r.credits)])).toEqual([[2, 3]]);
    expect(log.dropped).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^1 request log entry dropped: invalid input syntax for type uuid/);

    const [row] = (await other.client.get('/api/requests')).body.rows;
    expect(row).toMatchObject({
      request_id: `r${'\ufffd'.repeat(126)}…`,
      server: `srv\ufffd${'s'.repeat(59)}…`,
      method: 'm\ufffd\ufffd',
      tool: `t${'\u{1F600}'.repeat(126)}…`,
      status: 599,
      error_code: `E${'\ufffd'.repeat(62)}…`,
      credits: 0,
      latency_ms: 0,
    });
    expect(Math.abs(Date.parse(row.created_at) - Date.now())).toBeLessThan(60_000);
  });
});
