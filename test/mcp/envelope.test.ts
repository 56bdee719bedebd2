import { describe, expect, it } from 'vitest';
import { capResult, RESULT_CHAR_LIMIT } from '../../server/mcp/envelope.ts';

describe('result size cap (DESIGN §4: about 40,000 characters of JSON)', () => {
  it('leaves a result under the limit untouched', () => {
    const data = { items: [1, 2, 3], note: 'small' };
    expect(capResult(data)).toEqual({ data, truncated: false });
  });

  it('cuts the largest list from the end until the whole result fits, keeping as much as fits', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ i, name: `row-${i}`, pad: 'x'.repeat(20) }));
    const data = { meta: { asset: 'bitcoin' }, small: [1, 2], rows };
    const capped = capResult(data);
    expect(capped.truncated).toBe(true);
    const json = JSON.stringify(capped.data);
    expect(json.length).toBeLessThanOrEqual(RESULT_CHAR_LIMIT);
    const kept = (capped.data as typeof data).rows;
    expect(kept).toEqual(rows.slice(0, kept.length));
    // One more row would not have fitted.
    expect(JSON.stringify({ ...data, rows: rows.slice(0, kept.length + 1) }).length).toBeGreaterThan(RESULT_CHAR_LIMIT);
    expect((capped.data as typeof data).small).toEqual([1, 2]);
    expect(data.rows).toHaveLength(5000);
  });

  it('reaches nested lists too', () => {
    const data = { a: { b: { c: Array.from({ length: 3000 }, (_, i) => `value number ${i}`) } } };
    const capped = capResult(data, 10_000);
    expect(JSON.stringify(capped.data).length).toBeLessThanOrEqual(10_000);
    expect(capped.truncated).toBe(true);
  });
});
