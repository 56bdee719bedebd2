// Trace and span ids from the CSPRNG, and a propagator that never continues a caller's trace.
import { randomFillSync } from 'node:crypto';
import { context, createContextKey, type Context, type TextMapGetter, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';

// One buffer refilled in blocks: a syscall per 256 ids instead of one per id.
const POOL = Buffer.alloc(16 * 256);
let offset = POOL.length;

function randomHex(bytes: 8 | 16): string {
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const hex = POOL.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** 32 hex characters from the CSPRNG: a W3C trace id, and the gateway's request id. */
export function newTraceId(): string {
  const id = randomHex(16);
  // All-zero is the one invalid trace id; 2^-128 odds, but cheap to rule out.
  return id === '00000000000000000000000000000000' ? newTraceId() : id;
}

/** 16 hex characters from the CSPRNG: a W3C span id. */
export function newSpanId(): string {
  const id = randomHex(8);
  return id === '0000000000000000' ? newSpanId() : id;
}

/**
 * The ids the next span started in this context takes, in the OpenTelemetry context (not module
 * state), so that work running concurrently cannot take another's. Each is taken once: the first
 * span started inside withChosenIds's fn gets them, any later one fresh ids.
 */
interface ChosenIds {
  traceId: string | undefined;
  spanId: string | undefined;
}
const CHOSEN_IDS = createContextKey('cryptomcp.chosen_ids');

function chosenIds(): ChosenIds | undefined {
  return context.active().getValue(CHOSEN_IDS) as ChosenIds | undefined;
}

/**
 * Runs fn so that the first span it starts through the SDK takes the ids given instead of fresh
 * ones: a request's root span, whose trace id is the request id (tracing.ts), or a span recorded
 * on the main thread and replayed in the export thread (replay.ts). The trace id is used only by
 * a root span; a child takes its parent's. The ids travel in the active context, so this needs
 * the context manager NodeSDK.start() registers (AsyncLocalStorage, on both threads): without
 * one the span would silently get fresh ids, and this throws instead.
 */
export function withChosenIds<T>(traceId: string, spanId: string, fn: () => T): T {
  const chosen: ChosenIds = { traceId, spanId };
  return context.with(context.active().setValue(CHOSEN_IDS, chosen), () => {
    if (chosenIds() !== chosen) throw new Error('withChosenIds needs a context manager (NodeSDK.start() registers one)');
    return fn();
  });
}

export class CryptoIdGenerator implements IdGenerator {
  generateTraceId(): string {
    const chosen = chosenIds();
    const id = chosen?.traceId;
    if (chosen) chosen.traceId = undefined;
    return id ?? newTraceId();
  }
  generateSpanId(): string {
    const chosen = chosenIds();
    const id = chosen?.spanId;
    if (chosen) chosen.spanId = undefined;
    return id ?? newSpanId();
  }
}

/** Injects our context into outgoing requests, but extracts nothing from incoming ones. */
export class InjectOnlyPropagator implements TextMapPropagator {
  readonly #inner: TextMapPropagator;
  constructor(inner: TextMapPropagator) {
    this.#inner = inner;
  }
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#inner.inject(ctx, carrier, setter);
  }
  extract(ctx: Context, _carrier: unknown, _getter: TextMapGetter): Context {
    return ctx;
  }
  fields(): string[] {
    return this.#inner.fields();
  }
}
