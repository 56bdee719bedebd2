import { describe, expect, it } from 'vitest';
import { capResult, RESULT_CHAR_LIMIT, STALE_AFTER_DAYS, staleness } from '../../server/mcp/envelope.ts';
import { successResult } from '../../server/gateway/run-tool.ts';

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

// Issue 35 item 6 (defect 10): an answer resting on data older than the service calls current says
// so where no agent can miss it: metadata.stale, and the first note. The clock is the caller's.
describe('stale answers are flagged (STALE_AFTER_DAYS)', () => {
  const now = new Date('2026-11-26T12:00:00Z');

  it('data as of a day more than STALE_AFTER_DAYS before the answer is stale, with a note naming both dates', () => {
    const note = staleness('2025-12-09', now);
    expect(note).toMatch(/^Stale data: this answer rests on data as of 2025-12-09, 352 days before 2026-11-26/);
  });

  it(`data within ${STALE_AFTER_DAYS} days, or live data (no data_as_of), is not stale`, () => {
    expect(staleness('2026-11-24', now)).toBeUndefined();
    expect(staleness('2026-11-26T11:00:00Z', now)).toBeUndefined();
    expect(staleness(null, now)).toBeUndefined();
    expect(staleness('2026-11-23', now)).toBeDefined();
  });

  it('the envelope carries metadata.stale on every answer and puts the stale note first', () => {
    const call = { requestId: 'r1' } as Parameters<typeof successResult>[0];
    const stale = successResult(call, { data: {}, source: 'snapshot', data_as_of: '2025-02-11', notes: ['BTC ends later.'] }, { credits: 1, remaining: 9 }, now);
    const meta = (stale.structuredContent as { metadata: { stale: boolean; notes: string[]; timestamp: string } }).metadata;
    expect(meta.stale).toBe(true);
    expect(meta.notes[0]).toMatch(/^Stale data:/);
    expect(meta.notes[1]).toBe('BTC ends later.');
    expect(meta.timestamp).toBe(now.toISOString());
    const live = successResult(call, { data: {}, source: 'rpc:ethereum', data_as_of: null }, { credits: 1, remaining: 9 }, now);
    expect((live.structuredContent as { metadata: { stale: boolean; notes?: string[] } }).metadata).toMatchObject({ stale: false });
    expect((live.structuredContent as { metadata: { notes?: string[] } }).metadata.notes).toBeUndefined();
  });
});
