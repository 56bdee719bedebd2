// DESIGN §2: operator/ and server/ never import each other. The lint rule that keeps it so must
// pass on the tree as it is and fail on a deliberate violation (a rule that never fires proves
// nothing).
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/crd-schema.ts';

// Only the rule under test runs.
const eslint = new ESLint({
  cwd: ROOT,
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
});

/** The no-restricted-imports messages for `text` linted as if it were `file`. */
async function restrictedImports(file: string, text: string): Promise<string[]> {
  const results = await eslint.lintText(text, { filePath: path.join(ROOT, file) });
  return results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${path.relative(ROOT, r.filePath)}: ${m.message}`));
}

describe('operator/ ↔ server/ boundary', () => {
  it('no file under operator/ imports from server/', () => {
    const files = (fs.readdirSync(path.join(ROOT, 'operator'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.filter((f) => /(?:from|import)\s*\(?\s*'[^']*(?:^|\/)server\//m.test(fs.readFileSync(path.join(ROOT, 'operator', f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the lint rule fails an operator file that imports server/, value or type import alike', async () => {
    const violation = "import { migrate } from '../server/db/migrate.ts';\nimport type { Database } from '../server/db/pool.ts';\nexport const uses: [typeof migrate, Database | undefined] = [migrate, undefined];\n";
    const found = await restrictedImports('operator/config.ts', violation);
    expect(found).toHaveLength(2);
    for (const message of found) expect(message).toMatch(/operator\/ must not import server\//);
  });

  it('and a server file that imports operator/', async () => {
    const violation = "import { Controller } from '../operator/controller.ts';\nexport const uses = Controller;\n";
    expect(await restrictedImports('server/config.ts', violation)).toEqual([expect.stringMatching(/server\/ must not import operator\//)]);
  });
});
