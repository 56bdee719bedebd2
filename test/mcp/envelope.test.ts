import { describe, expect, it } from 'vitest';
import { capResult, FRESHNESS, RESULT_CHAR_LIMIT, staleness } from '../../server/mcp/envelope.ts';
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

// Issue 35 items 6 and 10: an answer resting on data older than its tool's stated freshness says
// so where no agent can miss it: metadata.stale, and the first note. Each tool has one kind of
// data (FRESHNESS: daily figures, social posts, registries), its own or its server's; the clock
// is the caller's.
describe("stale answers are flagged by their tool's stated freshness", () => {
  const now = new Date('2026-11-26T12:00:00Z');

  it('daily data more than 2 days old is stale, with a note naming both dates and the freshness it missed', () => {
    expect(FRESHNESS.daily.stale_after_days).toBe(2);
    const note = staleness('2025-12-09', now, 'daily');
    expect(note).toMatch(/^Stale data: this answer rests on data as of 2025-12-09, 352 days before 2026-11-26, older than the 2 days within which this tool's data \(daily figures/);
  });

  it('daily data within 2 days, or live data (no data_as_of), is not stale', () => {
    expect(staleness('2026-11-24', now, 'daily')).toBeUndefined();
    expect(staleness('2026-11-26T11:00:00Z', now, 'daily')).toBeUndefined();
    expect(staleness(null, now, 'daily')).toBeUndefined();
    expect(staleness('2026-11-23', now, 'daily')).toBeDefined();
  });

  it('the same date is judged by each kind of data\'s own freshness: 5 days old is stale for daily prices, current for social posts; 100 days is current for a registry', () => {
    expect(staleness('2026-11-21', now, 'daily')).toBeDefined();
    expect(staleness('2026-11-21', now, 'posts')).toBeUndefined();
    expect(staleness('2026-11-18', now, 'posts')).toMatch(/older than the 7 days within which this tool's data \(social posts/);
    expect(staleness('2026-08-18', now, 'registry')).toBeUndefined();
    expect(staleness('2025-01-01', now, 'registry')).toBeDefined();
  });

  const callOf = (freshness: keyof typeof FRESHNESS) => ({ requestId: 'r1', call: { kind: 'tools/call', tool: { freshness } } }) as unknown as Parameters<typeof successResult>[0];

  it('the envelope carries metadata.stale on every answer, by the called tool\'s freshness, and puts the stale note first', () => {
    const stale = successResult(callOf('daily'), { data: {}, source: 'snapshot', data_as_of: '2025-02-11', notes: ['BTC ends later.'] }, { credits: 1, remaining: 9 }, now);
    const meta = (stale.structuredContent as { metadata: { stale: boolean; notes: string[]; timestamp: string } }).metadata;
    expect(meta.stale).toBe(true);
    expect(meta.notes[0]).toMatch(/^Stale data:/);
    expect(meta.notes[1]).toBe('BTC ends later.');
    expect(meta.timestamp).toBe(now.toISOString());
    const live = successResult(callOf('daily'), { data: {}, source: 'rpc:ethereum', data_as_of: null }, { credits: 1, remaining: 9 }, now);
    expect((live.structuredContent as { metadata: { stale: boolean; notes?: string[] } }).metadata).toMatchObject({ stale: false });
    expect((live.structuredContent as { metadata: { notes?: string[] } }).metadata.notes).toBeUndefined();
    // Posts five days old: current for a social tool, stale for a price tool.
    const posts = { data: {}, source: 'snapshot', data_as_of: '2026-11-21' };
    expect((successResult(callOf('posts'), posts, { credits: 1, remaining: 9 }, now).structuredContent as { metadata: { stale: boolean } }).metadata.stale).toBe(false);
    expect((successResult(callOf('daily'), posts, { credits: 1, remaining: 9 }, now).structuredContent as { metadata: { stale: boolean } }).metadata.stale).toBe(true);
  });
});
