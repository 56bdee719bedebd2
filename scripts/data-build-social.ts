// npm run data:build-social — turns the raw social CSVs (data/raw/social, see data/README.md) into
// what social-intelligence and kol-analytics load: data/social/social.json.gz. Each post, comment
// and tweet gets its VADER+crypto sentiment and the assets it mentions here, once, because scoring
// ~51,000 texts takes about half a minute: too long for a first request. Deterministic output.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { sentimentScore } from '../server/analytics/sentiment.ts';
import { loadSnapshot } from '../server/providers/market/snapshot.ts';
import { unwrapByteString } from '../server/providers/social/clean.ts';
import { mentionExtractor } from '../server/providers/social/extractor.ts';
import { SOCIAL_FORMAT, TEXT_LIMIT, type SocialJson } from '../server/providers/social/snapshot.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RAW = path.join(ROOT, 'data/raw/social');
export const SOCIAL_OUT = path.join(ROOT, 'data/social/social.json.gz');

function readCsv(file: string): Record<string, string>[] {
  const text = gunzipSync(fs.readFileSync(path.join(RAW, `${file}.gz`))).toString('utf8');
  return parse(text, { columns: true, skip_empty_lines: true, relax_quotes: true }) as Record<string, string>[];
}

const int = (s: string | undefined): number | null => (s === undefined || s.trim() === '' ? null : Math.round(Number(s)));

export function buildSocial(): SocialJson {
  const extractor = mentionExtractor(loadSnapshot().assets);
  interface Item { id: string; platform: 'reddit' | 'twitter'; kind: 'post' | 'comment' | 'tweet'; author: string; created: string; community: string; full: string; score: number | null; comments: number | null; parent: string }
  const items: Item[] = [];
  for (const r of readCsv('reddit_crypto_posts_2025.csv')) {
    const full = r.selftext ? `${r.title}\n\n${r.selftext}` : r.title!;
    items.push({ id: r.post_id!, platform: 'reddit', kind: 'post', author: r.author!, created: r.created_utc!, community: r.subreddit!, full, score: int(r.score), comments: int(r.num_comments), parent: '' });
  }
  for (const r of readCsv('reddit_crypto_comments_2025.csv')) {
    items.push({ id: r.comment_id!, platform: 'reddit', kind: 'comment', author: r.author!, created: r.created_utc!, community: r.subreddit!, full: r.body!, score: int(r.score), comments: null, parent: r.post_id! });
  }
  for (const r of readCsv('crypto_account_tweets_2011_2017.csv')) {
    items.push({ id: r.tweet_id!, platform: 'twitter', kind: 'tweet', author: r.author_handle!, created: `${r.created_at_utc!.replace(' ', 'T')}Z`, community: '', full: unwrapByteString(r.text!), score: null, comments: null, parent: '' });
  }
  // Oldest first, ties by id, so the file (and every answer's order) is reproducible.
  items.sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const out: SocialJson = {
    format: SOCIAL_FORMAT,
    sources: {
      reddit: 'data/raw/social/reddit_crypto_posts_2025.csv + reddit_crypto_comments_2025.csv (Reddit API via zakariaeyahya/Crypto_Analysis)',
      twitter: 'data/raw/social/crypto_account_tweets_2011_2017.csv (Twitter user_timeline via elliot-winch/BAChallengeTeam3)',
      influencers: 'data/raw/social/crypto_twitter_influencers_2017.csv (dperezrada/crypto-influencers)',
    },
    items: { id: [], platform: [], kind: [], author: [], created: [], community: [], text: [], score: [], comments: [], parent: [], compound: [], assets: [] },
    influencers: readCsv('crypto_twitter_influencers_2017.csv').map((r) => ({
      handle: r.handle!,
      seed_graph: int(r.followed_by_in_influencers_seed_graph),
      bitcoin_core_graph: int(r.followed_by_in_bitcoin_core_seed_graph),
    })),
  };
  const it = out.items;
  for (const x of items) {
    it.id.push(x.id);
    it.platform.push(x.platform);
    it.kind.push(x.kind);
    it.author.push(x.author);
    it.created.push(x.created);
    it.community.push(x.community);
    it.text.push(x.full.length > TEXT_LIMIT ? `${x.full.slice(0, TEXT_LIMIT - 1)}…` : x.full);
    it.score.push(x.score);
    it.comments.push(x.comments);
    it.parent.push(x.parent);
    it.compound.push(sentimentScore(x.full));
    it.assets.push(extractor.assets(x.full));
  }
  return out;
}

if (import.meta.main) {
  const started = Date.now();
  const data = buildSocial();
  fs.mkdirSync(path.dirname(SOCIAL_OUT), { recursive: true });
  fs.writeFileSync(SOCIAL_OUT, gzipSync(JSON.stringify(data), { level: 9 }));
  console.log(`wrote ${path.relative(ROOT, SOCIAL_OUT)}: ${data.items.id.length} items in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
