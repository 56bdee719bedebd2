// Rows of the raw CSVs under data/raw (gzip), parsed with quoting: what tests recompute answers
// from, independently of the built datasets and the tools.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { unwrapByteString } from '../../server/providers/social/clean.ts';

const cache = new Map<string, Record<string, string>[]>();

export function rawCsv(file: string): Record<string, string>[] {
  let rows = cache.get(file);
  if (!rows) {
    const text = gunzipSync(fs.readFileSync(path.join(import.meta.dirname, '../../data/raw', `${file}.gz`))).toString('utf8');
    rows = parse(text, { columns: true, skip_empty_lines: true, relax_quotes: true }) as Record<string, string>[];
    cache.set(file, rows);
  }
  return rows;
}

/** Raw Reddit posts and comments as one list: full text, author, day, engagement. */
export function rawReddit() {
  const posts = rawCsv('social/reddit_crypto_posts_2025.csv').map((r) => ({
    id: r.post_id!,
    kind: 'post' as const,
    author: r.author!,
    day: r.created_utc!.slice(0, 10),
    created: r.created_utc!,
    text: r.selftext ? `${r.title}\n\n${r.selftext}` : r.title!,
    engagement: Number(r.score) + Number(r.num_comments),
  }));
  const comments = rawCsv('social/reddit_crypto_comments_2025.csv').map((r) => ({
    id: r.comment_id!,
    kind: 'comment' as const,
    author: r.author!,
    day: r.created_utc!.slice(0, 10),
    created: r.created_utc!,
    text: r.body!,
    engagement: Number(r.score),
  }));
  return [...posts, ...comments];
}

export function rawTweets() {
  return rawCsv('social/crypto_account_tweets_2011_2017.csv').map((r) => ({
    id: r.tweet_id!,
    author: r.author_handle!,
    created: `${r.created_at_utc!.replace(' ', 'T')}Z`,
    day: r.created_at_utc!.slice(0, 10),
    // As the build does (tested in test/providers/social-clean.test.ts).
    text: unwrapByteString(r.text!),
  }));
}

/** Daily closes of one asset from the raw price file a snapshot source names ('snapshot:yahoo'). */
export function rawCloses(source: string, asset: { id: string; symbol: string }): Map<string, number> {
  const out = new Map<string, number>();
  if (source === 'snapshot:yahoo') {
    for (const r of rawCsv('ohlcv/yahoo_usd_daily_2014_2025.csv')) if (r.symbol === asset.symbol.toUpperCase()) out.set(r.date!, Number(r.close));
  } else if (source === 'snapshot:cryptocompare') {
    for (const r of rawCsv('ohlcv/btc_usd_daily_2010_2025.csv')) out.set(r.date!, Number(r.close));
  } else if (source === 'snapshot:coinmarketcap') {
    for (const r of rawCsv('ohlcv/coinmarketcap_daily_2013_2017.csv')) if (r.coin === asset.id) out.set(r.date!, Number(r.close));
  } else {
    throw new Error(`no raw reader for ${source}`);
  }
  return out;
}
