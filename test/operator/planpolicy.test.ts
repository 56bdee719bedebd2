// PlanPolicy end to end: kubectl applies a plan to the stand-in API server, the operator writes
// it into the plans table of a real PostgreSQL (the gateway's migrations and plan functions),
// and the real gateway, running on the same database, enforces the new credits and rate limit
// on its next request. Deletion is refused while accounts are on the plan.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSetPlan } from '../../server/accounts/accounts.ts';
import { planGet } from '../../server/accounts/plans.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { PlanPolicy } from '../../operator/api/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createAccountWithKey, post, startTestService, toolCall } from '../helpers/service.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { eventually, settled, startOperator, type RunningOperator } from './support/harness.ts';
import { kubectl, writeKubeconfig } from './support/kubectl.ts';

let api: StandInApiServer;
let db: TestDatabase;
let op: RunningOperator;
let gateway: RunningService;
let k: ReturnType<typeof kubectl>;
let tmp: string;

function planFile(name: string, spec: Record<string, unknown>): string {
  const file = path.join(tmp, `${name}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name }, spec }));
  return file;
}

const policy = (name: string) => api.get('PlanPolicy', undefined, name) as unknown as PlanPolicy | undefined;
const condition = (name: string, type: string) => policy(name)?.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  api = new StandInApiServer({ bookmarkIntervalMs: 200 });
  await api.start();
  db = await createTestDatabase();
  const kc = writeKubeconfig(api.url);
  tmp = kc.dir;
  k = kubectl(kc.file);
  op = startOperator(api, db);
  gateway = await startTestService(db.url);
});

afterAll(async () => {
  await op?.stop();
  await gateway?.close();
  await api?.stop();
  await db?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const echo = (key: string, id: number) => post(`${gateway.url}/mcp/market-intelligence`, toolCall('bench_echo', { message: 'x' }, id), { 'x-api-key': key });

describe('PlanPolicy → plans table → gateway', () => {
  it('kubectl apply of the four DESIGN §5 plans: rows match, status Synced with syncedAt, the finalizer guards them', async () => {
    await k('apply', '-f', 'crds/examples/planpolicy-free.yaml', '-f', 'crds/examples/planpolicy-basic.yaml', '-f', 'crds/examples/planpolicy-pro.yaml', '-f', 'crds/examples/planpolicy-premium.yaml');
    await k('wait', '--for=condition=Synced', 'planpolicies', '--all', '--timeout=30s');
    expect(await planGet(db, 'pro')).toMatchObject({ credits: 15000, renewal: 'monthly', requests_per_minute: 180, burst: 40, max_keys: 25 });
    expect((await planGet(db, 'free'))!.servers).toHaveLength(9);
    const pro = policy('pro')!;
    expect(pro.metadata.finalizers).toEqual(['cryptomcp.dev/plan-in-use']);
    expect(pro.status).toMatchObject({ observedGeneration: 1, accounts: 0 });
    expect(pro.status!.syncedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const table = await k('get', 'planpolicies');
    expect(table.stdout).toMatch(/NAME\s+PLAN\s+CREDITS\s+RENEWAL\s+SYNCED\s+AGE/);
    expect(table.stdout).toMatch(/premium\s+premium\s+35000\s+Monthly\s+True/);
  });

  it('a new plan is enforced by the gateway on its next request: its credits for new accounts, its rate limit for every request', async () => {
    await k('apply', '-f', planFile('tiny', { plan: 'tiny', credits: 2, renewal: 'OneTime', rateLimit: { requestsPerMinute: 600, burst: 100 }, servers: ['market-intelligence'], maxKeys: 1 }));
    await eventually(() => condition('tiny', 'Ready')?.status === 'True', 20_000, 'tiny Ready');
    const { key } = await createAccountWithKey(db, { plan: 'tiny' });
    const first = await echo(key, 1);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-credits-remaining')).toBe('1');
    expect(first.headers.get('ratelimit-policy')).toBe('"tiny";q=600;w=60');
    expect((await echo(key, 2)).status).toBe(200);
    const third = await echo(key, 3);
    expect(third.status).toBe(402);
    expect((third.body as { error: { code: string } }).error.code).toBe('INSUFFICIENT_CREDITS');
    // Servers outside the plan are refused.
    const other = await post(`${gateway.url}/mcp/kol-analytics`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': key });
    expect((other.body as { error: { code: string } }).error.code).toBe('PLAN_FORBIDDEN');

    // Tighten the rate limit with kubectl: the very next requests see it.
    await k('apply', '-f', planFile('tiny', { plan: 'tiny', credits: 2, renewal: 'OneTime', rateLimit: { requestsPerMinute: 1, burst: 1 }, servers: ['market-intelligence'], maxKeys: 1 }));
    // The operator writes the row first and the status after it: wait for both.
    await eventually(async () => (await planGet(db, 'tiny'))?.requests_per_minute === 1, 20_000, 'row updated');
    await eventually(() => policy('tiny')?.status?.observedGeneration === 2, 20_000, 'status observedGeneration 2');
    // get_usage: a tools/call (so it counts toward the plan's rate) that costs nothing.
    const usage = (id: number) => post(`${gateway.url}/mcp/market-intelligence`, toolCall('get_usage', {}, id), { 'x-api-key': key });
    // One call a minute, a burst of one: of three calls in a row at most one passes. Which one
    // depends on the clock: the rate measured under the old limit may still be a few ms ahead of
    // now, refusing the first and letting the second through.
    const answers = [await usage(10), await usage(11), await usage(12)];
    const passed = answers.filter((r) => r.status === 200);
    expect(passed.length).toBeLessThanOrEqual(1);
    for (const r of passed) expect(r.headers.get('ratelimit-policy')).toBe('"tiny";q=1;w=60');
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect((r.body as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    }
  });

  it('an unchanged plan is not rewritten and its status not touched (syncedAt stays)', async () => {
    await settled(api);
    const syncedAt = policy('tiny')!.status!.syncedAt;
    const writes = api.writes.length;
    // A touch that does not change the spec (a label) still reconciles, but writes nothing.
    await k('label', 'planpolicy/tiny', 'team=billing');
    await settled(api);
    expect(api.writes.slice(writes)).toEqual(['patch PlanPolicy//tiny']);
    expect(policy('tiny')!.status!.syncedAt).toBe(syncedAt);
  });

  it('deleting a plan that accounts use is refused with PlanInUse until they move, then the row goes', async () => {
    const { account } = await createAccountWithKey(db, { plan: 'basic' });
    await k('delete', 'planpolicy/basic', '--wait=false');
    await eventually(() => condition('basic', 'Ready')?.reason === 'PlanInUse', 20_000, 'PlanInUse');
    expect(condition('basic', 'Ready')!.message).toMatch(/1 account\(s\) are on plan "basic"/);
    expect(policy('basic')!.metadata.deletionTimestamp).toBeTruthy();
    expect(await planGet(db, 'basic')).toBeDefined();
    await accountSetPlan(db, account.id, 'pro');
    await eventually(() => !policy('basic'), 20_000, 'PlanPolicy basic gone');
    expect(await planGet(db, 'basic')).toBeUndefined();
  });

  it('two policies naming one plan: the older keeps it, the newer gets Accepted=False / PlanConflict', async () => {
    await k('apply', '-f', planFile('pro-copy', { plan: 'pro', credits: 1, renewal: 'Monthly', rateLimit: { requestsPerMinute: 5, burst: 1 } }));
    await eventually(() => condition('pro-copy', 'Accepted')?.reason === 'PlanConflict', 20_000, 'PlanConflict');
    expect(condition('pro-copy', 'Accepted')!.message).toMatch(/already defined by PlanPolicy pro/);
    expect((await planGet(db, 'pro'))!.credits).toBe(15000);
  });

  it('an invalid spec (stored before the schema said so) is refused with Accepted=False and never reaches the table', async () => {
    api.admission = false;
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'PlanPolicy', metadata: { name: 'bad' }, spec: { plan: 'bad', credits: -5, renewal: 'Weekly', rateLimit: { requestsPerMinute: 10 } } } as never);
    api.admission = true;
    await eventually(() => condition('bad', 'Accepted')?.status === 'False', 20_000, 'Accepted=False');
    expect(condition('bad', 'Accepted')).toMatchObject({ reason: 'InvalidSpec' });
    expect(condition('bad', 'Accepted')!.message).toMatch(/credits.*renewal/);
    expect(await planGet(db, 'bad')).toBeUndefined();
  });

  it('the API server rejects an invalid PlanPolicy through kubectl with the CRD schema message', async () => {
    await expect(k('apply', '-f', planFile('worse', { plan: 'worse', credits: 1, renewal: 'Monthly', rateLimit: { requestsPerMinute: 5, burst: 50 } }))).rejects.toThrow(/burst must not exceed/);
  });
});
