// The ~40,000-character cap on a tool result's JSON (DESIGN.md §4). Tools paginate their lists;
// this is the guarantee behind them: if a result is still too big, its largest list is cut from
// the end until the whole fits, and the answer says it was truncated.
export const RESULT_CHAR_LIMIT = 40_000;

export interface Capped {
  data: unknown;
  truncated: boolean;
}

/** The largest array anywhere in the value (by serialized size), with a setter to replace it. */
function largestArray(value: unknown): { items: unknown[]; set: (next: unknown[]) => void } | undefined {
  let best: { items: unknown[]; set: (next: unknown[]) => void; size: number } | undefined;
  const visit = (node: unknown, set: (next: unknown[]) => void) => {
    if (Array.isArray(node)) {
      const size = JSON.stringify(node).length;
      if (!best || size > best.size) best = { items: node, set, size };
      node.forEach((child, i) => visit(child, (next) => (node[i] = next)));
    } else if (node !== null && typeof node === 'object') {
      for (const [k, child] of Object.entries(node)) visit(child, (next) => ((node as Record<string, unknown>)[k] = next));
    }
  };
  visit(value, () => {});
  return best;
}

export function capResult(data: unknown, limit = RESULT_CHAR_LIMIT): Capped {
  if (JSON.stringify(data).length <= limit) return { data, truncated: false };
  const copy = structuredClone(data);
  for (;;) {
    const target = largestArray(copy);
    if (!target || target.items.length === 0) return { data: copy, truncated: true };
    // Halve until it fits, then grow back one by one: O(log n) serializations, not O(n).
    let keep = target.items.length;
    while (keep > 0 && JSON.stringify(copy).length > limit) {
      keep = Math.floor(keep / 2);
      target.set(target.items.slice(0, keep));
    }
    while (keep < target.items.length) {
      target.set(target.items.slice(0, keep + 1));
      if (JSON.stringify(copy).length > limit) {
        target.set(target.items.slice(0, keep));
        break;
      }
      keep++;
    }
    if (JSON.stringify(copy).length <= limit) return { data: copy, truncated: true };
  }
}

/**
 * How current each kind of data a tool answers from is meant to be: its stated freshness. An
 * answer whose data_as_of is more than its tool's kind allows before the answer is stale
 * (`metadata.stale`, and the first note). Each tool has one kind (ToolDefinition.freshness, else
 * its server's); get_capabilities states every tool's. Live reads (no data_as_of) are never stale.
 */
export const FRESHNESS = {
  daily: { stale_after_days: 2, covers: 'daily figures (closes, market caps, TVL): a day is published once it ends' },
  posts: { stale_after_days: 7, covers: 'social posts and comments, and the calls scored on them: collected as a dataset, at least weekly' },
  registry: { stale_after_days: 180, covers: 'token lists and address labels: reference data that changes slowly' },
} as const satisfies Record<string, { stale_after_days: number; covers: string }>;
export type Freshness = keyof typeof FRESHNESS;

const DAY_MS = 86_400_000;

/** The first note of a stale answer (its data_as_of older than its kind's freshness at `now`), or undefined. */
export function staleness(dataAsOf: string | null, now: Date, freshness: Freshness): string | undefined {
  if (dataAsOf === null) return undefined;
  const asOf = Date.parse(dataAsOf);
  if (Number.isNaN(asOf)) return undefined;
  const days = Math.floor((now.getTime() - asOf) / DAY_MS);
  const { stale_after_days: limit, covers } = FRESHNESS[freshness];
  if (days <= limit) return undefined;
  return `Stale data: this answer rests on data as of ${dataAsOf}, ${days} days before ${now.toISOString().slice(0, 10)}, older than the ${limit} days within which this tool's data (${covers}) is current. Read it as history, not as the state of the market now.`;
}
