// `npm test`: lint, typecheck, then the whole vitest suite. Prints the closing line CI reads,
// "N passed, N failed", from vitest's JSON report, and exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const REPORT = '.vitest-report.json';

function run(cmd: string, args: string[]): number {
  const res = spawnSync(cmd, args, { stdio: 'inherit' });
  return res.status ?? 1;
}

const bin = (name: string) => `node_modules/.bin/${name}`;
const steps: [string, string, string[]][] = [
  ['lint', bin('eslint'), ['.']],
  ['typecheck', bin('tsc'), ['-p', '.']],
  // The dashboard's front end has its own settings (DOM, JSX, bundler resolution).
  ['typecheck web', bin('tsc'), ['-p', 'web']],
];
for (const [name, cmd, args] of steps) {
  console.log(`\n== ${name}`);
  if (run(cmd, args) !== 0) {
    console.log(`${name} failed`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

console.log('\n== tests');
fs.rmSync(REPORT, { force: true });
const status = run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${REPORT}`, ...process.argv.slice(2)]);
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const report = JSON.parse(fs.readFileSync(REPORT, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests?: number;
    numFailedTestSuites?: number;
  };
  passed = report.numPassedTests;
  // A file that fails to load has no failed test but a failed suite: count it as a failure.
  failed = report.numFailedTests + (report.numFailedTests === 0 ? (report.numFailedTestSuites ?? 0) : 0);
  skipped = report.numPendingTests + (report.numTodoTests ?? 0);
} catch {
  failed = Math.max(1, failed);
}
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
