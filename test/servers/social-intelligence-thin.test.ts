// Thin social windows say so (issue 35, defect 3), over the real gateway: every answer states its
// item count beside the 30 days before, the zero-item days, and a kind of item the source lacks
// for the window (Reddit comments end 2025-10-30). Counts are recomputed from the raw Reddit CSVs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../server/lib/dates.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';
import { rawReddit } from '../helpers/raw-csv.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

let suite: ToolSuite;
const extractor = mentionExtractor(loadSnapshot().assets);
const reddit = rawReddit().map((r) => ({ ...r, assets: extractor.assets(r.text) }));
const btc = reddit.filter((r) => r.assets.includes('bitcoin'));
const lastDay = reddit.map((r) => r.day).sort().at(-1)!;
const lastComment = reddit.filter((r) => r.kind === 'comment').map((r) => r.day).sort().at(-1)!;

beforeAll(async () => {
  suite = await toolSuite('social-intelligence', 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

type Counts = {
  window: { from: string; to: string; days: number; items: number; by_kind: Record<string, number> };
  baseline: { from: string; to: string; days: number; items: number; by_kind: Record<string, number> } | null;
  compared_kinds: string[];
  ratio_to_baseline: number | null;
  ratio_same_kinds: number | null;
  thin: boolean;
  zero_item_days: string[];
  zero_item_days_total: number;
  absent_kinds: { kind: string; source_covers: { from: string; to: string } }[];
};

const between = (rows: typeof reddit, from: string, to: string) => rows.filter((r) => r.day >= from && r.day <= to);

describe('thin windows', () => {
  it('bitcoin sentiment in the default window states its posts beside the 30 days before, is flagged thin, and lists its zero-item days', async () => {
    const env = await suite.call<{ item_counts: Counts; posts: number }>('get_social_sentiment', { asset: 'bitcoin' });
    const c = env.data.item_counts;
    const from = addDays(lastDay, -29);
    const win = between(btc, from, lastDay);
    const base = between(btc, addDays(from, -30), addDays(from, -1));
    expect(c.window).toMatchObject({ from, to: lastDay, days: 30, items: win.length });
    expect(c.baseline).toMatchObject({ from: addDays(from, -30), to: addDays(from, -1), days: 30, items: base.length });
    expect(c.ratio_to_baseline).toBeCloseTo(win.length / base.length, 12);
    expect(c.ratio_to_baseline!).toBeLessThan(0.25);
    expect(c.thin).toBe(true);
    // Comments end before the window: the posts-only ratio says how much is the source, not the world.
    expect(lastComment < from).toBe(true);
    expect(c.compared_kinds).toEqual(['post']);
    expect(c.ratio_same_kinds).toBeCloseTo(win.length / base.filter((r) => r.kind === 'post').length, 12);
    const active = new Set(win.map((r) => r.day));
    const zero = [];
    for (let d = from; d <= lastDay; d = addDays(d, 1)) if (!active.has(d)) zero.push(d);
    expect(zero.length).toBeGreaterThan(0);
    expect(c.zero_item_days).toEqual(zero);
    expect(c.absent_kinds).toEqual([{ kind: 'comment', source_covers: { from: expect.any(String), to: lastComment } }]);
    const notes = (env.metadata as { notes?: string[] }).notes ?? [];
    expect(notes.some((n: string) => n.startsWith('Thin window:'))).toBe(true);
    expect(notes.some((n: string) => n.includes('has no comments') && n.includes('not from the world'))).toBe(true);
    expect(notes.some((n: string) => n.includes(`${zero.length} of the window's 30 days have no item`))).toBe(true);
  });

  it('a busy October window is not thin and carries no thin note', async () => {
    const env = await suite.call<{ item_counts: Counts }>('get_social_volume', { asset: 'bitcoin', from: '2025-10-15', to: '2025-10-28' });
    const c = env.data.item_counts;
    expect(c.window.items).toBe(between(btc, '2025-10-15', '2025-10-28').length);
    expect(c.compared_kinds.sort()).toEqual(['comment', 'post']);
    expect(c.thin).toBe(false);
    expect(c.absent_kinds).toEqual([]);
    expect(((env.metadata as { notes?: string[] }).notes ?? []).some((n: string) => n.startsWith('Thin window:'))).toBe(false);
  });

  it('get_trending_topics and detect_social_spike state item counts too', async () => {
    const t = await suite.call<{ item_counts: Counts }>('get_trending_topics', {});
    expect(t.data.item_counts.window.items).toBe(between(reddit, addDays(lastDay, -6), lastDay).length);
    const s = await suite.call<{ item_counts: Counts }>('detect_social_spike', { asset: 'bitcoin' });
    expect(s.data.item_counts.window.items).toBe(between(btc, addDays(lastDay, -59), lastDay).length);
  });
});

describe('a kind the source lacks', () => {
  it('get_top_posts kind=comment for bitcoin in the default window says the source has no comments then, not that no one mentions it, and is free', async () => {
    const env = await suite.call<{ total: number; covered: boolean; reason: string; item_counts: Counts }>('get_top_posts', { asset: 'bitcoin', kind: 'comment' });
    const from = addDays(lastDay, -29);
    const posts = between(btc, from, lastDay).length;
    expect(env.data.total).toBe(0);
    expect(env.data.covered).toBe(false);
    expect(env.data.reason).not.toMatch(/No reddit post or comment/);
    expect(env.data.reason).toBe(
      `The reddit source has no comments from ${from} to ${lastDay} (its comments run ${env.data.item_counts.absent_kinds[0]!.source_covers.from} to ${lastComment}), so none can be ranked; ${posts} other items in the window mention Bitcoin.`,
    );
    expect(env.metadata.credits_used).toBe(0);
  });
});
