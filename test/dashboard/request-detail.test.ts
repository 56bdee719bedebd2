// The request log that debugs (issue 36, item 4), from calls made over real HTTP: a failed call
// keeps the tool it named (UNKNOWN_TOOL, INVALID_PARAMS, KEY_SCOPE_FORBIDDEN on a server's path
// and on the all-in-one endpoint), with its message and the size of its arguments; protocol
// probes (GET, DELETE answered 405) are not logged as failures; one request is found by its id
// and opened in full; a range of UTC days bounds the list; the CSV export streams every matching
// row with RFC 4180 quoting (and a formula-looking field made inert).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogInsertMany } from '../../server/dashboard/requestLog.ts';
import type { RunningService } from '../../server/runtime.ts';
import { addDays } from '../../server/lib/dates.ts';
import { clearOfMidnight } from '../helpers/wait.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { post, startTestService, toolCall } from '../helpers/service.ts';
import { eventually } from '../helpers/wait.ts';
import { signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence,price-prediction' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

interface Row {
  request_id: string;
  tool: string | null;
  method: string;
  status: number;
  error_code: string | null;
  message: string | null;
  args_bytes: number | null;
  server: string;
}

describe('a request log that debugs', () => {
  it('failed calls keep the tool they named, with message and argument size; probes are not failures; one request opens by its id', async () => {
    const { client } = await signedInNewAccount(service.url);
    const key = (await client.post('/api/keys', { name: 'all' })).body.plaintext as string;
    const scoped = (await client.post('/api/keys', { name: 'prices only', servers: ['price-prediction'] })).body.plaintext as string;
    const market = `${service.url}/mcp/market-intelligence`;
    const answers: Record<string, { status: number; id: string }> = {};
    const call = async (name: string, url: string, apiKey: string, body: unknown) => {
      const res = await post(url, body, { 'x-api-key': apiKey });
      answers[name] = { status: res.status, id: res.headers.get('x-request-id') ?? '' };
    };
    await call('unknown', market, key, toolCall('get_pricez', { ids: ['bitcoin'] }));
    await call('invalid', market, key, toolCall('bench_echo', { message: 42 }));
    await call('scope', market, scoped, toolCall('bench_echo', { message: 'hi' }));
    await call('scope-all-in-one', `${service.url}/mcp`, scoped, toolCall('bench_echo', { message: 'hi' }));
    await call('ok', market, key, toolCall('bench_echo', { message: 'hello' }));
    // mcp-remote's probes: a GET for a stream and a DELETE at the end of a session.
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(market, { method, headers: { 'x-api-key': key, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
    }
    expect(Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v.status]))).toEqual({
      unknown: 400,
      invalid: 400,
      scope: 403,
      'scope-all-in-one': 403,
      ok: 200,
    });

    const rows = await eventually(async () => {
      const r = (await client.get('/api/requests?limit=200')).body.rows as Row[];
      return r.length >= 5 ? r : undefined;
    });
    expect(rows.filter((r) => r.status === 405)).toEqual([]);
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    expect(byId.get(answers.unknown!.id)).toMatchObject({ method: 'tools/call', tool: 'get_pricez', error_code: 'UNKNOWN_TOOL', message: 'This server has no tool of that name.', args_bytes: 19 });
    expect(byId.get(answers.invalid!.id)).toMatchObject({ tool: 'bench_echo', error_code: 'INVALID_PARAMS', args_bytes: 14 });
    expect(byId.get(answers.invalid!.id)!.message).toMatch(/^The tool arguments are invalid\. message: /);
    expect(byId.get(answers.scope!.id)).toMatchObject({ method: 'tools/call', tool: 'bench_echo', error_code: 'KEY_SCOPE_FORBIDDEN', status: 403 });
    expect(byId.get(answers['scope-all-in-one']!.id)).toMatchObject({ tool: 'bench_echo', error_code: 'KEY_SCOPE_FORBIDDEN', status: 403 });
    expect(byId.get(answers.ok!.id)).toMatchObject({ tool: 'bench_echo', error_code: null, message: null, status: 200 });

    // Filtering by tool finds the failed calls too.
    const echo = (await client.get('/api/requests?tool=bench_echo&status=error')).body.rows as Row[];
    expect(echo.map((r) => r.error_code).sort()).toEqual(['INVALID_PARAMS', 'KEY_SCOPE_FORBIDDEN', 'KEY_SCOPE_FORBIDDEN']);

    // Opened by the id its answer quoted; by the list's filter too; another account sees nothing.
    const detail = await client.get(`/api/requests/${encodeURIComponent(answers.unknown!.id)}`);
    expect(detail.status).toBe(200);
    expect(detail.body.request).toMatchObject({ request_id: answers.unknown!.id, tool: 'get_pricez', status: 400, server: 'market-intelligence' });
    expect((await client.get(`/api/requests?request_id=${encodeURIComponent(answers.ok!.id)}`)).body.rows).toHaveLength(1);
    const stranger = await signedInNewAccount(service.url);
    expect((await stranger.client.get(`/api/requests/${encodeURIComponent(answers.unknown!.id)}`)).status).toBe(404);
  });

  it('a refusal of the key scope still wins over a body too large or not JSON (row 3 before row 5)', async () => {
    const { client } = await signedInNewAccount(service.url);
    const scoped = (await client.post('/api/keys', { name: 'prices only', servers: ['price-prediction'] })).body.plaintext as string;
    const market = `${service.url}/mcp/market-intelligence`;
    const big = await post(market, JSON.stringify(toolCall('bench_echo', { message: 'x'.repeat(1_100_000) })), { 'x-api-key': scoped });
    expect([big.status, (big.body as { error: { code: string } }).error.code]).toEqual([403, 'KEY_SCOPE_FORBIDDEN']);
    const garbage = await post(market, '{not json', { 'x-api-key': scoped });
    expect([garbage.status, (garbage.body as { error: { code: string } }).error.code]).toEqual([403, 'KEY_SCOPE_FORBIDDEN']);
    const get = await fetch(market, { headers: { 'x-api-key': scoped } });
    expect(get.status).toBe(403);
  });

  it('a range of UTC days bounds the list; the CSV streams every matching row, RFC 4180 quoted, formulas made inert', async () => {
    await clearOfMidnight();
    const { client, accountId } = await signedInNewAccount(service.url);
    const today = new Date().toISOString().slice(0, 10);
    const base = { account_id: accountId, key_id: null, server: 'market-intelligence', method: 'tools/call', status: 400, error_code: 'UNKNOWN_TOOL', credits: 0, latency_ms: 3 };
    await requestLogInsertMany(db, [
      { ...base, request_id: 'old', tool: 'get_prices', created_at: new Date(`${addDays(today, -3)}T12:00:00Z`) },
      { ...base, request_id: 'quoted', tool: '=HYPERLINK("x"),1', message: 'one, "two"', created_at: new Date(`${addDays(today, -1)}T00:00:00Z`) },
      ...Array.from({ length: 1205 }, (_, i) => ({ ...base, request_id: `bulk-${i}`, tool: 'get_prices', created_at: new Date() })),
    ]);
    const inRange = (await client.get(`/api/requests?from=${addDays(today, -3)}&to=${addDays(today, -1)}`)).body.rows as Row[];
    expect(inRange.map((r) => r.request_id)).toEqual(['quoted', 'old']);
    expect((await client.get(`/api/requests?from=${addDays(today, -2)}&to=${addDays(today, -1)}`)).body.rows.map((r: Row) => r.request_id)).toEqual(['quoted']);
    expect((await client.get(`/api/requests?from=${today}&to=${addDays(today, -1)}`)).status).toBe(400);

    const csv = await client.get(`/api/requests.csv?from=${addDays(today, -1)}&to=${addDays(today, -1)}`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.body).toBe(
      'time,request_id,key_id,server,method,tool,status,error_code,message,credits,latency_ms,args_bytes\r\n' +
        `${addDays(today, -1)}T00:00:00.000Z,quoted,,market-intelligence,tools/call,"'=HYPERLINK(""x""),1",400,UNKNOWN_TOOL,"one, ""two""",0,3,\r\n`,
    );
    // Every row, across the export's internal pages (1000 rows each).
    const all = (await client.get('/api/requests.csv')).body as string;
    expect(all.split('\r\n').filter((l) => l.includes(',bulk-'))).toHaveLength(1205);
  });
});
