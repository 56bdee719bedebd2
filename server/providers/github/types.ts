// What the GitHub provider answers, and what a repository name looks like (owner/name).

/** owner/name as GitHub allows them. */
export const REPO_PATTERN = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;

export interface DeveloperActivity {
  repo: string;
  url: string;
  description: string | null;
  stars: number;
  forks: number;
  open_issues: number;
  archived: boolean;
  created_at: string;
  last_push: string | null;
  license: string | null;
  /** Commits in the last 4, 13 and 52 weeks; null while GitHub is still computing them (202). */
  commits: { weeks_4: number; weeks_13: number; weeks_52: number; weekly: { week_start: string; commits: number }[] } | null;
  /** Contributors on the first page (up to 100) and the share of commits of the top one. */
  contributors: { count: number; capped_at_100: boolean; top_share: number | null };
  source: string;
}
