// Floating promises fail lint (STYLE.md): the project's .oxlintrc.json, run as `npm run lint` runs
// it (`oxlint --type-aware`), refuses a promise left unhandled and accepts the handled forms beside
// it. The probe stands in a folder of its own with a tsconfig of its own, so it never meets the
// tree's lint running beside the tests.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-oxlint-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('oxlint --type-aware with the project config refuses an unhandled promise, and only it', async () => {
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, target: 'es2024', module: 'nodenext' }, include: ['*.ts'] }));
  fs.writeFileSync(
    path.join(dir, 'probe.ts'),
    [
      'export async function later(): Promise<number> { return 1; }',
      'export async function caller(): Promise<void> {',
      '  later();', // line 3: refused
      '  void later();',
      '  await later();',
      '  later().catch(() => {});',
      '}',
      '',
    ].join('\n'),
  );
  const run = promisify(execFile)(path.join(ROOT, 'node_modules/.bin/oxlint'), ['--type-aware', '-c', path.join(ROOT, '.oxlintrc.json'), '--format', 'json', 'probe.ts'], { cwd: dir });
  const failed = await run.then(
    () => undefined,
    (err: { code?: number; stdout?: string }) => err,
  );
  expect(failed?.code, 'lint must fail').toBe(1);
  const report = JSON.parse(failed!.stdout!) as { diagnostics: { code: string; labels: { span: { line: number } }[] }[] };
  expect(report.diagnostics.map((d) => [d.code, d.labels[0]?.span.line])).toEqual([['typescript(no-floating-promises)', 3]]);
});
