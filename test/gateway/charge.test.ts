// What the gateway does with what a tool reports beside its data: an answer with no data for
// what was asked (`empty`) is charged nothing, its reservation refunded in the ledger; `notes`
// (mixed dates, coverage gaps) reach the agent as metadata.notes and pass the output schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { acquireSharedService } from '../helpers/shared-service.ts';
import { balanceOf, createAccountWithKey, createUnlimitedPlan, ERAS, inEra, ledgerSum, mcpClientV2, post, toolCall } from '../helpers/service.ts';

let db: TestDatabase;
let svc: RunningService;
let release: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // The worker's default service (test/helpers/shared-service.ts): this file works on its own accounts.
  ({ db, svc, release } = await acquireSharedService());
});
afterAll(async () => {
  await release?.();
});

type Envelope = { success: true; data: Record<string, unknown>; metadata: { credits_used: number; remaining_credits: number; notes?: string[] } };
const envelopeOf = (body: unknown) => (body as { result: { structuredContent: Envelope } }).result.structuredContent;

describe.each(ERAS)('over the %s protocol', (era) => {
  it('an answer with no data costs nothing: credits_used 0, headers and balance unchanged, the reservation refunded', async () => {
    const { account, key } = await createAccountWithKey(db);
    const m = inEra(era, toolCall('get_social_sentiment', { asset: 'akropolis', from: '2025-10-01', to: '2025-10-07' }), { 'x-api-key': key });
    const res = await post(`${svc.url}/mcp/social-intelligence`, m.body, m.headers);
    expect(res.status).toBe(200);
    const env = envelopeOf(res.body);
    expect(env.data.posts).toBe(0);
    expect(env.metadata).toMatchObject({ credits_used: 0, remaining_credits: 150 });
    expect(res.headers.get('x-credits-used')).toBe('0');
    expect(res.headers.get('x-credits-remaining')).toBe('150');
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('the same tool with data is charged its cost', async () => {
    const { account, key } = await createAccountWithKey(db);
    const m = inEra(era, toolCall('get_social_sentiment', { asset: 'bitcoin', from: '2025-10-01', to: '2025-10-07' }), { 'x-api-key': key });
    const res = await post(`${svc.url}/mcp/social-intelligence`, m.body, m.headers);
    const env = envelopeOf(res.body);
    expect(env.metadata.credits_used).toBeGreaterThan(0);
    expect(await balanceOf(db, account.id)).toBe(150 - env.metadata.credits_used);
  });
});

it('notes reach the agent as metadata.notes, and the v2 client validates the result against the output schema', async () => {
  const { key } = await createAccountWithKey(db);
  const client = await mcpClientV2(svc.url, 'social-intelligence', key, 'pinned');
  await client.listTools();
  const result = await client.callTool({ name: 'get_social_volume', arguments: { asset: 'bitcoin', platform: 'reddit', from: '2025-10-01', to: '2025-11-30', interval: 'week' } });
  const env = result.structuredContent as Envelope;
  expect(env.metadata.notes?.join(' ')).toContain('comments in the data end 2025-10-30');
  await client.close();
});

// Issue 35 item 7: one pricing rule in the charge path (gateway/delivery.ts creditsFor), for every tool.
describe('empty answers are free by one rule, and a page cut for size is charged for what it holds', () => {
  const call = async (key: string, server: string, tool: string, args: Record<string, unknown>) => {
    const res = await post(`${svc.url}/mcp/${server}`, toolCall(tool, args), { 'x-api-key': key });
    return { res, env: res.status === 200 ? envelopeOf(res.body) : (undefined as never) };
  };

  it('get_top_movers with no mover above the volume floor: credits_used 0 and the balance unchanged', async () => {
    const { account, key } = await createAccountWithKey(db);
    const { env } = await call(key, 'market-intelligence', 'get_top_movers', { window: '24h', min_volume_usd: 1e12 });
    expect(env.data).toMatchObject({ gainers: [], losers: [], assets_considered: 0 });
    expect(env.metadata.credits_used).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(150);
    expect(await ledgerSum(db, account.id)).toBe(150);
  });

  it('a list page holding no items is free without the tool saying so (get_tvl_history past its last point)', async () => {
    const { account, key } = await createAccountWithKey(db);
    const pastTheEnd = Buffer.from(JSON.stringify({ o: 1_000_000 })).toString('base64url');
    const { res, env } = await call(key, 'project-intelligence', 'get_tvl_history', { total: true, cursor: pastTheEnd });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(env.data.points).toEqual([]);
    expect(env.metadata.credits_used).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('get_watch_activity with nothing watched is free', async () => {
    const { account, key } = await createAccountWithKey(db);
    const { env } = await call(key, 'whale-intelligence', 'get_watch_activity', {});
    expect(env.data).toMatchObject({ watches: 0, total: 0, activity: [] });
    expect(env.metadata.credits_used).toBe(0);
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it('get_portfolio of a Solana address on ethereum is a 400 that says why, not a $0 answer, and costs nothing', async () => {
    const { account, key } = await createAccountWithKey(db);
    const { res } = await call(key, 'portfolio-analytics', 'get_portfolio', { addresses: ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'], chains: ['ethereum'] });
    expect(res.status).toBe(400);
    const error = (res.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('INVALID_PARAMS');
    expect(error.message).toContain('is a Solana address');
    expect(await balanceOf(db, account.id)).toBe(150);
  });

  it("coindesk's scored calls, paged at limit 100 through pages cut for size: each cut page costs its share, the whole list what full pages would (22 credits, not 12 × 5 = 60), and the ledger and get_usage agree", async () => {
    // A plan of 150 credits without the free plan's rate limit (12 calls in a row).
    await createUnlimitedPlan(db, 'pages', 150);
    const { account, key } = await createAccountWithKey(db, { plan: 'pages' });
    const cost = 5;
    let cursor: string | undefined;
    let pages = 0;
    let items = 0;
    let charged = 0;
    do {
      const { res, env } = await call(key, 'kol-analytics', 'get_kol_performance', { handle: 'coindesk', limit: 100, ...(cursor ? { cursor } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const meta = env.metadata as typeof env.metadata & { truncated: boolean; next_cursor?: string };
      const held = (env.data.scored_calls as unknown[]).length;
      pages++;
      items += held;
      charged += meta.credits_used;
      expect(res.headers.get('x-credits-used')).toBe(String(meta.credits_used));
      if (meta.truncated) {
        expect(held).toBeLessThan(100);
        expect(meta.credits_used).toBeLessThan(cost);
        expect(meta.notes?.join(' ')).toContain(`holds ${held} of the 100 items asked for and is charged ${meta.credits_used} of ${cost} credits`);
      }
      cursor = meta.next_cursor;
    } while (cursor);
    expect(pages).toBeGreaterThan(Math.ceil(items / 100));
    // Full pages of the same items would cost ⌈items / 100⌉ × 5; the cut pages' shares add up to about that.
    expect(charged).toBeLessThanOrEqual(cost * Math.ceil(items / 100) + 2);
    expect(charged).toBeLessThan((pages * cost) / 2);
    expect(await balanceOf(db, account.id)).toBe(150 - charged);
    expect(await ledgerSum(db, account.id)).toBe(150 - charged);
    const usage = await call(key, 'kol-analytics', 'get_usage', {});
    expect(usage.env.data.credits_used).toBe(charged);
  });
});
