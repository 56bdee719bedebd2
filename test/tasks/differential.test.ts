// The frames of task answers (docs/tasks.md) are the SDK's where the SDK can frame them: each
// tasks/* message goes through classify() as the gateway sends it, then through answer() (the
// 2026-07-28 frame of modern.ts; the SDK's Server on 2025-11-25) and sdkAnswer() (the SDK's
// createMcpHandler / Server with a handler that returns the same answer). Compared as bytes.
// Not compared: the tools/call answer that creates a task, which the SDK's Server refuses to
// frame on any revision ("content is required when the body carries 'task'"), so it is framed
// by hand (answer.ts plainFrame, modern.ts frameTask) and checked by test/tasks/tasks.test.ts
// through the clients.
import type { IncomingHttpHeaders } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { offlineRegistry } from '../../scripts/offline-registry.ts';
import { ProtocolAnswerer } from '../../server/gateway/answer.ts';
import { classify } from '../../server/gateway/classify.ts';
import type { Authorized } from '../../server/gateway/context.ts';
import { withoutAccountTools, type RegisteredServer } from '../../server/mcp/registry.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { getTaskResult, TASKS_EXTENSION, taskFields, taskNotFound, type TaskAnswer, type TaskEra } from '../../server/tasks/protocol.ts';
import type { TaskRow } from '../../server/tasks/store.ts';
import { inEra, type Era } from '../helpers/service.ts';

const answerer = new ProtocolAnswerer('9.9.9', () => {});
const grant = { plan: 'free', servers: [...SERVER_NAMES], account_id: '00000000-0000-4000-8000-000000000001' } as unknown as Authorized['grant'];
let server: RegisteredServer;

beforeAll(() => {
  server = offlineRegistry().get('price-prediction')!;
});

const TASK_ID = '6f1c1d2e-0000-4000-8000-0000000000aa';
const envelope = { success: true, data: { asset: { id: 'bitcoin' }, mase: 0.97 }, metadata: { credits_used: 10 } };
function row(status: TaskRow['status']): TaskRow {
  return {
    id: TASK_ID,
    account_id: grant.account_id,
    server: 'price-prediction',
    tool: 'backtest_forecast',
    status,
    status_message: status === 'working' ? null : `the task is ${status}`,
    result: status === 'completed' ? { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope } : null,
    error: status === 'failed' ? { code: -32603, message: 'Upstream failed.', data: { code: 'UPSTREAM_ERROR' } } : null,
    ttl_ms: 3_600_000,
    poll_interval_ms: 2000,
    created_at: new Date('2026-11-26T10:00:00.000Z'),
    updated_at: new Date('2026-11-26T10:00:05.000Z'),
  };
}

/** The message, framed and classified as the gateway does (with the extension declared on 2026-07-28), answered both ways. */
async function bothAnswers(era: Era, message: Record<string, unknown>, task: TaskAnswer) {
  const framed = inEra(era, message, { 'mcp-name': TASK_ID }) as { body: Record<string, unknown>; headers: Record<string, string> };
  if (era === 'modern') {
    const params = framed.body.params as { _meta: Record<string, unknown> };
    params._meta['io.modelcontextprotocol/clientCapabilities'] = { extensions: { [TASKS_EXTENSION]: {} } };
  }
  const headers: IncomingHttpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...framed.headers };
  const call = classify({ requestId: 'r', server, grant }, framed.body, headers);
  expect(call.era).toBe(era);
  return { direct: await answerer.answer(call, headers, undefined, task), sdk: await answerer.sdkAnswer(call, headers, undefined, task) };
}

describe.each(['modern', 'legacy'] as const)('over %s', (era: TaskEra) => {
  it('tasks/get of a working, completed, failed and cancelled task, and of an unknown one, as the SDK frames it', async () => {
    for (const status of ['working', 'completed', 'failed', 'cancelled'] as const) {
      const task = { result: getTaskResult(row(status), era) };
      const answers = await bothAnswers(era, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: TASK_ID } }, task);
      expect(answers.direct, status).toEqual(answers.sdk);
      expect(answers.direct.jsonrpcError).toBe(false);
      const body = JSON.parse(answers.direct.body) as { result: Record<string, unknown> };
      expect(body.result).toMatchObject({ taskId: TASK_ID, status });
    }
    const missing = await bothAnswers(era, { jsonrpc: '2.0', id: 'x', method: 'tasks/get', params: { taskId: TASK_ID } }, taskNotFound(TASK_ID));
    expect(missing.direct).toEqual(missing.sdk);
    expect(JSON.parse(missing.direct.body)).toMatchObject({ error: { code: -32602 } });
  });

  it('tasks/cancel as the SDK frames it', async () => {
    const ack = era === 'modern' ? { result: {} } : { result: taskFields(row('cancelled'), era) };
    const answers = await bothAnswers(era, { jsonrpc: '2.0', id: 4, method: 'tasks/cancel', params: { taskId: TASK_ID } }, ack);
    expect(answers.direct).toEqual(answers.sdk);
  });
});

describe('a path that runs no task (x402)', () => {
  it('declares no tasks on either revision, and its long tools say nothing of tasks', async () => {
    const open = withoutAccountTools(offlineRegistry()).get('price-prediction')!;
    const backtest = open.tools.get('backtest_forecast')!;
    expect(backtest.listing.execution).toBeUndefined();
    expect(backtest.description).not.toContain('MCP task');
    expect(server.tools.get('backtest_forecast')!.listing.execution).toEqual({ taskSupport: 'optional' });
    const plain = new ProtocolAnswerer('9.9.9', () => {}, { tasks: false });
    const headers: IncomingHttpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const legacy = await plain.answer(classify({ requestId: 'r', server: open, grant }, init, headers), headers, undefined);
    expect((JSON.parse(legacy.body) as { result: { capabilities: unknown } }).result.capabilities).toEqual({ tools: { listChanged: false } });
    const framed = inEra('modern', { jsonrpc: '2.0', id: 2, method: 'server/discover' }) as { body: Record<string, unknown>; headers: Record<string, string> };
    const modernHeaders = { ...headers, ...framed.headers };
    const discover = await plain.answer(classify({ requestId: 'r', server: open, grant }, framed.body, modernHeaders), modernHeaders, undefined);
    expect((JSON.parse(discover.body) as { result: { capabilities: unknown } }).result.capabilities).toEqual({ tools: { listChanged: false } });
  });
});
