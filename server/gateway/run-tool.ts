// Stage 8 (DESIGN.md §3 row 8): the tool runs with its validated arguments, under the tool
// timeout, and is aborted when the client goes away. Its output becomes the success envelope.
import { ApiError } from '../errors.ts';
import { capResult, RESULT_CHAR_LIMIT, staleness } from '../mcp/envelope.ts';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolOutput, UsageReader } from '../mcp/tool.ts';
import type { Reserved } from './context.ts';

export interface ToolRun {
  usage: UsageReader;
  timeoutMs: number;
  /** Aborted when the client goes away. */
  clientGone: AbortSignal;
}

export async function runTool(call: Reserved & { call: { kind: 'tools/call' } }, run: ToolRun): Promise<ToolOutput> {
  // Aborted only when the time is up or the client goes away; the happy path allocates no
  // exception (building DOMExceptions on every request showed up under load).
  const controller = new AbortController();
  let rejectTimeout: (err: ApiError) => void = () => {};
  const timedOut = new Promise<never>((_, reject) => (rejectTimeout = reject));
  const timer = setTimeout(() => {
    controller.abort();
    rejectTimeout(new ApiError('UPSTREAM_TIMEOUT', undefined, { provider: 'tool', timeout_ms: run.timeoutMs }));
  }, run.timeoutMs);
  const onGone = () => controller.abort();
  run.clientGone.addEventListener('abort', onGone, { once: true });
  try {
    return await Promise.race([
      call.call.tool.definition.handler(call.call.args, {
        requestId: call.requestId,
        server: call.call.tool.server,
        account: { id: call.grant.account_id, plan: call.grant.plan },
        signal: controller.signal,
        usage: run.usage,
        tools: call.server.toolInfos,
      }),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    run.clientGone.removeEventListener('abort', onGone);
  }
}

/** What the call is charged in the end (delivery.ts, creditsFor), the balance after, and why it is less than the cost. */
export interface Charge {
  credits: number;
  remaining: number;
  note?: string;
}

/** The success envelope (DESIGN.md §3) as a tools/call result: structuredContent and its JSON text. */
export function successResult(call: Reserved & { call: { kind: 'tools/call' } }, output: ToolOutput, charge: Charge, now: Date = new Date()): CallToolResult {
  const stale = staleness(output.data_as_of ?? null, now, call.call.tool.freshness);
  // A stale answer says so first, where an agent reading only the text meets it before any number.
  const notes = [...(stale ? [stale] : []), ...(output.notes ?? []), ...(charge.note !== undefined ? [charge.note] : [])];
  const envelopeOf = (data: unknown, truncated: boolean) => ({
    success: true as const,
    data,
    metadata: {
      timestamp: now.toISOString(),
      credits_used: charge.credits,
      remaining_credits: charge.remaining,
      request_id: call.requestId,
      source: output.source,
      data_as_of: output.data_as_of ?? null,
      stale: stale !== undefined,
      truncated,
      ...(output.next_cursor !== undefined ? { next_cursor: output.next_cursor } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    },
  });
  let envelope = envelopeOf(output.data, output.truncated ?? false);
  let text = JSON.stringify(envelope);
  if (text.length > RESULT_CHAR_LIMIT) {
    // Rare: the text is built anyway, so only oversized results pay for capping.
    const capped = capResult(output.data, RESULT_CHAR_LIMIT - (text.length - JSON.stringify(output.data).length));
    envelope = envelopeOf(capped.data, true);
    text = JSON.stringify(envelope);
  }
  return { content: [{ type: 'text', text }], structuredContent: envelope };
}
