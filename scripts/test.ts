// `npm test`: provision what the tests need (scripts/provision.ts), then the whole vitest suite
// with lint and typecheck running beside it. Prints the closing line CI reads, "N passed, N
// failed", from vitest's JSON report (a failed lint or typecheck counts as one failure), and exits
// non-zero on any failure. `npm test -- <paths>` runs only the files matching the paths (vitest's
// filters) and skips lint and typecheck, which are about the whole tree.
//
// Lint and typecheck are CPU only, and the suite spends much of its time waiting on PostgreSQL,
// anvil, Chromium and child processes: run one after the other before the tests, they added
// about three minutes to the run; beside the tests, at a lower scheduling priority (nice 10), they
// use the CPU the tests leave idle, and once the tests are done they go back to the normal
// priority (on a machine shared with other work, nice 10 alone could starve them). Their output is
// held and printed after the tests', so the two do not interleave.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { provision } from './provision.ts';

const REPORT = '.vitest-report.json';
/** Below the tests' priority while they run: lint and typecheck take the CPU the tests leave idle. */
const CHECKS_NICENESS = 10;
let checksNiceness = CHECKS_NICENESS;
/** The check running now, to be given the normal priority back when the tests end. */
let runningCheck: number | undefined;

function renice(pid: number, niceness: number): void {
  try {
    os.setPriority(pid, niceness);
  } catch {
    // Not permitted here (raising priority back needs privileges): the check keeps the one it has.
  }
}

/** Runs a command with the terminal, without blocking this process (the checks' output is read meanwhile). */
function run(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

interface CheckResult {
  name: string;
  status: number;
  output: string;
  seconds: number;
}

/** Runs a check with its output held (stdout and stderr in order), at a lower priority. */
function check(name: string, cmd: string, args: string[]): Promise<CheckResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    runningCheck = child.pid;
    if (child.pid !== undefined && checksNiceness !== 0) renice(child.pid, checksNiceness);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const done = (status: number) => resolve({ name, status, output, seconds: (performance.now() - started) / 1000 });
    child.on('error', (err) => {
      output += `${err.message}\n`;
      done(1);
    });
    child.on('close', (code) => done(code ?? 1));
  });
}

const args = process.argv.slice(2);
// Vitest's file filters: the positional arguments, less the value of a test-name pattern.
const filters = args.filter((a, i) => !a.startsWith('-') && !['-t', '--testNamePattern'].includes(args[i - 1] ?? ''));

// V8's compile cache (with TypeScript's stripped output) for every Node process the suite starts:
// the tests start the service, the operator and the CLI as child processes several dozen times,
// and each imported the whole service (~1.6 s of CPU) compiling it afresh; from the cache, ~1.0 s.
// Keyed by each file's content, so a changed file is compiled again; nothing else changes.
process.env.NODE_COMPILE_CACHE ??= path.resolve('node_modules/.cache/node-compile-cache');

// The run's temporary files (every test's mkdtemp: the PostgreSQL data folders, Chromium
// profiles, clones, the container image being built) on tmpfs when the machine has one: on this
// machine's ext4, mounted with `discard`, creating and deleting files is what PostgreSQL spent most
// of its system time on (CREATE DATABASE copies hundreds of files per test file, DROP DATABASE
// deletes them; perf: openat was 40% of its kernel samples). Measured alternately over 20 test
// files (metering, db, start, cli, the dashboard e2e, the operator's watch test): 97 and 106 CPU-s
// on /tmp, 88 and 93 on /dev/shm. A TMPDIR the caller set is kept. The folder carries the pid of
// this run; one whose run is gone (a Ctrl-C) is removed by the next run.
const TMPFS = '/dev/shm';
function runTempDir(): string | undefined {
  if (process.env.TMPDIR) return undefined;
  try {
    fs.accessSync(TMPFS, fs.constants.W_OK);
  } catch {
    return undefined;
  }
  for (const name of fs.readdirSync(TMPFS)) {
    const pid = /^cryptomcp-test-(\d+)$/.exec(name)?.[1];
    if (pid === undefined || isAlive(Number(pid))) continue;
    fs.rmSync(path.join(TMPFS, name), { recursive: true, force: true });
  }
  const dir = path.join(TMPFS, `cryptomcp-test-${process.pid}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  // Like /tmp: PostgreSQL runs as `postgres` when we are root and must enter its folder.
  fs.chmodSync(dir, 0o1777);
  return dir;
}
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
const runTmp = runTempDir();
if (runTmp !== undefined) {
  process.env.TMPDIR = runTmp;
  process.on('exit', () => fs.rmSync(runTmp, { recursive: true, force: true }));
}

console.log('== provision');
provision(filters);

const bin = (name: string) => `node_modules/.bin/${name}`;
// One after the other (each is CPU-bound; together they would compete with each other and the tests).
// The typecheck runs on TypeScript 7 (the native compiler, package alias `typescript7`): 11 s of
// CPU for the tree against 46 s for TypeScript 5.9's tsc (same machine, 17:00 UTC 2026-11-26,
// `/usr/bin/time`). ESLint builds no type program: the one type-aware rule, floating promises, is
// oxlint's (tsgolint, on TypeScript 7 too): 12 s of CPU where typescript-eslint's program on
// TypeScript 5.9 took about 45 s.
const TSC = ['node_modules/typescript7/bin/tsc'];
async function lintAndTypecheck(): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  results.push(await check('lint', bin('eslint'), ['.']));
  // The type-aware rule (floating promises): oxlint's tsgolint, on TypeScript 7 (.oxlintrc.json).
  results.push(await check('lint types', bin('oxlint'), ['--type-aware']));
  results.push(await check('typecheck', process.execPath, [...TSC, '-p', '.']));
  // The dashboard's front end has its own settings (DOM, JSX, bundler resolution).
  results.push(await check('typecheck web', process.execPath, [...TSC, '-p', 'web']));
  return results;
}
const checks = filters.length > 0 ? Promise.resolve([]) : lintAndTypecheck();
console.log(filters.length > 0 ? '\n== lint and typecheck skipped: only the selected tests run' : '\n== lint and typecheck: running beside the tests, reported after them');

// The container image (test/image runs both entry points in it) is built beside lint and the
// first test files: most of its time is spent downloading and unpacking Debian packages and npm
// tarballs, not on the CPU. The test waits for it (CRYPTOMCP_IMAGE_DIR); run alone, it builds it.
const IMAGE_TEST = 'test/image/image.test.ts';
if (filters.length === 0 || filters.some((f) => IMAGE_TEST.includes(f.replace(/^\.\//, '').replace(/\/$/, '')))) {
  const dir = runTmp !== undefined ? path.join(runTmp, 'image') : path.resolve('.data/image');
  // Gone before the test can look: a finished build of an earlier run must not pass for this one.
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync('.data', { recursive: true });
  const log = fs.openSync('.data/image-build.log', 'w');
  const build = spawn(process.execPath, ['scripts/build-image.ts', '--out', dir], { stdio: ['ignore', log, log] });
  build.unref();
  process.env.CRYPTOMCP_IMAGE_DIR = dir;
  console.log(`\n== image: building in the background into ${runTmp !== undefined ? dir : path.relative('.', dir)} (log: .data/image-build.log)`);
}

console.log('\n== tests');
fs.rmSync(REPORT, { force: true });
const status = await run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${REPORT}`, ...args]);
checksNiceness = 0;
if (runningCheck !== undefined) renice(runningCheck, 0);
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const report = JSON.parse(fs.readFileSync(REPORT, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests?: number;
    testResults?: { status: string; assertionResults: { status: string }[] }[];
  };
  passed = report.numPassedTests;
  // A file that failed without a failed test (it did not load, or a beforeAll threw and its tests
  // were skipped) is a failure too, whatever other files did.
  const failedFiles = (report.testResults ?? []).filter((f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed')).length;
  failed = report.numFailedTests + failedFiles;
  skipped = report.numPendingTests + (report.numTodoTests ?? 0);
} catch {
  failed = Math.max(1, failed);
}
if (status !== 0 && failed === 0) failed = 1;

let checksFailed = 0;
for (const result of await checks) {
  console.log(`\n== ${result.name} (${result.seconds.toFixed(0)} s)`);
  if (result.output.trim()) process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
  if (result.status !== 0) {
    console.log(`${result.name} failed`);
    checksFailed += 1;
  }
}
failed += checksFailed;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
