// The embedded PostgreSQL runs outside its starter's process group (so a terminal's Ctrl-C does
// not stop it before `serve` has drained), and so must not outlive its starter: a signal that
// nothing else in the process handles (Ctrl-C during a CLI command) stops it cleanly.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function postmasterAlive(dataDir: string): boolean {
  try {
    process.kill(Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 0);
    return true;
  } catch {
    return false;
  }
}

describe('startEmbedded', () => {
  it('a process that starts the server and gets SIGINT with no handler of its own stops the server cleanly and dies of the signal', { timeout: 60_000 }, async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-embedded-'));
    dirs.push(root);
    fs.chmodSync(root, 0o755);
    const dataDir = path.join(root, 'pg');
    const script = `import { startEmbedded } from './server/db/embedded.ts';
const db = await startEmbedded(${JSON.stringify(dataDir)});
console.log('ready ' + db.port);
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const lines = readline.createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => line.startsWith('ready ') && resolve());
      child.once('exit', (code) => reject(new Error(`exited (${code}) before the server was ready`)));
    });
    expect(postmasterAlive(dataDir)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe('SIGINT');
    // A clean shutdown removes postmaster.pid; an orphaned server would still hold it.
    await expect.poll(() => fs.existsSync(path.join(dataDir, 'postmaster.pid')), { timeout: 10_000, interval: 50 }).toBe(false);
  });
});
