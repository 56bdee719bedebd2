// The GitHub REST API (docs.github.com/rest, version 2022-11-28) for a project's developer
// activity: the repository, its weekly commit counts over the last year, and its contributors.
// GitHub computes commit statistics in the background and answers 202 until they are ready; the
// answer then says the statistics are pending rather than inventing zeros.
import { z } from 'zod';
import { getJson, TtlCache } from '../http.ts';
import { ProviderError } from '../../errors.ts';
import { REPO_PATTERN, type DeveloperActivity } from './types.ts';

const PROVIDER = 'live:github';

const RepoSchema = z.object({
  full_name: z.string(),
  html_url: z.string(),
  description: z.string().nullish(),
  stargazers_count: z.number(),
  forks_count: z.number(),
  open_issues_count: z.number(),
  archived: z.boolean().default(false),
  created_at: z.string(),
  pushed_at: z.string().nullish(),
  license: z.object({ spdx_id: z.string().nullish() }).nullish(),
});
const CommitActivitySchema = z.array(z.object({ days: z.array(z.number()), total: z.number(), week: z.number() }));
const ContributorsSchema = z.array(z.object({ login: z.string().nullish(), contributions: z.number() }));

export interface GitHubOptions {
  baseUrl: string;
  token?: string | undefined;
  timeoutMs?: number;
  retries?: number;
  /** All attempts and waits of one call together (GetJsonOptions.deadlineMs). */
  deadlineMs?: number;
  cacheTtlMs?: number;
}


export class GitHubClient {
  readonly #o: GitHubOptions;
  readonly #cache: TtlCache<DeveloperActivity>;

  constructor(o: GitHubOptions) {
    this.#o = { ...o, baseUrl: o.baseUrl.replace(/\/+$/, '') };
    this.#cache = new TtlCache({ ttlMs: o.cacheTtlMs ?? 3_600_000, maxEntries: 200 });
  }

  #get(path: string): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'cryptomcp' };
    if (this.#o.token) headers.authorization = `Bearer ${this.#o.token}`;
    return getJson(`${this.#o.baseUrl}${path}`, { provider: PROVIDER, headers, timeoutMs: this.#o.timeoutMs, retries: this.#o.retries, deadlineMs: this.#o.deadlineMs });
  }

  activity(repo: string, signal?: AbortSignal): Promise<DeveloperActivity> {
    if (!REPO_PATTERN.test(repo)) return Promise.reject(new ProviderError(PROVIDER, 'not_found', 'not an owner/name repository'));
    return this.#cache.getOrLoad(repo, () => this.#load(repo), signal);
  }

  async #load(repo: string): Promise<DeveloperActivity> {
    // Statistics and contributors may be pending (202 {}) or empty (204 for an empty repository):
    // their failure leaves that part unknown rather than failing the whole answer.
    const optional = (p: Promise<unknown>) => p.catch((err: unknown) => {
      if (err instanceof ProviderError && err.kind !== 'timeout') return undefined;
      throw err;
    });
    const [repoRaw, activityRaw, contributorsRaw] = await Promise.all([
      this.#get(`/repos/${repo}`),
      optional(this.#get(`/repos/${repo}/stats/commit_activity`)),
      optional(this.#get(`/repos/${repo}/contributors?per_page=100`)),
    ]);
    const r = RepoSchema.safeParse(repoRaw);
    if (!r.success) throw new ProviderError(PROVIDER, 'error', 'repository: unexpected response shape');
    // 202 Accepted comes with an empty object while the statistics are computed.
    const weeks = CommitActivitySchema.safeParse(activityRaw);
    const contributors = ContributorsSchema.safeParse(contributorsRaw);
    const contribs = contributors.success ? contributors.data : [];
    const total = contribs.reduce((s, c) => s + c.contributions, 0);
    const sum = (n: number) => (weeks.success ? weeks.data.slice(-n).reduce((s, w) => s + w.total, 0) : 0);
    return {
      repo: r.data.full_name,
      url: r.data.html_url,
      description: r.data.description ?? null,
      stars: r.data.stargazers_count,
      forks: r.data.forks_count,
      open_issues: r.data.open_issues_count,
      archived: r.data.archived,
      created_at: r.data.created_at,
      last_push: r.data.pushed_at ?? null,
      license: r.data.license?.spdx_id ?? null,
      commits: weeks.success
        ? { weeks_4: sum(4), weeks_13: sum(13), weeks_52: sum(52), weekly: weeks.data.map((w) => ({ week_start: new Date(w.week * 1000).toISOString().slice(0, 10), commits: w.total })) }
        : null,
      contributors: { count: contribs.length, capped_at_100: contribs.length === 100, top_share: total > 0 ? Math.max(...contribs.map((c) => c.contributions)) / total : null },
      source: PROVIDER,
    };
  }
}
