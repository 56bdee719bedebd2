// A refusal of the metering statement that this code does not know — what a pod of the previous
// version meets during a rolling upgrade when the new statement refuses for a new reason (as
// key_paused once was) — is answered as a coded refusal, never a 500: 403 REQUEST_REFUSED naming
// the outcome, or 429 RATE_LIMITED with Retry-After when the outcome names a rate. Over real HTTP
// against the real service; this file's database wraps meter_reserve_batch so that the calls of
// one key get an outcome from the future.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { post, startTestService, toolCall } from '../helpers/service.ts';
import { signedInNewAccount } from '../dashboard/helpers.ts';

let db: TestDatabase;
let service: RunningService;

const RESULT_COLUMNS = `idx integer, outcome text, balance integer, plan text, requests_per_minute integer, burst integer, rl_remaining integer,
  rl_reset_seconds double precision, retry_after_seconds double precision, renewed boolean, key_cap integer, key_spent integer,
  key_cap_period text, key_rate_limit integer`;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.query(`
    CREATE TABLE future_outcome (key_id uuid PRIMARY KEY, outcome text NOT NULL, retry_after double precision);
    ALTER FUNCTION meter_reserve_batch(uuid[], text[], integer[], boolean[], text[], text[], uuid[], timestamptz, interval) RENAME TO meter_reserve_batch_current;
    CREATE FUNCTION meter_reserve_batch(p_accounts uuid[], p_request_ids text[], p_costs integer[], p_records boolean[], p_servers text[],
                                        p_tools text[], p_keys uuid[], p_now timestamptz, p_stale_after interval)
    RETURNS TABLE (${RESULT_COLUMNS}) LANGUAGE sql AS $$
      SELECT r.idx, coalesce(f.outcome, r.outcome), r.balance, r.plan, r.requests_per_minute, r.burst, r.rl_remaining, r.rl_reset_seconds,
             coalesce(f.retry_after, r.retry_after_seconds), r.renewed, r.key_cap, r.key_spent, r.key_cap_period, r.key_rate_limit
        FROM meter_reserve_batch_current(p_accounts, p_request_ids, p_costs, p_records, p_servers, p_tools, p_keys, p_now, p_stale_after) r
        LEFT JOIN future_outcome f ON f.key_id = p_keys[r.idx]
    $$;
  `);
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

describe('an outcome of the metering statement this code does not know', () => {
  it('is a coded refusal: 403 REQUEST_REFUSED with the outcome, or 429 RATE_LIMITED with Retry-After for a rate; never a 500', async () => {
    const { client } = await signedInNewAccount(service.url);
    const created = await client.post('/api/keys', { name: 'rolling' });
    const [key, keyId] = [created.body.plaintext as string, created.body.key.id as string];
    const call = () => post(`${service.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'x' }), { 'x-api-key': key });

    await db.query("INSERT INTO future_outcome (key_id, outcome) VALUES ($1, 'key_frozen')", [keyId]);
    const frozen = await call();
    expect(frozen.status).toBe(403);
    expect((frozen.body as { error: unknown }).error).toMatchObject({ code: 'REQUEST_REFUSED', details: { reason: 'key_frozen' } });

    await db.query("UPDATE future_outcome SET outcome = 'key_burst_rate_limited', retry_after = 2.4 WHERE key_id = $1", [keyId]);
    const limited = await call();
    expect(limited.status).toBe(429);
    expect((limited.body as { error: unknown }).error).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'key_burst_rate_limited', retry_after_seconds: 3 } });
    expect(limited.headers.get('retry-after')).toBe('3');

    await db.query('DELETE FROM future_outcome WHERE key_id = $1', [keyId]);
    expect((await call()).status).toBe(200);
  });
});
