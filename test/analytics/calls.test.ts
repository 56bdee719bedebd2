// KOL call scoring (server/analytics/calls.ts) and TVL statistics (server/analytics/tvl.ts) on small
// hand-made series whose answers are worked out in the comments.
import { describe, expect, it } from 'vitest';
import { CALL_RULE_HELDOUT, CALL_RULE_KEPT_SAMPLE, exclusionOf, extractCalls, scoreCall, summarise, yearBaseRate, type CloseOn } from '../../server/analytics/calls.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { measureCallRule } from '../../scripts/measure-kol-calls.ts';
import { concentration, growth, tvlDrawdown, tvlVolatility } from '../../server/analytics/tvl.ts';
import { addDays } from '../../server/lib/dates.ts';

// ETH 100 on 01-01, 110 a day later, 90 a week later, 120 thirty days later; BTC flat at 1000
// except +10% a week later.
const closes: Record<string, Record<string, number>> = {
  ethereum: { '2017-01-01': 100, '2017-01-02': 110, '2017-01-08': 90, '2017-01-31': 120 },
  bitcoin: { '2017-01-01': 1000, '2017-01-02': 1000, '2017-01-08': 1100, '2017-01-31': 1000 },
};
const closeOn: CloseOn = (a, d) => (closes[a]?.[d] === undefined ? undefined : { close: closes[a]![d]!, source: 'test' });
const post = (compound: number, text = 'ETH!', created = '2017-01-01T15:00:00Z') => ({ id: 'p', created, text, compound, assets: ['ethereum'], url: 'u' });

describe('calls', () => {
  it('a call is a non-retweet with a stance and an asset; neutral posts and retweets are not calls', () => {
    expect(extractCalls([post(0.5), post(0.01), post(-0.3, 'RT @x: ETH dump')])).toHaveLength(1);
    expect(extractCalls([post(-0.3, 'RT @x: ETH dump')], { includeRetweets: true })[0]!.stance).toBe('bearish');
  });

  it('returns run from the close of the call day; a bearish call gains when the price falls; excess is over the same stance on BTC', () => {
    const bull = scoreCall(extractCalls([post(0.5)])[0]!, closeOn);
    expect(bull.entry_close).toBe(100);
    expect(bull.horizons.map((h) => h.return)).toEqual([0.1, -0.1, 0.2].map((x) => expect.closeTo(x, 12)));
    expect(bull.horizons.map((h) => h.hit)).toEqual([true, false, true]);
    // 7 days: ETH -10%, BTC +10%: a bullish call on ETH did 20 points worse than bullish on BTC.
    expect(bull.horizons[1]!.excess_return).toBeCloseTo(-0.2, 12);
    const bear = scoreCall(extractCalls([post(-0.5)])[0]!, closeOn);
    expect(bear.horizons.map((h) => h.directional_return)).toEqual([-0.1, 0.1, -0.2].map((x) => expect.closeTo(x, 12)));
    // Bearish on ETH (+10%) against bearish on BTC (-10%): +20 points.
    expect(bear.horizons[1]!.excess_return).toBeCloseTo(0.2, 12);
  });

  it('a horizon past the price history is null, not zero, and is left out of the summary', () => {
    const late = scoreCall(extractCalls([post(0.5, 'ETH', '2017-01-08T00:00:00Z')])[0]!, closeOn);
    expect(late.horizons.map((h) => h.return)).toEqual([null, null, null]);
    const s = summarise([scoreCall(extractCalls([post(0.5)])[0]!, closeOn), late]);
    expect(s[0]).toMatchObject({ days: 1, calls_scored: 1, hit_rate: 1 });
  });
});

describe('TVL statistics', () => {
  const pts = [
    { date: '2025-01-01', tvl_usd: 100 },
    { date: '2025-01-02', tvl_usd: 200 },
    { date: '2025-01-03', tvl_usd: 50 },
    { date: '2025-01-04', tvl_usd: 150 },
  ];
  it('growth uses the last point on or before the start day', () => {
    expect(growth(pts, 2)).toBeCloseTo(150 / 200 - 1, 12);
    expect(growth(pts, 30)).toBeNull();
  });
  it('drawdown: deepest fall from a running peak, and distance of the last value from the high', () => {
    expect(tvlDrawdown(pts)).toMatchObject({ max_drawdown: -0.75, peak: pts[1], trough: pts[2], from_all_time_high: -0.25 });
  });
  it('volatility is the annualised sample SD of daily log changes', () => {
    const r = [Math.log(2), Math.log(0.25), Math.log(3)];
    const m = r.reduce((a, b) => a + b) / 3;
    expect(tvlVolatility(pts, 10)).toBeCloseTo(Math.sqrt(r.reduce((s, x) => s + (x - m) ** 2, 0) / 2) * Math.sqrt(365), 12);
  });
  it('concentration: HHI of shares and the top share', () => {
    expect(concentration([60, 30, 10], 1)).toEqual({ hhi: expect.closeTo(0.36 + 0.09 + 0.01, 12), top_share: 0.6 });
  });
});

describe('what counts as a call (exclusionOf)', () => {
  const tweet = (text: string, assets: string[], compound = 0.6) => ({ id: 'x', created: '2017-10-01T00:00:00Z', text, compound, assets, url: '' });

  it('an advert is not a call: the price-feed tweet that scored a bullish ETH call', () => {
    const ad = tweet('Fresh #Bitcoin and #Ethereum Prices every day! Join our Telegram https://t.me/x', ['bitcoin', 'ethereum']);
    expect(exclusionOf(ad, 'ethereum')).toBe('advert');
    expect(extractCalls([ad])).toEqual([]);
  });

  it('a post about a lookalike coin is not a call on the major one: "the real Bitcoin, #BitcoinCash" is not bullish BTC', () => {
    const bch = tweet('Time to start using the real Bitcoin, #BitcoinCash', ['bitcoin']);
    expect(exclusionOf(bch, 'bitcoin')).toBe('other_asset');
    expect(exclusionOf(tweet('Ethereum Classic is the real chain', ['ethereum']), 'ethereum')).toBe('other_asset');
  });

  it('a post naming several assets gives no stance on one; a plain view on one asset is a call', () => {
    expect(exclusionOf(tweet('Bitcoin and Litecoin both look strong', ['bitcoin', 'litecoin']), 'bitcoin')).toBe('several_assets');
    expect(exclusionOf(tweet('The entire world will be interested in Bitcoin soon. Mark my words.', ['bitcoin']), 'bitcoin')).toBeNull();
  });

  it("a fund's own NAV/holdings feed is not a call: BitcoinTrust's daily post scored bullish on the word 'Trust'", () => {
    const nav = tweet('Bitcoin Investment Trust 3/1/16: most recent NAV/share $41.43; Net Assets $62.37MM', ['bitcoin'], 0.51);
    expect(exclusionOf(nav, 'bitcoin')).toBe('feed');
    expect(exclusionOf(tweet('Bitcoin Investment Trust 6/6/17: most recent Bitcoin Holdings/share $260.91; Net Assets $487.56M', ['bitcoin']), 'bitcoin')).toBe('feed');
  });

  it('a joke, quiz or quote is not the account\'s view (#CT_humor, #CT_questions, #CT_quotes)', () => {
    expect(exclusionOf(tweet("#CT_humor :) Don't tell your private key number anyone! #Bitcoin", ['bitcoin']), 'bitcoin')).toBe('not_a_view');
    expect(exclusionOf(tweet('#CT_questions What year was #Ethereum created? Leave your answers below.', ['ethereum']), 'ethereum')).toBe('not_a_view');
    expect(exclusionOf(tweet('#CT_quotes Howard Marks on #Bitcoin Do you agree?', ['bitcoin']), 'bitcoin')).toBe('not_a_view');
  });

  it("an account on its own product is promotion, only when the account is the product's (BitPay on BitPay; a news site on BitPay is news)", () => {
    const own = { ...tweet('BitPay Sees 1900% Growth in European Bitcoin Acceptance', ['bitcoin']), author: 'BitPay' };
    expect(exclusionOf(own, 'bitcoin')).toBe('own_product');
    expect(exclusionOf({ ...own, author: 'BitcoinMagazine' }, 'bitcoin')).toBeNull();
    // BIT is the trust's ticker in capitals; the word "bit" is not.
    expect(exclusionOf({ ...tweet('BIT advisory board grows, bullish on bitcoin', ['bitcoin']), author: 'BitcoinTrust' }, 'bitcoin')).toBe('own_product');
    expect(exclusionOf({ ...tweet('a bit of great bitcoin news', ['bitcoin']), author: 'BitcoinTrust' }, 'bitcoin')).toBeNull();
  });

  it('on the held-out labelled sample it keeps at least 90% of calls and leaves out at least half of the adverts and other-asset posts (as docs/data.md states)', () => {
    const held = measureCallRule().samples.find((s) => s.sample === 'heldout')!;
    expect(held.rows).toBe(61);
    expect(held.calls_kept.share!).toBeGreaterThanOrEqual(0.9);
    expect(held.non_calls_excluded.share!).toBeGreaterThanOrEqual(0.5);
    // The figures get_capabilities states are the measured ones.
    expect(held.rows).toBe(CALL_RULE_HELDOUT.rows);
    expect(held.calls_kept.share).toBeCloseTo(CALL_RULE_HELDOUT.calls_kept, 12);
    expect(held.non_calls_excluded.share).toBeCloseTo(CALL_RULE_HELDOUT.non_calls_excluded, 12);
    expect(held.kept_are_calls.share).toBeCloseTo(CALL_RULE_HELDOUT.kept_are_calls, 12);
  });

  it('a second labeller agrees with the labelled set (kappa >= 0.8), and the stated precision on kept calls is the blind sample\'s', () => {
    const m = measureCallRule();
    expect(m.agreement.rows).toBe(183);
    expect(m.agreement.kappa).toBeGreaterThanOrEqual(0.8);
    expect(m.kept_sample.still_kept).toBe(CALL_RULE_KEPT_SAMPLE.rows);
    expect(m.kept_sample.precision).toMatchObject({ n: CALL_RULE_KEPT_SAMPLE.rows, k: CALL_RULE_KEPT_SAMPLE.calls });
  });
});

describe('yearBaseRate', () => {
  it("is the share of a year's days on which the close h days later was higher (lower), from the snapshot's BTC closes", () => {
    const series = loadSnapshot().series.bitcoin!;
    const close = new Map(series.dates.map((d, i) => [d, series.close[i]!]));
    const closeOn: CloseOn = (asset, date) => (asset === 'bitcoin' && close.has(date) ? { close: close.get(date)!, source: 's' } : undefined);
    const days = series.dates.filter((d) => d.startsWith('2017-') && close.has(addDays(d, 7)));
    const up = days.filter((d) => close.get(addDays(d, 7))! > close.get(d)!).length;
    const b = yearBaseRate(closeOn, 'bitcoin', 2017, 7)!;
    expect(b.days).toBe(days.length);
    expect(b.up).toBeCloseTo(up / days.length, 12);
    expect(yearBaseRate(closeOn, 'bitcoin', 1999, 7)).toBeNull();
  });
});
