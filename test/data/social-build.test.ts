// The committed data/social/social.json.gz is what `npm run data:build-social` makes from the raw
// CSVs with today's scorer and extractor: every row is there, and a spread sample of items carries
// exactly the raw fields, the sentiment score and the mentions recomputed here. (Rebuilding all
// 51,000 texts takes ~30 s; the sample catches a stale file after a lexicon or rule change.)
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sentimentScore } from '../../server/analytics/sentiment.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';
import { DEFAULT_SOCIAL_FILE, type SocialJson } from '../../server/providers/social/snapshot.ts';
import { rawCsv, rawReddit, rawTweets } from '../helpers/raw-csv.ts';

const built = JSON.parse(gunzipSync(fs.readFileSync(DEFAULT_SOCIAL_FILE)).toString('utf8')) as SocialJson;
const it_ = built.items;

describe('data/social/social.json.gz', () => {
  it('holds every raw post, comment and tweet once, oldest first', () => {
    const reddit = rawReddit();
    const tweets = rawTweets();
    expect(it_.id.length).toBe(reddit.length + tweets.length);
    expect(it_.platform.filter((p) => p === 'twitter').length).toBe(tweets.length);
    expect(new Set(it_.id.map((id, i) => `${it_.platform[i]}:${it_.kind[i]}:${id}`)).size).toBe(it_.id.length);
    for (let i = 1; i < it_.created.length; i++) expect(it_.created[i - 1]! <= it_.created[i]!).toBe(true);
    expect(built.influencers.length).toBe(rawCsv('social/crypto_twitter_influencers_2017.csv').length);
  });

  it('a sample of every 250th item matches its raw row, its sentiment score and its mentions', () => {
    const extractor = mentionExtractor(loadSnapshot().assets);
    const raw = new Map<string, { author: string; created: string; text: string }>();
    for (const r of rawReddit()) raw.set(`reddit:${r.kind}:${r.id}`, r);
    for (const t of rawTweets()) raw.set(`twitter:tweet:${t.id}`, t);
    let checked = 0;
    for (let i = 0; i < it_.id.length; i += 250) {
      const r = raw.get(`${it_.platform[i]}:${it_.kind[i]}:${it_.id[i]}`)!;
      expect(r).toBeDefined();
      expect(it_.author[i]).toBe(r.author);
      expect(it_.created[i]).toBe(r.created);
      expect(it_.compound[i]).toBe(sentimentScore(r.text));
      expect(it_.assets[i]).toEqual(extractor.assets(r.text));
      expect(r.text.startsWith(it_.text[i]!.replace(/…$/, ''))).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  }, 120_000);
});
