// Calls of key opinion leaders and how they did. A call is a post (not a retweet, not an advert)
// that names exactly one asset with a clear stance (VADER compound >= 0.05 bullish, <= -0.05
// bearish); see exclusionOf for the rule and docs/data.md for how it measured on a labelled sample. Its return over h
// days runs from the close of the post's UTC day to the close h days later (the post may come
// before that close, never after: no look-ahead). A bearish call gains when the price falls:
// directional return = return for bullish, -return for bearish; a hit is a directional return
// above zero. Excess return = the call's directional return minus the same stance taken on BTC over
// the same days: did naming this asset beat simply being bullish (or bearish) on BTC? For calls on
// BTC itself it is zero.
import { addDays } from '../lib/dates.ts';
import { stanceOf, type Stance } from './sentiment.ts';

export const HORIZONS = [1, 7, 30] as const;
export type Horizon = (typeof HORIZONS)[number];

export interface CallPost {
  id: string;
  /** The account that posted it (for the own-product rule); absent in unit tests of the text rules. */
  author?: string;
  created: string;
  text: string;
  compound: number;
  assets: string[];
  url: string;
}

export interface Call {
  asset: string;
  date: string;
  created: string;
  stance: Exclude<Stance, 'neutral'>;
  compound: number;
  post: { id: string; text: string; url: string };
}

export const isRetweet = (text: string) => /^RT @\w+/.test(text);

/**
 * Promotion rather than a view: an invitation (join, stop by, sign up, register), a contest or
 * giveaway, deals and discounts, tickets and events (meetups, panels, watch parties), a product
 * pitch (try it, we have you covered, our new partner, now accepting orders, read our guide), a
 * price index or feed the account publishes ("Fresh Bitcoin and Ethereum Prices every day",
 * #CT_index), links to Telegram or Discord.
 */
export const ADVERT =
  /\b(join(ing)? (us|our)|please join|stop by|sign ?up|register (now|today|here)|giveaway|give away|chance to win|win (a|two|free|\d+)|winning|contest|tickets?\b|swag|deals?\b|discount|promo(tion)?\b|coupon|watch party|meetup|be sure to|check out|try it|we have you covered|our (new )?partner|now accepting orders|read our guide|here's how|auction|price index|prices every day|ct_index|telegram|discord|t\.me\/|subscribe|catch up on this week|sponsored)/i;

/** Names of other coins that contain a major asset's name: a post naming one is not about the major asset. */
const LOOKALIKES: Record<string, RegExp> = {
  bitcoin: /bitcoin ?(cash|gold|classic|unlimited|diamond|private|sv)\b|\b(bch|btg|bsv|bcash)\b/i,
  ethereum: /ethereum ?classic\b|\betc\b/i,
};

/**
 * The account's own figures published on a schedule, not a view: a fund's daily "NAV/share …; Net
 * Assets …" or "Bitcoin Holdings/share" post (BitcoinTrust's 463 daily posts, all scored bullish
 * on the word "Trust").
 */
export const FEED = /\bNAV\/share\b|\bholdings\/share\b|\bnet assets\b/i;

/**
 * Not the account's view of the asset: jokes, verse, quizzes, trivia and other people's quotes,
 * as Cointelegraph tags them (#CT_humor, #CT_haiku, #CT_questions, #CT_facts, #CT_quotes).
 */
export const NOT_A_VIEW = /#CT_(humou?r|haiku|questions?|facts|quotes)\b/i;

/**
 * The products of the accounts that sell one: a post by the account naming its own product promotes
 * it (Coinbase on Coinbase, BitPay on BitPay or Copay, Grayscale's trust on the trust or GBTC).
 * Keyed by lower-case handle; news accounts have none (their articles are what they publish).
 */
const OWN_PRODUCTS: Record<string, RegExp> = {
  coinbase: /\bcoinbase\b|\bgdax\b/i,
  bitpay: /\bbitpay\b|\bcopay\b|\bbitcore\b/i,
  bitcointrust: /[Bb]itcoin [Ii]nvestment [Tt]rust|@BitcoinTrust\b|\bGBTC\b|\bBIT\b/,
};

export type Exclusion = 'retweet' | 'feed' | 'not_a_view' | 'advert' | 'own_product' | 'several_assets' | 'other_asset';
export const EXCLUSIONS: readonly Exclusion[] = ['retweet', 'feed', 'not_a_view', 'advert', 'own_product', 'several_assets', 'other_asset'];

/**
 * Why a post with a stance is not a call on `asset`, or null when it is one. The rule, in order:
 * a retweet repeats someone else's words; a feed publishes the account's own figures (FEED); a
 * joke, quiz or quote is not a view (NOT_A_VIEW); an advert promotes (ADVERT); an account naming
 * its own product promotes it (OWN_PRODUCTS); a post naming several
 * assets gives no stance on any one of them; a post naming a coin whose name contains the asset's
 * ("#BitcoinCash" for Bitcoin) is about that other coin.
 */
export function exclusionOf(post: CallPost, asset: string, opts: { includeRetweets?: boolean } = {}): Exclusion | null {
  if (!opts.includeRetweets && isRetweet(post.text)) return 'retweet';
  if (FEED.test(post.text)) return 'feed';
  if (NOT_A_VIEW.test(post.text)) return 'not_a_view';
  if (ADVERT.test(post.text)) return 'advert';
  if (post.author && OWN_PRODUCTS[post.author.toLowerCase()]?.test(post.text)) return 'own_product';
  if (post.assets.length > 1) return 'several_assets';
  if (LOOKALIKES[asset]?.test(post.text)) return 'other_asset';
  return null;
}

export const CALL_RULE =
  "a call is a post with VADER compound >= 0.05 (bullish) or <= -0.05 (bearish) naming exactly one asset, leaving out retweets (unless asked), the account's own figures (a fund's NAV or holdings per share), jokes, quizzes and quotes, adverts (invitations, contests, deals, events, product pitches, price feeds, Telegram/Discord links), an account's posts on its own product and posts naming a coin whose name contains the asset's (Bitcoin Cash, Ethereum Classic)";

export function extractCalls(posts: readonly CallPost[], opts: { includeRetweets?: boolean; asset?: string } = {}): Call[] {
  const calls: Call[] = [];
  for (const p of posts) {
    const stance = stanceOf(p.compound);
    if (stance === 'neutral') continue;
    for (const a of p.assets) {
      if (opts.asset && a !== opts.asset) continue;
      if (exclusionOf(p, a, opts) !== null) continue;
      calls.push({ asset: a, date: p.created.slice(0, 10), created: p.created, stance, compound: p.compound, post: { id: p.id, text: p.text, url: p.url } });
    }
  }
  return calls;
}

/** Close of an asset on a UTC day and the dataset it came from, or undefined when not covered. */
export type CloseOn = (asset: string, date: string) => { close: number; source: string } | undefined;

export interface HorizonResult {
  days: Horizon;
  exit_date: string;
  exit_close: number | null;
  /** Price return (0.05 = +5%); null when the price history does not reach the exit day. */
  return: number | null;
  directional_return: number | null;
  btc_return: number | null;
  excess_return: number | null;
  hit: boolean | null;
}

export interface ScoredCall extends Call {
  entry_close: number | null;
  price_source: string | null;
  horizons: HorizonResult[];
}

export function scoreCall(call: Call, closeOn: CloseOn): ScoredCall {
  const entry = closeOn(call.asset, call.date);
  const btcEntry = closeOn('bitcoin', call.date);
  const horizons = HORIZONS.map((h): HorizonResult => {
    const exitDate = addDays(call.date, h);
    const exit = entry ? closeOn(call.asset, exitDate) : undefined;
    const r = entry && exit ? exit.close / entry.close - 1 : null;
    const dir = r === null ? null : call.stance === 'bullish' ? r : -r;
    const btcExit = btcEntry ? closeOn('bitcoin', exitDate) : undefined;
    const btc = btcEntry && btcExit ? btcExit.close / btcEntry.close - 1 : null;
    return {
      days: h,
      exit_date: exitDate,
      exit_close: exit?.close ?? null,
      return: r,
      directional_return: dir,
      btc_return: btc,
      excess_return: dir !== null && btc !== null ? dir - (call.stance === 'bullish' ? btc : -btc) : null,
      hit: dir === null ? null : dir > 0,
    };
  });
  return { ...call, entry_close: entry?.close ?? null, price_source: entry?.source ?? null, horizons };
}

export interface HorizonSummary {
  days: Horizon;
  calls_scored: number;
  hit_rate: number | null;
  mean_return: number | null;
  median_return: number | null;
  mean_excess_return: number | null;
}

export function summarise(calls: readonly ScoredCall[]): HorizonSummary[] {
  return HORIZONS.map((h, i) => {
    const rs = calls.map((c) => c.horizons[i]!).filter((x) => x.directional_return !== null);
    const dirs = rs.map((x) => x.directional_return!).sort((a, b) => a - b);
    const ex = rs.map((x) => x.excess_return).filter((x): x is number => x !== null);
    const n = dirs.length;
    return {
      days: h,
      calls_scored: n,
      hit_rate: n ? rs.filter((x) => x.hit).length / n : null,
      mean_return: n ? dirs.reduce((a, b) => a + b, 0) / n : null,
      median_return: n ? (n % 2 ? dirs[n >> 1]! : (dirs[n / 2 - 1]! + dirs[n / 2]!) / 2) : null,
      mean_excess_return: ex.length ? ex.reduce((a, b) => a + b, 0) / ex.length : null,
    };
  });
}

/**
 * The share of the days of one calendar year on which the asset's close h days later was higher
 * (up) or lower (down): what a call of that stance would hit by saying it every day that year.
 */
export function yearBaseRate(closeOn: CloseOn, asset: string, year: number, horizonDays: number): { up: number; down: number; days: number } | null {
  let days = 0;
  let up = 0;
  let down = 0;
  for (let d = `${year}-01-01`; d <= `${year}-12-31`; d = addDays(d, 1)) {
    const a = closeOn(asset, d);
    const b = a && closeOn(asset, addDays(d, horizonDays));
    if (!a || !b) continue;
    days++;
    if (b.close > a.close) up++;
    else if (b.close < a.close) down++;
  }
  return days ? { up: up / days, down: down / days, days } : null;
}

export interface EdgeSummary {
  days: Horizon;
  calls_scored: number;
  hit_rate: number | null;
  /** Mean over the calls of the base rate of each (its asset, stance and year). */
  base_rate: number | null;
  /** hit_rate − base_rate. */
  excess_hit_rate: number | null;
  /**
   * 95% interval of excess_hit_rate: calls less than a horizon apart share days, so the variance
   * is a Newey-West (Bartlett) estimate over calendar distance, never below the independent one.
   */
  ci95: [number, number] | null;
  versus_base: 'above' | 'below' | 'indistinguishable' | null;
}

/**
 * 95% interval of the mean of x over calls at times t (days), where calls less than h days apart
 * share days: a Newey-West (Bartlett) variance over calendar distance, never below the independent
 * one. m is the mean of x; rows must be sorted by t.
 */
function overlapCi95(rows: readonly { t: number; x: number }[], h: number, m: number): [number, number] {
  const n = rows.length;
  let s = 0;
  let iid = 0;
  for (let i = 0; i < n; i++) {
    const xi = rows[i]!.x - m;
    s += xi * xi;
    iid += xi * xi;
    for (let j = i + 1; j < n && rows[j]!.t - rows[i]!.t < h; j++) {
      s += 2 * (1 - (rows[j]!.t - rows[i]!.t) / h) * xi * (rows[j]!.x - m);
    }
  }
  const half = 1.959964 * Math.sqrt(Math.max(s, iid) / (n * n));
  return [m - half, m + half];
}

/**
 * The mean excess return over BTC of the calls at one horizon with its 95% interval (the same
 * overlap-aware variance as edgeOverBase's); null without a scored call.
 */
export function excessReturnCi95(calls: readonly ScoredCall[], hi: number): { mean: number; ci95: [number, number] } | null {
  const rows = calls
    .filter((c) => c.horizons[hi]!.excess_return !== null)
    .map((c) => ({ t: Date.parse(`${c.date}T00:00:00Z`) / 86_400_000, x: c.horizons[hi]!.excess_return! }))
    .sort((a, b) => a.t - b.t);
  if (rows.length === 0) return null;
  const mean = rows.reduce((s, r) => s + r.x, 0) / rows.length;
  return { mean, ci95: overlapCi95(rows, HORIZONS[hi]!, mean) };
}

/** Hit rate against the base rate of the same calls at one horizon (index into HORIZONS). */
export function edgeOverBase(calls: readonly ScoredCall[], hi: number, baseOf: (c: ScoredCall) => number | null): EdgeSummary {
  const h = HORIZONS[hi]!;
  const rows = calls
    .map((c) => ({ c, r: c.horizons[hi]!, base: baseOf(c) }))
    .filter((x) => x.r.hit !== null && x.base !== null)
    .map((x) => ({ t: Date.parse(`${x.c.date}T00:00:00Z`) / 86_400_000, hit: x.r.hit ? 1 : 0, base: x.base! }))
    .sort((a, b) => a.t - b.t);
  const n = rows.length;
  if (n === 0) return { days: h, calls_scored: 0, hit_rate: null, base_rate: null, excess_hit_rate: null, ci95: null, versus_base: null };
  const hit = rows.reduce((s, r) => s + r.hit, 0) / n;
  const base = rows.reduce((s, r) => s + r.base, 0) / n;
  const e = hit - base;
  const ci95 = overlapCi95(rows.map((r) => ({ t: r.t, x: r.hit - r.base })), h, e);
  return { days: h, calls_scored: n, hit_rate: hit, base_rate: base, excess_hit_rate: e, ci95, versus_base: ci95[0] > 0 ? 'above' : ci95[1] < 0 ? 'below' : 'indistinguishable' };
}

/**
 * How the call rule did on the held-out rows of test/fixtures/kol-calls-labelled.tsv, as
 * npm run measure:kol prints it; a test keeps the two equal.
 */
export const CALL_RULE_HELDOUT = { rows: 61, calls_kept: 31 / 34, non_calls_excluded: 21 / 27, kept_are_calls: 31 / 37 } as const;

/**
 * 80 calls the rule keeps, labelled blind by a second labeller (test/fixtures/kol-calls-kept-sample.tsv):
 * the share that are calls is the rule's precision on what it publishes. npm run measure:kol.
 */
export const CALL_RULE_KEPT_SAMPLE = { rows: 80, calls: 56 } as const;

export const CALL_RULE_QUALITY = `Call rule on ${CALL_RULE_HELDOUT.rows} held-out hand-labelled tweets: keeps ${(CALL_RULE_HELDOUT.calls_kept * 100).toFixed(1)}% of real calls, leaves out ${(CALL_RULE_HELDOUT.non_calls_excluded * 100).toFixed(1)}% of adverts, feeds, jokes and other-asset posts; of ${CALL_RULE_KEPT_SAMPLE.rows} calls it keeps, labelled blind by a second labeller, ${((CALL_RULE_KEPT_SAMPLE.calls / CALL_RULE_KEPT_SAMPLE.rows) * 100).toFixed(1)}% are calls (the rest mostly adverts). Leaderboards rank by the lower end of the 95% interval of hit rate minus each call's base rate (or of excess return), so small samples do not lead on luck.`;
