// The service's own spans (server/telemetry/span.ts) are recorded without the SDK and replayed
// into it later (server/telemetry/replay.ts), in the export thread or, with a caller's processors,
// on the spot. Guarantee: what an exporter receives for a span recorded that way is what it
// receives for an SDK span given the same calls (name and its update, kind, ids, parent, trace
// flags, attributes valid and not, events, links, exception, status rules, scope), and calls
// after end() change nothing; the ids the SDK is handed while replaying are the recorded ones.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { AlwaysOnSampler, TracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../server/telemetry/export-thread.ts';
import { CryptoIdGenerator, withChosenIds } from '../../server/telemetry/ids.ts';
import { SpanReplayer } from '../../server/telemetry/replay.ts';
import { childSpan, RecordingSpan, setSpanSink } from '../../server/telemetry/span.ts';

function sdk() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ sampler: new AlwaysOnSampler(), idGenerator: new CryptoIdGenerator(), spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, provider, tracer: provider.getTracer('cryptomcp') };
}

/** The same calls, on any span: everything the API lets a caller do, valid or not. */
const BOOM = Object.assign(new Error('boom'), { name: 'BoomError' });

function exercise(span: Span): void {
  span.setAttribute('a.string', 'x');
  span.setAttribute('a.number', 3);
  span.setAttributes({ 'a.bool': true, 'a.array': ['p', 'q'], 'a.undefined': undefined });
  // Values outside the API's types: kept or dropped as the SDK does (it takes any OTLP AnyValue).
  span.setAttribute('a.object', { nested: 1 } as never);
  span.setAttribute('a.mixed', ['p', 1] as never);
  span.setAttribute('a.symbol', Symbol('no') as never);
  span.setAttribute('', 'empty key');
  span.updateName('renamed');
  span.addEvent('plain');
  span.addEvent('with attributes', { 'e.k': 'v', 'e.bad': { no: 1 } as never });
  span.addEvent('at a time', [1_700_000_000, 5]);
  span.addLink({ context: { traceId: 'b'.repeat(32), spanId: 'c'.repeat(16), traceFlags: 1 }, attributes: { 'l.k': 'v' } });
  span.recordException(BOOM);
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
  span.setStatus({ code: SpanStatusCode.UNSET });
}

/** What an exporter sees of a span, without times (recorded at different instants) and the resource. */
function exported(s: ReadableSpan) {
  return {
    name: s.name,
    kind: s.kind,
    context: { traceId: s.spanContext().traceId, spanId: s.spanContext().spanId, traceFlags: s.spanContext().traceFlags },
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes, time: e.name === 'at a time' ? e.time : 'now' })),
    links: s.links,
    status: s.status,
    scope: s.instrumentationScope.name,
    droppedAttributesCount: s.droppedAttributesCount,
  };
}

afterEach(() => setSpanSink(undefined));

describe('recording spans', () => {
  it('replayed into the SDK, export as an SDK span given the same calls does, ids included', () => {
    const records: SpanRecord[] = [];
    setSpanSink((r) => records.push(r));

    const root = new RecordingSpan('GET', SpanKind.SERVER, 'a'.repeat(32), undefined, { 'http.request.method': 'GET' });
    const child = childSpan('tools/call', SpanKind.SERVER, root, { 'mcp.method.name': 'tools/call' });
    exercise(child);
    child.end();
    root.end();
    // Once ended, nothing changes and nothing is recorded twice.
    child.setAttribute('late', 1);
    child.setStatus({ code: SpanStatusCode.OK });
    child.end();
    expect(records.map((r) => r.name)).toEqual(['renamed', 'GET']);
    expect(child.isRecording()).toBe(false);

    // The same calls on SDK spans with the same ids, for comparison.
    const reference = sdk();
    const refRoot = withChosenIds(root.spanContext().traceId, root.spanContext().spanId, () =>
      reference.tracer.startSpan('GET', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET' } }, ROOT_CONTEXT),
    );
    const refChild = withChosenIds(child.spanContext().traceId, child.spanContext().spanId, () =>
      reference.tracer.startSpan('tools/call', { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call' } }, trace.setSpan(ROOT_CONTEXT, refRoot)),
    );
    exercise(refChild);
    refChild.end();
    refRoot.end();

    const replayed = sdk();
    const replayer = new SpanReplayer(replayed.provider);
    for (const r of records) replayer.replay(r);

    const got = replayed.exporter.getFinishedSpans().map(exported);
    const want = reference.exporter.getFinishedSpans().map(exported);
    expect(want).toHaveLength(2);
    expect(got).toEqual(want);
    // And they are the recorded ids, the child under the root, in the root's trace, sampled.
    expect(got[0]!.context).toEqual({ traceId: 'a'.repeat(32), spanId: child.spanContext().spanId, traceFlags: 1 });
    expect(got[0]!.parentSpanId).toBe(root.spanContext().spanId);
    expect(got[1]!.parentSpanId).toBeUndefined();
    // Start and end times survive the trip to the nanosecond.
    const rootRecord = records[1]!;
    const rootSpan = replayed.exporter.getFinishedSpans()[1]!;
    expect(rootSpan.startTime).toEqual(rootRecord.startTime);
    expect(rootSpan.endTime).toEqual(rootRecord.endTime);
  });

  it('keep an OK status once set, and a message only on ERROR', () => {
    const records: SpanRecord[] = [];
    setSpanSink((r) => records.push(r));
    const ok = new RecordingSpan('ok', SpanKind.INTERNAL, 'd'.repeat(32), undefined, {});
    ok.setStatus({ code: SpanStatusCode.OK, message: 'ignored' });
    ok.setStatus({ code: SpanStatusCode.ERROR, message: 'too late' });
    ok.end();
    expect(records[0]!.status).toEqual({ code: SpanStatusCode.OK });
  });

  it('are dropped, not kept, while no sink is set (tracing not started)', () => {
    const span = new RecordingSpan('orphan', SpanKind.INTERNAL, 'e'.repeat(32), undefined, {});
    expect(() => span.end()).not.toThrow();
    expect(span.isRecording()).toBe(false);
  });
});
