// What the gateway does with what a tool reports beside its data: an answer with no data for
// what was asked (`empty`) is charged nothing, its reservation refunded in the ledger; `notes`
// (mixed dates, coverage gaps) reach the agent as metadata.notes and pass the output schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, createAccountWithKey, ERAS, inEra, ledgerSum, mcpClientV2, post, startTestService, toolCall } from '../helpers/service.ts';

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
