// The SDK protocol layer on its own (server/mcp/protocol.ts): a fresh SDK Server per request over
// ExchangeTransport answers requests with their JSON-RPC response, notifications with 202, and
// flags JSON-RPC errors, which the gateway counts as failures and never charges.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { answerWithSdk } from '../../server/mcp/protocol.ts';
import type { RegisteredServer } from '../../server/mcp/registry.ts';

const server = { name: 'market-intelligence', title: 'Market intelligence', description: 'test', toolList: [] } as unknown as RegisteredServer;
const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'bench_echo', arguments: {} } };
const ask = (body: unknown, callResult?: CallToolResult) => answerWithSdk({ server, body, callResult, version: '0.0.0' });

describe('answerWithSdk', () => {
  it('frames the gateway result of a tools/call as the JSON-RPC response to its id', async () => {
    const result: CallToolResult = { content: [{ type: 'text', text: '{"success":true}' }], structuredContent: { success: true } };
    const answer = await ask(call, result);
    expect(answer).toMatchObject({ status: 200, contentType: 'application/json', jsonrpcError: false });
    expect(JSON.parse(answer.body)).toEqual({ jsonrpc: '2.0', id: 5, result });
  });

  it('a result the SDK refuses comes back as a JSON-RPC error, flagged', async () => {
    const answer = await ask(call, { content: [{ type: 'no-such-type' }] } as unknown as CallToolResult);
    expect(answer.status).toBe(200);
    expect(answer.jsonrpcError).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: expect.any(Number) } });
  });

  it('a notification is taken with 202 and no body; concurrent requests get their own answers', async () => {
    expect(await ask({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ status: 202, contentType: null, body: '', jsonrpcError: false });
    const answers = await Promise.all([1, 2, 3].map((id) => ask({ jsonrpc: '2.0', id, method: 'ping' })));
    expect(answers.map((a) => JSON.parse(a.body) as { id: number }).map((a) => a.id)).toEqual([1, 2, 3]);
  });
});
