// The answer stage on its own (server/gateway/answer.ts): the SDK frames each message, a fresh
// low-level Server per request for the 2025 protocol and createMcpHandler for 2026-07-28. Requests
// get their JSON-RPC response, notifications 202, and JSON-RPC errors are flagged (the gateway
// counts them as failures and never charges them).
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolAnswerer } from '../../server/gateway/answer.ts';
import type { Classified } from '../../server/gateway/context.ts';
import type { RegisteredServer } from '../../server/mcp/registry.ts';

const server = {
  id: 'market-intelligence',
  name: 'market-intelligence',
  title: 'Market intelligence',
  description: 'test',
  icons: [],
  toolList: [{ name: 'bench_echo', title: 'Echo', inputSchema: { type: 'object' } }],
} as unknown as RegisteredServer;
const answerer = new ProtocolAnswerer('0.0.0', () => {});

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function legacy(message: Record<string, unknown>): Classified {
  return { era: 'legacy', message, server } as unknown as Classified;
}
function modern(message: Record<string, unknown>): Classified {
  return { era: 'modern', message, server } as unknown as Classified;
}
const modernHeaders = (method: string, name?: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'bench_echo', arguments: {} } };
const result: CallToolResult = { content: [{ type: 'text', text: '{"success":true}' }], structuredContent: { success: true } };

describe('2025 protocol (fresh Server over ExchangeTransport)', () => {
  it('frames the gateway result of a tools/call as the JSON-RPC response to its id', async () => {
    const answer = await answerer.answer(legacy(call), {}, result);
    expect(answer).toMatchObject({ status: 200, contentType: 'application/json', jsonrpcError: false });
    expect(JSON.parse(answer.body)).toEqual({ jsonrpc: '2.0', id: 5, result });
  });

  it('a result the SDK refuses comes back as a JSON-RPC error, flagged', async () => {
    const answer = await answerer.answer(legacy(call), {}, { content: [{ type: 'no-such-type' }] } as unknown as CallToolResult);
    expect(answer.jsonrpcError).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: expect.any(Number) } });
  });

  it('a notification is taken with 202 and no body; concurrent requests get their own answers', async () => {
    expect(await answerer.answer(legacy({ jsonrpc: '2.0', method: 'notifications/initialized' }), {}, undefined)).toEqual({
      status: 202,
      contentType: null,
      body: '',
      jsonrpcError: false,
    });
    const answers = await Promise.all([1, 2, 3].map((id) => answerer.answer(legacy({ jsonrpc: '2.0', id, method: 'ping' }), {}, undefined)));
    expect(answers.map((a) => (JSON.parse(a.body) as { id: number }).id)).toEqual([1, 2, 3]);
  });
});

describe('2026-07-28 (the SDK createMcpHandler)', () => {
  it('answers server/discover with the server identity, icons and the 2026-07-28 revision', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: MODERN_META } };
    const answer = await answerer.answer(modern(msg), modernHeaders('server/discover'), undefined);
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body) as { id: number; result: Record<string, unknown> };
    expect(body.id).toBe(1);
    expect(JSON.stringify(body.result)).toContain('2026-07-28');
    expect(JSON.stringify(body.result)).toContain('cryptomcp-market-intelligence');
  });

  it('tools/list carries the cache fields the revision requires', async () => {
    const msg = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: MODERN_META } };
    const answer = await answerer.answer(modern(msg), modernHeaders('tools/list'), undefined);
    const body = JSON.parse(answer.body) as { result: { tools: unknown[]; ttlMs: number; cacheScope: string } };
    expect(body.result.tools).toHaveLength(1);
    expect(body.result.ttlMs).toBeGreaterThan(0);
    expect(body.result.cacheScope).toBe('public');
  });

  it('frames a tools/call result; concurrent calls each get their own result', async () => {
    const results = [1, 2, 3].map((i): CallToolResult => ({ content: [{ type: 'text', text: `r${i}` }] }));
    const answers = await Promise.all(
      results.map((r, i) =>
        answerer.answer(
          modern({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'bench_echo', arguments: {}, _meta: MODERN_META } }),
          modernHeaders('tools/call', 'bench_echo'),
          r,
        ),
      ),
    );
    expect(answers.map((a) => (JSON.parse(a.body) as { result: CallToolResult }).result.content)).toEqual(results.map((r) => r.content));
  });
});

describe('answers that are the same for every caller are kept', () => {
  const otherMeta = { ...MODERN_META, 'io.modelcontextprotocol/clientInfo': { name: 'another-client', version: '9' }, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } };
  it.each([
    ['legacy', 'tools/list'],
    ['modern', 'tools/list'],
    ['modern', 'server/discover'],
  ] as const)('%s %s: the kept answer, re-framed with a new id, is what the SDK answers that request', async (era, method) => {
    const message = (id: number | string, meta: Record<string, unknown>) =>
      era === 'modern' ? { jsonrpc: '2.0', id, method, params: { _meta: meta } } : { jsonrpc: '2.0', id, method };
    const classified = (m: Record<string, unknown>) =>
      ({ era, message: m, server, protocolVersion: era === 'modern' ? '2026-07-28' : undefined }) as unknown as Classified;
    const headers = era === 'modern' ? modernHeaders(method) : {};
    await answerer.answer(classified(message(1, MODERN_META)), headers, undefined); // kept from here on
    const kept = await answerer.answer(classified(message('second', otherMeta)), headers, undefined);
    const fresh = await answerer.sdkAnswer(classified(message('second', otherMeta)), headers, undefined);
    expect(JSON.parse(kept.body)).toEqual(JSON.parse(fresh.body));
    expect(kept).toMatchObject({ status: fresh.status, jsonrpcError: false });
  });

  it('a tools/list with a cursor is not answered from what was kept', async () => {
    const m = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 'abc' } };
    const answer = await answerer.answer({ era: 'legacy', message: m, server } as unknown as Classified, {}, undefined);
    const fresh = await answerer.sdkAnswer({ era: 'legacy', message: m, server } as unknown as Classified, {}, undefined);
    expect(answer.body).toBe(fresh.body);
  });
});
