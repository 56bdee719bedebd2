// `npx cryptomcp` as a user types it in the checkout, with npm's cache empty (the first run, when
// npx installs the project into its cache and npm checks its engines against the machine's Node):
// the help prints, and npm says nothing about engines. The project runs on the Node 24 it brings,
// so its `engines` names only what npm needs. Installing the checkout runs its "prepare" script,
// which must leave a web/dist built from the same inputs alone (it rebuilt it in place, under any
// service serving it).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { upToDate, webInputsHash } from '../../scripts/build-web.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'cryptomcp-npx-cache-'));
afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

it('npx cryptomcp --help prints the help and no EBADENGINE warning, on a fresh npm cache', async () => {
  const index = path.join(ROOT, 'web/dist/index.html');
  expect(upToDate(webInputsHash()), 'web/dist must be built from the current web/ (npm run build:web)').toBeDefined();
  const builtAt = fs.statSync(index).mtimeMs;
  // The shell's PATH as a user has it: without node_modules/.bin first (which `npm test` adds).
  const userPath = (process.env.PATH ?? '').split(path.delimiter).filter((p) => !p.includes('node_modules')).join(path.delimiter);
  const child = spawn('npx', ['cryptomcp', '--help'], { cwd: ROOT, env: { ...process.env, PATH: userPath, npm_config_cache: cache, npm_config_update_notifier: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, stderr).toBe(0);
  expect(stdout).toMatch(/^Usage: cryptomcp/m);
  expect(stderr).not.toMatch(/EBADENGINE/);
  expect(fs.statSync(index).mtimeMs, 'web/dist was built again').toBe(builtAt);
}, 180_000);
