// The README's set-up is the whole set-up: in a fresh clone, with no .tools/ (nothing fetched
// helm or kubectl), `npm test -- test/charts` provisions them itself and the chart tests pass.
//
// The clone is `git clone` of this repository plus the working tree's uncommitted changes (so the
// test checks the code under test, not only the last commit). Its node_modules is a symlink to
// this checkout's: `npm ci` would add minutes and a second copy of ~1 GB to check npm itself,
// whose install .ci/run already runs; what this test is about is everything after it.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const TIMEOUT_MS = 240_000;

function git(cwd: string, args: string[], input?: string | Buffer): Buffer {
  return execFileSync('git', args, { cwd, input, maxBuffer: 256 * 1024 * 1024 });
}

/** Clones REPO into `dest` and brings over what is not committed yet (changed and new files). */
function cloneWorkingTree(dest: string): void {
  git(REPO, ['clone', '--quiet', REPO, dest]);
  const head = git(REPO, ['rev-parse', 'HEAD']).toString().trim();
  git(dest, ['checkout', '--quiet', head]);
  const diff = git(REPO, ['diff', '--binary', 'HEAD']);
  if (diff.length > 0) git(dest, ['apply', '--whitespace=nowarn'], diff);
  const untracked = git(REPO, ['ls-files', '-z', '--others', '--exclude-standard']).toString().split('\0').filter(Boolean);
  for (const file of untracked) {
    const from = path.join(REPO, file);
    if (!fs.statSync(from).isFile()) continue;
    fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dest, file));
  }
}

function npmTest(cwd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The inner vitest must not think it is a worker of this one.
  for (const name of Object.keys(env)) if (name.startsWith('VITEST') || name === 'TEST' || name === 'NODE_ENV') delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['test', '--', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS - 10_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('a fresh clone', { timeout: TIMEOUT_MS }, () => {
  let tmp: string;
  let clone: string;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-clone-'));
    clone = path.join(tmp, 'cryptomcp');
    cloneWorkingTree(clone);
    fs.symlinkSync(fs.realpathSync(path.join(REPO, 'node_modules')), path.join(clone, 'node_modules'));
  });
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('`npm test -- test/charts` fetches helm and kubectl itself (no .tools/ before) and the chart tests pass', async () => {
    expect(fs.existsSync(path.join(clone, '.tools')), 'the clone must start without .tools/').toBe(false);
    const { code, out } = await npmTest(clone, ['test/charts']);
    expect(code, out).toBe(0);
    expect(out).toContain('fetching helm and kubectl');
    const summary = /^(\d+) passed, (\d+) failed/m.exec(out);
    expect(summary, out).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThan(0);
    expect(Number(summary![2])).toBe(0);
    for (const tool of ['helm', 'kubectl']) {
      expect(fs.statSync(path.join(clone, '.tools', tool)).mode & 0o111, `.tools/${tool} is not executable`).not.toBe(0);
    }
  });
});
