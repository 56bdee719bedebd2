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
