// The offline social dataset: data/social/social.json.gz, built by `npm run data:build-social`.
// Loaded on first use (not at start), so processes that never serve social tools never pay for it.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Coverage, Platform, PostQuery, SocialPost, SocialSource } from './types.ts';

export const SOCIAL_FORMAT = 1;
/** Characters of text kept per item (sentiment and mentions are computed on the whole text first). */
export const TEXT_LIMIT = 300;
export const DEFAULT_SOCIAL_FILE = path.resolve(import.meta.dirname, '../../../data/social/social.json.gz');

export interface Influencer {
  handle: string;
  /** How many accounts of the crawled crypto-influencer network follow this handle (2017). */
  seed_graph: number | null;
  /** The same in the network crawled from Bitcoin Core accounts. */
  bitcoin_core_graph: number | null;
}

export interface SocialJson {
  format: number;
  sources: Record<'reddit' | 'twitter' | 'influencers', string>;
  items: {
    id: string[];
    platform: Platform[];
    kind: SocialPost['kind'][];
    author: string[];
    created: string[];
    community: string[];
    text: string[];
    score: (number | null)[];
    comments: (number | null)[];
    /** The submission a comment belongs to ('' otherwise). */
    parent: string[];
    compound: number[];
    assets: string[][];
  };
  influencers: Influencer[];
}

function permalink(platform: Platform, kind: SocialPost['kind'], id: string, author: string, community: string, parent: string): string {
  if (platform === 'twitter') return `https://twitter.com/${author}/status/${id}`;
  return kind === 'comment' ? `https://www.reddit.com/r/${community}/comments/${parent}/comment/${id}/` : `https://www.reddit.com/r/${community}/comments/${id}/`;
}

export class SocialDataset {
  readonly posts: readonly SocialPost[];
  readonly influencers: ReadonlyMap<string, Influencer>;
  readonly sources: SocialJson['sources'];
  readonly #byAsset = new Map<string, SocialPost[]>();
  readonly #byAuthor = new Map<string, SocialPost[]>();
  readonly #byPlatform = new Map<Platform, SocialPost[]>();

  constructor(json: SocialJson) {
    if (json.format !== SOCIAL_FORMAT) throw new Error(`social data has format ${json.format}; this server reads ${SOCIAL_FORMAT}`);
    const it = json.items;
    const posts: SocialPost[] = [];
    for (let i = 0; i < it.id.length; i++) {
      const platform = it.platform[i]!;
      const kind = it.kind[i]!;
      const p: SocialPost = {
        id: it.id[i]!,
        platform,
        kind,
        author: it.author[i]!,
        created: it.created[i]!,
        community: it.community[i] || null,
        text: it.text[i]!,
        score: it.score[i] ?? null,
        comments: it.comments[i] ?? null,
        compound: it.compound[i]!,
        assets: it.assets[i]!,
        url: permalink(platform, kind, it.id[i]!, it.author[i]!, it.community[i]!, it.parent[i]!),
      };
      posts.push(p);
      push(this.#byPlatform, platform, p);
      push(this.#byAuthor, `${platform}:${p.author.toLowerCase()}`, p);
      for (const a of p.assets) push(this.#byAsset, `${platform}:${a}`, p);
    }
    this.posts = posts;
    this.sources = json.sources;
    this.influencers = new Map(json.influencers.map((x) => [x.handle.toLowerCase(), x]));
  }

  byPlatform(platform: Platform): readonly SocialPost[] {
    return this.#byPlatform.get(platform) ?? [];
  }

  byAuthor(platform: Platform, author: string): readonly SocialPost[] {
    return this.#byAuthor.get(`${platform}:${author.toLowerCase()}`) ?? [];
  }

  byAsset(platform: Platform, asset: string): readonly SocialPost[] {
    return this.#byAsset.get(`${platform}:${asset}`) ?? [];
  }

  /** Distinct authors of a platform with their post counts. */
  authors(platform: Platform): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.byPlatform(platform)) out.set(p.author, (out.get(p.author) ?? 0) + 1);
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Reads and indexes the dataset once per file, on first call. */
export function lazySocialDataset(file = DEFAULT_SOCIAL_FILE): () => SocialDataset {
  let dataset: SocialDataset | undefined;
  return () => {
    if (!dataset) {
      let raw: Buffer;
      try {
        raw = fs.readFileSync(file);
      } catch (err) {
        throw new Error(`social data not found at ${file}: run \`npm run data:build-social\``, { cause: err });
      }
      dataset = new SocialDataset(JSON.parse(gunzipSync(raw).toString('utf8')) as SocialJson);
    }
    return dataset;
  };
}

const day = (iso: string) => iso.slice(0, 10);

/** The offline dataset behind the SocialSource interface. */
export class SnapshotSocialSource implements SocialSource {
  readonly name = 'snapshot';
  readonly dataset: () => SocialDataset;

  constructor(dataset: () => SocialDataset) {
    this.dataset = dataset;
  }

  platforms(): Platform[] {
    return ['reddit', 'twitter'];
  }

  async coverage(platform: Platform): Promise<Coverage> {
    const posts = this.dataset().byPlatform(platform);
    const kinds = new Map<SocialPost['kind'], { kind: SocialPost['kind']; from: string; to: string }>();
    for (const p of posts) {
      const k = kinds.get(p.kind);
      if (!k) kinds.set(p.kind, { kind: p.kind, from: day(p.created), to: day(p.created) });
      else k.to = day(p.created);
    }
    return {
      platform,
      from: day(posts[0]?.created ?? ''),
      to: day(posts[posts.length - 1]?.created ?? ''),
      items: posts.length,
      source: `snapshot:${platform}`,
      kinds: [...kinds.values()],
    };
  }

  async posts(q: PostQuery): Promise<SocialPost[]> {
    const ds = this.dataset();
    const base = q.author ? ds.byAuthor(q.platform, q.author) : q.asset ? ds.byAsset(q.platform, q.asset) : ds.byPlatform(q.platform);
    return base.filter((p) => {
      const d = day(p.created);
      return d >= q.from && d <= q.to && (!q.asset || p.assets.includes(q.asset));
    });
  }
}
