// `npm test`: provision what the tests need (scripts/provision.ts), lint, typecheck, then the
// whole vitest suite. Prints the closing line CI reads, "N passed, N failed", from vitest's JSON
// report, and exits non-zero on any failure. `npm test -- <paths>` runs only the files matching
// the paths (vitest's filters) and skips lint and typecheck, which are about the whole tree.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { provision } from './provision.ts';

const REPORT = '.vitest-report.json';

function run(cmd: string, args: string[]): number {
  const res = spawnSync(cmd, args, { stdio: 'inherit' });
  return res.status ?? 1;
}

const args = process.argv.slice(2);
// Vitest's file filters: the positional arguments, less the value of a test-name pattern.
const filters = args.filter((a, i) => !a.startsWith('-') && !['-t', '--testNamePattern'].includes(args[i - 1] ?? ''));

console.log('== provision');
provision(filters);

const bin = (name: string) => `node_modules/.bin/${name}`;
const steps: [string, string, string[]][] = [
  ['lint', bin('eslint'), ['.']],
  ['typecheck', bin('tsc'), ['-p', '.']],
  // The dashboard's front end has its own settings (DOM, JSX, bundler resolution).
  ['typecheck web', bin('tsc'), ['-p', 'web']],
];
if (filters.length > 0) console.log('\n== lint and typecheck skipped: only the selected tests run');
for (const [name, cmd, stepArgs] of filters.length > 0 ? [] : steps) {
  console.log(`\n== ${name}`);
  if (run(cmd, stepArgs) !== 0) {
    console.log(`${name} failed`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

console.log('\n== tests');
fs.rmSync(REPORT, { force: true });
const status = run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${REPORT}`, ...args]);
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
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
