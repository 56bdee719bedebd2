// `npm run test:durations`: writes test/durations.json, each test file's wall time in seconds,
// from the JSON report of the last full `npm test` (.vitest-report.json). The test sequencer
// (test/helpers/sequencer.ts) starts the longest files first; on a fresh clone, with no vitest
// cache, these are the durations it has.
import fs from 'node:fs';
import path from 'node:path';

const REPORT = '.vitest-report.json';
const OUT = 'test/durations.json';
const report = JSON.parse(fs.readFileSync(REPORT, 'utf8')) as { testResults: { name: string; startTime: number; endTime: number }[] };
if (report.testResults.length < 100) throw new Error(`${REPORT} has ${report.testResults.length} files: run the whole suite (npm test) first`);
const durations = Object.fromEntries(
  report.testResults
    .map((f) => [path.relative(process.cwd(), f.name).split(path.sep).join('/'), Math.round((f.endTime - f.startTime) / 100) / 10] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
fs.writeFileSync(OUT, `${JSON.stringify(durations, null, 1)}\n`);
console.log(`${OUT}: ${Object.keys(durations).length} files`);
