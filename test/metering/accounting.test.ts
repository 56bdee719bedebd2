// DESIGN.md §3 and §5, exact accounting: a free account (150 credits) spends exactly its allowance
// on a cost-1 tool through the MCP SDK client, then gets 402 with required/available; what the
// answers reported as charged is exactly what left the balance, and the balance equals the sum
// of the ledger. Methods other than tools/call cost nothing but still count toward the rate limit.
// The service runs on an injected clock, so the test steps over the rate limit without waiting.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, ledgerSum, mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
/** The metering clock of the service; only this test moves it. */
let clock = new Date('2026-03-01T12:00:00.000Z');
/** One GCRA emission interval of the free plan (30 requests/min). */
const FREE_INTERVAL_MS = 2000;
const tick = () => {
  clock = new Date(clock.getTime() + FREE_INTERVAL_MS);
};

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: '0' }, { now: () => clock });
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

interface Envelope {
  success: true;
  data: unknown;
  metadata: { credits_used: number; remaining_credits: number; request_id: string };
}
interface ErrorBody {
  success: false;
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** The error envelope the gateway sent, as the SDK client reports a non-2xx answer. */
function errorBodyOf(err: unknown): { status: number; body: ErrorBody } {
  if (!(err instanceof StreamableHTTPError)) throw err;
  const text = err.message.slice(err.message.indexOf('{'));
  return { status: err.code ?? -1, body: JSON.parse(text) as ErrorBody };
}

describe('exact accounting (DESIGN §5)', () => {
  it('a free account spends exactly its 150 credits on a cost-1 tool, then gets 402 INSUFFICIENT_CREDITS; credits_used sums to what left the balance', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'free' });
    const client = await mcpClient(svc.url, 'market-intelligence', key);
    let charged = 0;
    let successes = 0;
    let lastRemaining: number | undefined;
    let refusal: { status: number; body: ErrorBody } | undefined;
    try {
      for (let i = 0; i < 200 && !refusal; i++) {
        tick();
        try {
          const result = await client.callTool({ name: 'bench_echo', arguments: { message: `call ${i}` } });
          const env = result.structuredContent as unknown as Envelope;
          expect(env.success).toBe(true);
          expect(env.data).toEqual({ echo: `call ${i}` });
          charged += env.metadata.credits_used;
          successes += 1;
          // Each answer reports the balance it left behind, one credit lower each time.
          expect(env.metadata.remaining_credits).toBe(150 - charged);
          lastRemaining = env.metadata.remaining_credits;
        } catch (err) {
          refusal = errorBodyOf(err);
        }
      }
    } finally {
      await client.close();
    }

    expect(refusal, 'the account never ran out of credits').toBeDefined();
    expect(refusal!.status).toBe(402);
    expect(refusal!.body.error.code).toBe('INSUFFICIENT_CREDITS');
    expect(refusal!.body.error.details).toMatchObject({ required: 1, available: 0 });

    const balance = await balanceOf(db, account.id);
    expect(successes).toBe(150);
    expect(lastRemaining).toBe(0);
    expect(balance).toBe(0);
    expect(charged).toBe(150 - balance);
    expect(await ledgerSum(db, account.id)).toBe(balance);

    // The refused call left no trace in the ledger; each success has one reserve row of -1,
    // marked charged once the batch settles.
    await expect
      .poll(
        async () =>
          (
            await db.query<{ n: number }>(
              `SELECT count(*) AS n FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND delta = -1 AND resolution = 'charged'`,
              [account.id],
            )
          ).rows[0]!.n,
        { timeout: 5000, interval: 50 },
      )
      .toBe(150);
    const kinds = await db.query<{ kind: string; n: number }>(
      'SELECT kind, count(*) AS n FROM credit_ledger WHERE account_id = $1 GROUP BY kind ORDER BY kind',
      [account.id],
    );
    expect(kinds.rows).toEqual([
      { kind: 'grant', n: 1 },
      { kind: 'reserve', n: 150 },
    ]);
  });

  it('a raw tools/call at zero balance is refused with 402 and its details, and charges nothing', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'free' });
    await db.query('SELECT account_grant($1, -150, $2)', [account.id, `drain:${account.id}`]);
    tick();
    const res = await post(`${svc.url}/mcp/market-intelligence`, toolCall('bench_echo'), { 'x-api-key': key });
    expect(res.status).toBe(402);
    const body = res.body as ErrorBody;
    expect(body.error.code).toBe('INSUFFICIENT_CREDITS');
    expect(body.error.details).toMatchObject({ required: 1, available: 0, request_id: res.headers.get('x-request-id') });
    expect(res.headers.get('x-credits-used')).toBe('0');
    expect(res.headers.get('x-credits-remaining')).toBe('0');
    expect(await balanceOf(db, account.id)).toBe(0);
    expect(await ledgerSum(db, account.id)).toBe(0);
  });

  it('tools/call counts toward the plan rate limit and free methods (tools/list, ping) do not: with the clock frozen, 10 calls pass (the burst), the 11th gets 429, listing still answers at 0 credits', async () => {
    const { account, key } = await createAccountWithKey(db, { plan: 'free' });
    const url = `${svc.url}/mcp/market-intelligence`;
    const h = { 'x-api-key': key };
    // The clock does not move during this test: only the burst tolerance admits requests.
    for (let i = 0; i < 10; i++) {
      const free = await post(url, i % 2 === 0 ? { jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' } : { jsonrpc: '2.0', id: `p${i}`, method: 'ping' }, h);
      expect(free.status).toBe(200);
      expect(free.headers.get('x-credits-used')).toBe('0');
      const res = await post(url, toolCall('bench_echo', {}, i), h);
      expect(res.status, `call ${i + 1} of the burst: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.headers.get('x-credits-used')).toBe('1');
      expect(res.headers.get('x-credits-remaining')).toBe(String(149 - i));
      expect(res.headers.get('ratelimit')).toBe(`"free";r=${9 - i};t=${2 * (i + 1)}`);
    }
    const limited = await post(url, toolCall('bench_echo', {}, 10), h);
    expect(limited.status).toBe(429);
    const err = (limited.body as ErrorBody).error;
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_per_minute: 30, retry_after_seconds: 2, bucket: 'plan' });
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.headers.get('x-credits-used')).toBe('0');

    // Listing is not counted against the plan, so it still answers, and costs nothing.
    const listed = await post(url, { jsonrpc: '2.0', id: 'after', method: 'tools/list' }, h);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-credits-used')).toBe('0');

    // Charged exactly the ten answered calls; the refused one left nothing in the ledger.
    expect(await balanceOf(db, account.id)).toBe(140);
    expect(await ledgerSum(db, account.id)).toBe(140);
    const rows = await db.query<{ kind: string; n: number }>('SELECT kind, count(*)::int AS n FROM credit_ledger WHERE account_id = $1 GROUP BY kind ORDER BY kind', [account.id]);
    expect(rows.rows).toEqual([
      { kind: 'grant', n: 1 },
      { kind: 'reserve', n: 10 },
    ]);

    // One emission interval later, exactly one more call is admitted.
    tick();
    expect((await post(url, toolCall('bench_echo', {}, 11), h)).status).toBe(200);
    expect((await post(url, toolCall('bench_echo', {}, 12), h)).status).toBe(429);
  });
});
