// DESIGN.md §3: connecting never locks a valid key out. A fresh free key (burst 10) connects all
// nine servers at once with each client generation (v1, v2 probing with server/discover, v2
// pinned to 2026-07-28), with the connect bucket at its defaults (the harness does not set it),
// and still has its whole plan rate for tools/call afterwards. A trailing slash reaches the same
// server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { acquireSharedService } from '../helpers/shared-service.ts';
import { createAccountWithKey, inEra, mcpClient, mcpClientV2, post, toolCall } from '../helpers/service.ts';

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

describe('a fresh free key connects all nine servers at once', () => {
  it.each(['v1', 'v2 auto', 'v2 pinned'] as const)('%s client: nine parallel connects and listings succeed, then the plan burst is intact', async (kind) => {
    const { key } = await createAccountWithKey(db); // free: 30/min, burst 10
    const clients = await Promise.all(
      SERVER_NAMES.map((server) =>
        kind === 'v1' ? mcpClient(svc.url, server, key) : mcpClientV2(svc.url, server, key, kind === 'v2 auto' ? 'auto' : 'pinned'),
      ),
    );
    const listings = await Promise.all(clients.map((c) => c.listTools()));
    expect(listings.every((l) => l.tools.length >= 3)).toBe(true);
    await Promise.all(clients.map((c) => c.close()));
    // None of that counted against the plan: the whole burst of 10 tools/call is still there.
    const calls = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(`${svc.url}/mcp/market-intelligence`, toolCall('get_usage', {}, i), { 'x-api-key': key })),
    );
    expect(calls.map((c) => c.status)).toEqual(Array(10).fill(200));
  });

  it('the connect bucket still bounds a key that loops on free methods (defaults: 300/min, burst 60)', async () => {
    const { key } = await createAccountWithKey(db);
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await post(`${svc.url}/mcp/kol-analytics`, { jsonrpc: '2.0', id: i, method: 'ping' }, { 'x-api-key': key });
      statuses.push(res.status);
      if (res.status === 429) {
        const body = res.body as { error: { code: string; details: Record<string, unknown> } };
        expect(body.error.code).toBe('RATE_LIMITED');
        expect(body.error.details).toMatchObject({ bucket: 'connect', limit_per_minute: 300 });
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        break;
      }
    }
    // The burst of 60 (plus what refilled during the loop) passed, then the bucket refused.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(60);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('streams', () => {
  it('2026-07-28 subscriptions/listen of the wrong shape is the JSON-RPC invalid-params error (notifications is required), answered at once', async () => {
    const { key } = await createAccountWithKey(db);
    const m = inEra('modern', { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { filter: { toolsListChanged: true } } }, { 'x-api-key': key });
    const res = await post(`${svc.url}/mcp/kol-analytics`, m.body, m.headers);
    expect(res.status).toBe(200);
    expect((res.body as { error: { code: number } }).error.code).toBe(-32602);
  });

  it('2026-07-28 subscriptions/listen of list changes only is acknowledged empty and closed at once (nothing changes here, so nothing is held open)', async () => {
    const { key } = await createAccountWithKey(db);
    const m = inEra('modern', { jsonrpc: '2.0', id: 'listen:0', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true } } }, { 'x-api-key': key });
    const res = await fetch(`${svc.url}/mcp/kol-analytics`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...m.headers }, body: JSON.stringify(m.body) });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = (await res.text()).split('\n\n').filter((f) => f.startsWith('event: message')).map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Record<string, unknown>);
    expect(frames).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: {}, _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:0' } } },
      expect.objectContaining({ jsonrpc: '2.0', id: 'listen:0', result: expect.objectContaining({ resultType: 'complete' }) }),
    ]);
  });
});

describe('paths', () => {
  it.each(['legacy', 'modern'] as const)('%s: /mcp/{server}/ (trailing slash) reaches the same server', async (era) => {
    const { key } = await createAccountWithKey(db);
    const m = inEra(era, toolCall('get_capabilities'), { 'x-api-key': key });
    const res = await post(`${svc.url}/mcp/token-intelligence/`, m.body, m.headers);
    expect(res.status).toBe(200);
    const env = (res.body as { result: { structuredContent: { data: { server: string } } } }).result.structuredContent;
    expect(env.data.server).toBe('token-intelligence');
  });
});
