// The gateway feeds the account's request log (issue 24): every authenticated /mcp request is
// logged with its request id, server, method, tool, status, error code and the credits it was
// charged in the end, and the dashboard's query finds it by key, tool and status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogPage } from '../../server/dashboard/requestLog.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url);
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

describe('the request log', () => {
  it('records a paid call, a refunded failure and a free listing with their request ids; filters find them', async () => {
    const { account, key, keyId } = await createAccountWithKey(db);
    const url = `${svc.url}/mcp/market-intelligence`;
    const h = { 'x-api-key': key };
    const paid = await post(url, toolCall('bench_echo', { message: 'hi' }), h);
    const failed = await post(url, toolCall('bench_fail'), h);
    const listed = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, h);
    // A refusal before authentication has no account to log to.
    await post(url, toolCall('bench_echo'), { 'x-api-key': 'cmcp_nope' });

    const ids = [paid, failed, listed].map((r) => r.headers.get('x-request-id'));
    let rows: Awaited<ReturnType<typeof requestLogPage>>['rows'] = [];
    const until = Date.now() + 10_000;
    while (rows.length < 3 && Date.now() < until) {
      rows = (await requestLogPage(db, account.id, { limit: 10 })).rows;
      if (rows.length < 3) await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({ key_id: keyId, server: 'market-intelligence', method: 'tools/call', tool: 'bench_echo', status: 200, error_code: null, credits: 1 });
    expect(byId.get(ids[1]!)).toMatchObject({ method: 'tools/call', tool: 'bench_fail', status: 502, error_code: 'UPSTREAM_ERROR', credits: 0 });
    expect(byId.get(ids[2]!)).toMatchObject({ method: 'tools/list', tool: null, status: 200, credits: 0 });

    expect((await requestLogPage(db, account.id, { limit: 10, status: 'error' })).rows.map((r) => r.request_id)).toEqual([ids[1]]);
    expect((await requestLogPage(db, account.id, { limit: 10, tool: 'bench_echo', key_id: keyId })).rows.map((r) => r.request_id)).toEqual([ids[0]]);
  });
});
