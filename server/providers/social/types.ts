// What social-intelligence and kol-analytics read: posts with their sentiment and the assets they
// mention, from the offline dataset (Reddit 2025, crypto accounts' tweets 2011-2017) or live Reddit.

export type Platform = 'reddit' | 'twitter';

export interface SocialPost {
  id: string;
  platform: Platform;
  /** A Reddit submission, a Reddit comment, or a tweet. */
  kind: 'post' | 'comment' | 'tweet';
  author: string;
  /** ISO 8601 UTC. */
  created: string;
  /** The subreddit; null for tweets. */
  community: string | null;
  /** The text, cut to about 300 characters (the score was computed on the whole text). */
  text: string;
  /** Reddit score (upvotes minus downvotes); null where the source has none (tweets). */
  score: number | null;
  /** Comments under a Reddit submission; null otherwise. */
  comments: number | null;
  /** VADER compound score with the crypto lexicon, -1..1. */
  compound: number;
  /** Asset ids mentioned, by the rules of server/analytics/mentions.ts. */
  assets: string[];
  url: string;
}

/** The days a platform's data covers, so answers can say so and windows can be checked. */
export interface Coverage {
  platform: Platform;
  from: string;
  to: string;
  items: number;
  source: string;
  /** Per kind of item, where kinds end (or start) at different days: Reddit comments end before its posts. */
  kinds?: { kind: SocialPost['kind']; from: string; to: string }[];
}

export interface PostQuery {
  platform: Platform;
  /** Only posts mentioning this asset id. */
  asset?: string;
  /** Only posts by this author (case-insensitive). */
  author?: string;
  /** Inclusive UTC days. */
  from: string;
  to: string;
}

export interface SocialSource {
  /** 'snapshot' or 'live:reddit'. */
  readonly name: string;
  platforms(): Platform[];
  coverage(platform: Platform, signal?: AbortSignal): Promise<Coverage>;
  /** Posts in the window, oldest first. */
  posts(query: PostQuery, signal?: AbortSignal): Promise<SocialPost[]>;
}

/** Engagement of a post: Reddit score plus comments; null where the source has none. */
export function engagement(p: SocialPost): number | null {
  if (p.score === null) return null;
  return p.score + (p.comments ?? 0);
}
