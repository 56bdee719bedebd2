// Chosen span ids (server/telemetry/ids.ts, withChosenIds and CryptoIdGenerator): the ids a
// request's root span (tracing.ts) or a replayed span (replay.ts) must take travel in the
// OpenTelemetry context, not in module state. Set up as the export thread sets up its SDK
// (NodeSDK with our id generator, so the context manager is the one NodeSDK registers).
// Guarantees: two pieces of work that interleave across awaits each give their first span the
// ids chosen for them; a later span in the same work gets fresh ids; a span started outside gets
// fresh ids; without a context manager withChosenIds refuses instead of losing the ids.
import { context, ROOT_CONTEXT, trace, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AlwaysOnSampler, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { CryptoIdGenerator, newSpanId, newTraceId, withChosenIds } from '../../server/telemetry/ids.ts';

const sdk = new NodeSDK({
  idGenerator: new CryptoIdGenerator(),
  sampler: new AlwaysOnSampler(),
  spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })],
  metricReaders: [],
  logRecordProcessors: [],
  instrumentations: [],
  textMapPropagator: null,
});
sdk.start();
const tracer = trace.getTracer('ids-test');

afterAll(async () => {
  await sdk.shutdown();
});

/** A promise and the function that settles it: lets the test choose which work resumes first. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const chosen = () => ({ traceId: newTraceId(), spanId: newSpanId() });
const idsOf = (span: Span) => ({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });

describe('chosen span ids', () => {
  it('two pieces of work interleaved across awaits each give their first span their own ids', async () => {
    const a = chosen();
    const b = chosen();
    const gateA = gate();
    const gateB = gate();
    // Both are under way before either starts its span; b resumes first.
    const spanA = withChosenIds(a.traceId, a.spanId, async () => {
      await gateA.opened;
      return tracer.startSpan('a', {}, ROOT_CONTEXT);
    });
    const spanB = withChosenIds(b.traceId, b.spanId, async () => {
      await gateB.opened;
      return tracer.startSpan('b', {}, ROOT_CONTEXT);
    });
    gateB.open();
    const madeB = await spanB;
    gateA.open();
    const madeA = await spanA;
    expect(idsOf(madeA)).toEqual(a);
    expect(idsOf(madeB)).toEqual(b);
    madeA.end();
    madeB.end();
  });

  it('only the first span started inside takes the ids; a later one and one started outside get fresh ids', () => {
    const a = chosen();
    const [first, second] = withChosenIds(a.traceId, a.spanId, () => [tracer.startSpan('first', {}, ROOT_CONTEXT), tracer.startSpan('second', {}, ROOT_CONTEXT)] as const);
    const outside = tracer.startSpan('outside', {}, ROOT_CONTEXT);
    expect(idsOf(first)).toEqual(a);
    expect(idsOf(second).traceId).not.toBe(a.traceId);
    expect(idsOf(second).spanId).not.toBe(a.spanId);
    expect(idsOf(outside).traceId).not.toBe(a.traceId);
    for (const s of [first, second, outside]) s.end();
  });

  // Last in the file: it removes the context manager NodeSDK registered.
  it('refuses to run without a context manager rather than give the span fresh ids', () => {
    context.disable();
    const a = chosen();
    expect(() => withChosenIds(a.traceId, a.spanId, () => tracer.startSpan('lost', {}, ROOT_CONTEXT))).toThrow(/context manager/);
  });
});
