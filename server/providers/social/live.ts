// The live Reddit adapter: Reddit's public JSON listings (search.json and /r/<subs>/new.json), as
// documented at reddit.com/dev/api (a Listing of t3 "link" things). Posts are scored and their
// mentions extracted here, as the offline build does, so tools see the same SocialPost either way.
// Reddit asks API clients for a descriptive User-Agent; OAuth hosts take a bearer token.
import { z } from 'zod';
import type { MentionExtractor } from '../../analytics/mentions.ts';
import { sentimentScore } from '../../analytics/sentiment.ts';
import { addDays } from '../../lib/dates.ts';
import { getJson, TtlCache } from '../http.ts';
import type { AssetRegistry } from '../market/types.ts';
import { ProviderError } from '../../errors.ts';
import { TEXT_LIMIT } from './snapshot.ts';
import type { Coverage, Platform, PostQuery, SocialPost, SocialSource } from './types.ts';

const PROVIDER = 'live:reddit';

const ListingSchema = z.object({
  kind: z.literal('Listing'),
  data: z.object({
    after: z.string().nullish(),
    children: z.array(
      z.object({
        kind: z.string(),
        data: z.object({
          id: z.string(),
          subreddit: z.string(),
          author: z.string(),
          created_utc: z.number(),
          title: z.string(),
          selftext: z.string().default(''),
          score: z.number(),
          num_comments: z.number(),
          permalink: z.string(),
        }),
      }),
    ),
  }),
});

export interface RedditOptions {
  baseUrl: string;
  /** Subreddits read for questions about all posts (no asset). */
  subreddits: string[];
  userAgent: string;
  token?: string | undefined;
  /** Reddit search's time filter span: answers cover this many days back from today. */
  days?: number;
  timeoutMs?: number;
  retries?: number;
  /** All attempts and waits of one call together (GetJsonOptions.deadlineMs). */
  deadlineMs?: number;
  cacheTtlMs?: number;
  now?: () => number;
  registry: AssetRegistry;
  extractor: MentionExtractor;
}

export class RedditSource implements SocialSource {
  readonly name = PROVIDER;
  readonly #o: RedditOptions;
  readonly #cache: TtlCache<SocialPost[]>;

  constructor(o: RedditOptions) {
    this.#o = { ...o, baseUrl: o.baseUrl.replace(/\/+$/, '') };
    this.#cache = new TtlCache({ ttlMs: o.cacheTtlMs ?? 120_000, maxEntries: 200, now: o.now });
  }

  platforms(): Platform[] {
    return ['reddit'];
  }

  #today(): string {
    return new Date(this.#o.now?.() ?? Date.now()).toISOString().slice(0, 10);
  }

  async coverage(platform: Platform): Promise<Coverage> {
    if (platform !== 'reddit') throw new ProviderError(PROVIDER, 'not_found', 'live mode reads Reddit only');
    const to = this.#today();
    return { platform, from: addDays(to, -((this.#o.days ?? 30) - 1)), to, items: 0, source: PROVIDER };
  }

  async posts(q: PostQuery, signal?: AbortSignal): Promise<SocialPost[]> {
    let path: string;
    if (q.asset) {
      const a = this.#o.registry.get(q.asset);
      const terms = a ? [a.name, a.symbol.toUpperCase()].map((t) => (t.includes(' ') ? `"${t}"` : t)).join(' OR ') : q.asset;
      path = `/search.json?q=${encodeURIComponent(terms)}&sort=new&t=month&limit=100&type=link&raw_json=1`;
    } else {
      path = `/r/${this.#o.subreddits.map(encodeURIComponent).join('+')}/new.json?limit=100&raw_json=1`;
    }
    const all = await this.#cache.getOrLoad(path, () => this.#fetch(path), signal);
    return all.filter((p) => {
      const d = p.created.slice(0, 10);
      return d >= q.from && d <= q.to && (!q.asset || p.assets.includes(q.asset)) && (!q.author || p.author.toLowerCase() === q.author.toLowerCase());
    });
  }

  async #fetch(path: string): Promise<SocialPost[]> {
    const headers: Record<string, string> = { 'user-agent': this.#o.userAgent };
    if (this.#o.token) headers.authorization = `Bearer ${this.#o.token}`;
    const raw = await getJson(`${this.#o.baseUrl}${path}`, { provider: PROVIDER, headers, timeoutMs: this.#o.timeoutMs, retries: this.#o.retries, deadlineMs: this.#o.deadlineMs });
    const parsed = ListingSchema.safeParse(raw);
    if (!parsed.success) throw new ProviderError(PROVIDER, 'error', `${path.split('?')[0]}: unexpected response shape`);
    return parsed.data.data.children
      .filter((c) => c.kind === 't3')
      .map(({ data: d }) => {
        const full = d.selftext ? `${d.title}\n\n${d.selftext}` : d.title;
        return {
          id: d.id,
          platform: 'reddit' as const,
          kind: 'post' as const,
          author: d.author,
          created: new Date(d.created_utc * 1000).toISOString().replace('.000Z', 'Z'),
          community: d.subreddit.toLowerCase(),
          text: full.length > TEXT_LIMIT ? `${full.slice(0, TEXT_LIMIT - 1)}…` : full,
          score: d.score,
          comments: d.num_comments,
          compound: sentimentScore(full),
          assets: this.#o.extractor.assets(full),
          url: `https://www.reddit.com${d.permalink}`,
        };
      })
      .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0));
  }
}
