// The GitHub REST client for developer activity, over real HTTP against a loopback server replaying
// the documented shapes (docs.github.com/rest: GET /repos/{owner}/{repo}, /stats/commit_activity
// with its 202-while-computing behaviour, /contributors).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitHubClient } from '../../server/providers/github/live.ts';
import { replayServer, type Replay } from '../helpers/replay-server.ts';

const REPO = {
  id: 1, full_name: 'octo/dex', html_url: 'https://github.com/octo/dex', description: 'A DEX', fork: false, stargazers_count: 120, watchers_count: 120,
  forks_count: 30, open_issues_count: 4, archived: false, created_at: '2022-01-05T10:00:00Z', pushed_at: '2025-11-28T09:00:00Z', license: { key: 'mit', spdx_id: 'MIT' },
};
const WEEK = 7 * 86_400;
const START = Date.parse('2024-12-08T00:00:00Z') / 1000;
// 52 weeks: one commit a week in the first 39, five a week in the last 13.
const ACTIVITY = Array.from({ length: 52 }, (_, i) => ({ days: [0, 0, 0, 0, 0, 0, 0], total: i >= 39 ? 5 : 1, week: START + i * WEEK }));
const CONTRIBUTORS = [{ login: 'alice', contributions: 80, type: 'User' }, { login: 'bob', contributions: 20, type: 'User' }];

let gh: Replay;
beforeAll(async () => {
  gh = await replayServer();
});
afterAll(async () => {
  await gh?.close();
});
beforeEach(() => {
  gh.routes.clear();
  gh.requests.length = 0;
  gh.routes.set('/repos/octo/dex', () => ({ status: 200, body: REPO }));
  gh.routes.set('/repos/octo/dex/stats/commit_activity', () => ({ status: 200, body: ACTIVITY }));
  gh.routes.set('/repos/octo/dex/contributors', () => ({ status: 200, body: CONTRIBUTORS }));
});

describe('GitHubClient', () => {
  it('sums weekly commits over 4, 13 and 52 weeks and measures contributor concentration, sending the token and API version', async () => {
    const a = await new GitHubClient({ baseUrl: gh.url, token: 'ghp_test' }).activity('octo/dex');
    expect(a).toMatchObject({ repo: 'octo/dex', stars: 120, forks: 30, license: 'MIT', archived: false, last_push: '2025-11-28T09:00:00Z' });
    expect(a.commits).toMatchObject({ weeks_4: 20, weeks_13: 65, weeks_52: 39 + 65 });
    expect(a.commits!.weekly[0]).toEqual({ week_start: '2024-12-08', commits: 1 });
    expect(a.contributors).toEqual({ count: 2, capped_at_100: false, top_share: 0.8 });
    const h = gh.requests[0]!.headers;
    expect(h.authorization).toBe('Bearer ghp_test');
    expect(h['x-github-api-version']).toBe('2022-11-28');
    expect(h.accept).toBe('application/vnd.github+json');
  });

  it('while GitHub computes the statistics (202 {}), commits are unknown (null), not zero', async () => {
    gh.routes.set('/repos/octo/dex/stats/commit_activity', () => ({ status: 202, body: {} }));
    const a = await new GitHubClient({ baseUrl: gh.url }).activity('octo/dex');
    expect(a.commits).toBeNull();
    expect(gh.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('an unknown repository is a not_found ProviderError; a malformed name never reaches the API', async () => {
    const c = new GitHubClient({ baseUrl: gh.url, retries: 0 });
    await expect(c.activity('octo/missing')).rejects.toMatchObject({ name: 'ProviderError', provider: 'live:github', kind: 'not_found' });
    const before = gh.requests.length;
    await expect(c.activity('../../etc')).rejects.toMatchObject({ kind: 'not_found' });
    expect(gh.requests.length).toBe(before);
  });
});
