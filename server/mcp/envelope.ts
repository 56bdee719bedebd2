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
 * Every server's data is daily (closes, TVL, posts, blocks read now): an answer whose data is more
 * than this many days older than the answer is stale. get_capabilities states it; the envelope
 * says `metadata.stale` on every answer.
 */
export const STALE_AFTER_DAYS = 2;

const DAY_MS = 86_400_000;

/** The first note of a stale answer (its data_as_of more than STALE_AFTER_DAYS before `now`), or undefined. */
export function staleness(dataAsOf: string | null, now: Date): string | undefined {
  if (dataAsOf === null) return undefined;
  const asOf = Date.parse(dataAsOf);
  if (Number.isNaN(asOf)) return undefined;
  const days = Math.floor((now.getTime() - asOf) / DAY_MS);
  if (days <= STALE_AFTER_DAYS) return undefined;
  return `Stale data: this answer rests on data as of ${dataAsOf}, ${days} days before ${now.toISOString().slice(0, 10)}, older than the ${STALE_AFTER_DAYS} days this service calls current. Read it as history, not as the state of the market now.`;
}
