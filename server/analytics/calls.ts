// Calls of key opinion leaders and how they did. A call is a post (not a retweet) that mentions an
// asset with a clear stance (VADER compound >= 0.05 bullish, <= -0.05 bearish). Its return over h
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

export function extractCalls(posts: readonly CallPost[], opts: { includeRetweets?: boolean; asset?: string } = {}): Call[] {
  const calls: Call[] = [];
  for (const p of posts) {
    if (!opts.includeRetweets && isRetweet(p.text)) continue;
    const stance = stanceOf(p.compound);
    if (stance === 'neutral') continue;
    for (const a of p.assets) {
      if (opts.asset && a !== opts.asset) continue;
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
