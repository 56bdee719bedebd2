// The per-request metrics' hot path. prom-client builds a string key from the labels on every
// inc() and observe() and then converts the bucket bound to a string to count it: string building
// on every update, four updates per MCP request. Here a label set is found through one Map per
// label, keyed by the values as they come (no string is built), and counting is arithmetic on a
// cell the set keeps. What Prometheus reads is unchanged: the same prom-client metrics, names,
// labels, buckets and exposition. bench:observability (BENCH_ONLY=pieces) weighs this against
// prom-client's own calls; its figures are in bench/NOTES.md, "Telemetry pieces".
import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration } from 'prom-client';

type Labels<L extends string> = Record<L, string>;

/** Cells by label values, one Map level per label name, in the metric's label order. */
class LabelSets<L extends string, C> {
  readonly #names: readonly L[];
  readonly #create: (labels: Labels<L>) => C;
  #root = new Map<string, unknown>();
  /** Every cell made since the last clear(), in the order they were made. */
  cells: C[] = [];

  constructor(names: readonly L[], create: (labels: Labels<L>) => C) {
    this.#names = names;
    this.#create = create;
  }

  get(labels: Labels<L>): C {
    let level = this.#root;
    const last = this.#names.length - 1;
    for (let i = 0; i < last; i++) {
      const value = labels[this.#names[i]!];
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = labels[this.#names[last]!];
    let cell = level.get(value) as C | undefined;
    if (cell === undefined) {
      // A copy: the caller's object may be reused or changed after this call.
      cell = this.#create({ ...labels });
      level.set(value, cell);
      this.cells.push(cell);
    }
    return cell;
  }

  clear(): void {
    this.#root = new Map();
    this.cells = [];
  }
}

/**
 * A prom-client Counter whose increments are tallied per label set and added to it when the
 * registry is read (its collect hook): one inc() per label set per scrape instead of per request.
 */
export class TalliedCounter<L extends string> extends Counter<L> {
  readonly #sets: LabelSets<L, { labels: Labels<L>; value: number }>;

  constructor(config: Omit<CounterConfiguration<L>, 'collect'> & { labelNames: readonly L[] }) {
    super({
      ...config,
      collect() {
        (this as TalliedCounter<L>).fold();
      },
    });
    this.#sets = new LabelSets(config.labelNames, (labels) => ({ labels, value: 0 }));
  }

  /** Counts `value` (default 1) for this label set. */
  add(labels: Labels<L>, value = 1): void {
    this.#sets.get(labels).value += value;
  }

  /** Moves the tallies into the counter (the registry's read does this first). */
  fold(): void {
    for (const cell of this.#sets.cells) {
      if (cell.value !== 0) {
        this.inc(cell.labels, cell.value);
        cell.value = 0;
      }
    }
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (#sets in this) for (const cell of this.#sets.cells) cell.value = 0;
  }
}

/** Whether an object has any own key, without allocating Object.keys' array. */
function hasAny(labels: Record<string, string>): boolean {
  for (const key in labels) if (Object.hasOwn(labels, key)) return true;
  return false;
}

/** prom-client 15's record of one label set of a histogram (lib/histogram.js, createBaseValues). */
interface HistogramEntry {
  labels: Record<string, string>;
  bucketValues: Record<string, number>;
  /** Present when exemplars are enabled: each bucket's latest exemplar, or null. */
  bucketExemplars?: Record<string, BucketExemplar | null>;
  sum: number;
  count: number;
}

/** What prom-client's exposition reads of an exemplar (lib/exemplar.js, lib/registry.js). */
interface BucketExemplar {
  labelSet: Record<string, string>;
  value: number;
  timestamp?: number;
}

/**
 * Makes `labels` the latest exemplar of the bucket, as prom-client's updateExemplar does: the same
 * 128-character limit on the label set (OpenMetrics), the same seconds timestamp.
 */
function keepExemplar(entry: HistogramEntry, bucket: string, value: number, labels: Record<string, string>): void {
  let size = 0;
  for (const name in labels) size += name.length + String(labels[name]).length;
  if (size > 128) throw new RangeError('Label set size must be smaller than 128 UTF-8 chars');
  const exemplars = entry.bucketExemplars!;
  const kept = exemplars[bucket];
  if (kept) {
    kept.labelSet = labels;
    kept.value = value;
    kept.timestamp = Date.now() / 1000;
  } else {
    exemplars[bucket] = { labelSet: labels, value, timestamp: Date.now() / 1000 };
  }
}

/**
 * A prom-client Histogram with a cheaper observe for a fixed label set: record() finds the
 * histogram's own record of the set once and then counts into it with the bucket's key computed
 * at construction. It relies on the layout of that record in prom-client 15 (pinned in
 * package.json); test/observability/tallies.test.ts checks that the exposition equals a plain
 * Histogram's for the same observations, so an upgrade that changes it fails there.
 */
export class TalliedHistogram<L extends string> extends Histogram<L> {
  readonly #names: readonly L[];
  readonly #bounds: number[];
  readonly #keys: string[];
  readonly #exemplars: boolean;
  readonly #sets: LabelSets<L, HistogramEntry>;

  constructor(config: HistogramConfiguration<L> & { labelNames: readonly L[]; buckets: number[] }) {
    super(config);
    this.#names = config.labelNames;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
    // The keys prom-client counts under: each bound as a property key (String(bound)).
    this.#keys = this.#bounds.map(String);
    this.#exemplars = config.enableExemplars === true;
    this.#sets = new LabelSets(this.#names, (labels) => this.#entryFor(labels));
  }

  /** The histogram's record of this label set, made through the public zero() if it has none yet. */
  #entryFor(labels: Labels<L>): HistogramEntry {
    const entries = () => Object.values((this as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap);
    const same = (e: HistogramEntry) => this.#names.every((n) => e.labels[n] === labels[n]);
    const existing = entries().find(same);
    if (existing) return existing;
    this.zero(labels);
    return entries().find((e) => e.labels === labels)!;
  }

  /**
   * Observes `value` for this label set. With exemplar labels (a sampled trace's id) they become
   * the bucket's exemplar, as prom-client's observe() keeps them, without its per-call label
   * hashing and checks.
   */
  record(labels: Labels<L>, value: number, exemplarLabels?: Record<string, string>): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const entry = this.#sets.get(labels);
    entry.sum += value;
    entry.count += 1;
    let i = 0;
    while (i < this.#bounds.length && value > this.#bounds[i]!) i++;
    if (i < this.#bounds.length) entry.bucketValues[this.#keys[i]!]! += 1;
    if (this.#exemplars && exemplarLabels && hasAny(exemplarLabels)) {
      // prom-client keeps the +Inf bucket's exemplar under '-1' (findBound's answer above the top bound).
      keepExemplar(entry, i < this.#bounds.length ? this.#keys[i]! : '-1', value, exemplarLabels);
    }
  }

  // reset() and remove() replace or delete the records: the cells pointing at them are dropped.
  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (#sets in this) this.#sets.clear();
  }

  override remove(...args: unknown[]): void {
    (super.remove as (...a: unknown[]) => void).apply(this, args);
    this.#sets.clear();
  }
}
