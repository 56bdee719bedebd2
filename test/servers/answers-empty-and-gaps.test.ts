// What social and KOL tools hand the gateway beside data: `empty` (an answer with no data, which
// the gateway charges nothing for) and `notes` naming coverage gaps inside the asked window (the
// Reddit comments end weeks before the posts). Handlers are called directly on the snapshot;
// expected days come from the raw CSVs.
import { describe, expect, it } from 'vitest';
import { callHandler } from '../helpers/handlers.ts';
import { rawReddit } from '../helpers/raw-csv.ts';

const reddit = rawReddit();
const lastDay = (kind: 'post' | 'comment') => reddit.filter((r) => r.kind === kind).map((r) => r.day).sort().at(-1)!;

describe('coverage gaps inside a window are stated in the answer', () => {
  it('Reddit volume over October-November says the comments end on their last day in the raw CSV, in notes and in the window', async () => {
    const commentsEnd = lastDay('comment');
    expect(commentsEnd).toBe('2025-10-30');
    expect(lastDay('post') > '2025-11-30').toBe(true);
    const out = await callHandler('social-intelligence', 'get_social_volume', { asset: 'bitcoin', platform: 'reddit', from: '2025-10-01', to: '2025-11-30', interval: 'week' });
    // The gap note comes first; notes on the window's item counts (zero-item days) may follow.
    expect(out.notes![0]).toContain(`comments in the data end ${commentsEnd}`);
    expect(out.notes!.filter((n) => n.includes('comments in the data end'))).toHaveLength(1);
    expect((out.data as { window: { coverage_gaps: string[] } }).window.coverage_gaps).toEqual([out.notes![0]]);
    for (const tool of ['get_social_sentiment', 'detect_social_spike', 'get_top_posts'] as const) {
      const o = await callHandler('social-intelligence', tool, { asset: 'bitcoin', ...(tool === 'get_top_posts' ? {} : { platform: 'reddit' }), from: '2025-10-01', to: '2025-11-30' });
      expect(o.notes![0], tool).toEqual(out.notes![0]);
    }
  });

  it('a window that ends before the comments do has no gap note', async () => {
    const out = await callHandler('social-intelligence', 'get_social_volume', { asset: 'bitcoin', platform: 'reddit', from: '2025-10-01', to: '2025-10-30' });
    expect(out.notes).toEqual([]);
  });

  it('get_trending_topics compares with the window before: a gap in either is noted', async () => {
    const out = await callHandler('social-intelligence', 'get_trending_topics', { platform: 'reddit', to: '2025-11-05', days: 7 });
    expect(out.notes!.join(' ')).toContain('comments in the data end 2025-10-30');
  });
});

describe('an answer with no data is flagged empty (charged nothing)', () => {
  it('sentiment with 0 posts is empty; with posts it is not', async () => {
    const none = await callHandler('social-intelligence', 'get_social_sentiment', { asset: 'akropolis', from: '2025-10-01', to: '2025-10-07' });
    expect((none.data as { posts: number }).posts).toBe(0);
    expect(none.empty).toBe(true);
    const some = await callHandler('social-intelligence', 'get_social_sentiment', { asset: 'bitcoin', from: '2025-10-01', to: '2025-10-07' });
    expect(some.empty ?? false).toBe(false);
  });

  it('a KOL with no calls on an asset: get_kol_calls and get_kol_performance are empty; with calls they are not', async () => {
    const calls = await callHandler('kol-analytics', 'get_kol_calls', { handle: 'coindesk', asset: 'akropolis' });
    expect((calls.data as { total: number }).total).toBe(0);
    expect(calls.empty).toBe(true);
    const perf = await callHandler('kol-analytics', 'get_kol_performance', { handle: 'coindesk', asset: 'akropolis' });
    expect((perf.data as { covered: boolean }).covered).toBe(false);
    expect(perf.empty).toBe(true);
    const real = await callHandler('kol-analytics', 'get_kol_performance', { handle: 'coindesk', asset: 'bitcoin' });
    expect((real.data as { covered: boolean }).covered).toBe(true);
    expect(real.empty ?? false).toBe(false);
  });

  it('no account mentioning an asset: get_asset_kol_mentions is empty', async () => {
    const out = await callHandler('kol-analytics', 'get_asset_kol_mentions', { asset: 'akropolis', platform: 'twitter' });
    expect((out.data as { mentions: number }).mentions).toBe(0);
    expect(out.empty).toBe(true);
  });
});
