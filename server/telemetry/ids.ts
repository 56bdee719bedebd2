// Trace and span ids from the CSPRNG, and a propagator that never continues a caller's trace.
import { randomFillSync } from 'node:crypto';
import type { Context, TextMapGetter, TextMapPropagator, TextMapSetter } from '@opentelemetry/api';
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

let chosenTraceId: string | undefined;
let chosenSpanId: string | undefined;

/**
 * Runs fn, which starts one span through the SDK synchronously, so that the span takes the ids
 * given instead of fresh ones: a request's root span, whose trace id is the request id
 * (tracing.ts), or a span recorded on the main thread and replayed in the export thread
 * (replay.ts). The trace id is used only by a root span; a child takes its parent's.
 */
export function withChosenIds<T>(traceId: string, spanId: string, fn: () => T): T {
  chosenTraceId = traceId;
  chosenSpanId = spanId;
  try {
    return fn();
  } finally {
    chosenTraceId = undefined;
    chosenSpanId = undefined;
  }
}

export class CryptoIdGenerator implements IdGenerator {
  generateTraceId(): string {
    const chosen = chosenTraceId;
    chosenTraceId = undefined;
    return chosen ?? newTraceId();
  }
  generateSpanId(): string {
    const chosen = chosenSpanId;
    chosenSpanId = undefined;
    return chosen ?? newSpanId();
  }
}

/** Injects our context into outgoing requests, but extracts nothing from incoming ones. */
export class InjectOnlyPropagator implements TextMapPropagator {
  readonly #inner: TextMapPropagator;
  constructor(inner: TextMapPropagator) {
    this.#inner = inner;
  }
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#inner.inject(context, carrier, setter);
  }
  extract(context: Context, _carrier: unknown, _getter: TextMapGetter): Context {
    return context;
  }
  fields(): string[] {
    return this.#inner.fields();
  }
}
