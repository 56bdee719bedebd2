// `npm start` as a new user runs it: on an empty data folder it initialises the embedded
// PostgreSQL, serves the nine servers, and prints a demo key (once), the nine URLs and two
// ready-to-paste client configurations that work with a real MCP client. With PORT=0 and no
// METRICS_PORT a second instance starts beside the first. Ctrl-C (SIGINT to the whole process
// group, as a terminal sends it) drains a call in flight, settles it and writes its request-log
// row before PostgreSQL stops, within 5 s. A later start keeps the data, prints no new key but
// says how to get one, and SIGTERM to the node process alone stops PostgreSQL too.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { urlFor } from '../server/db/embedded.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import { mcpClient, post, toolCall } from './helpers/service.ts';

const REPO = path.resolve(import.meta.dirname, '..');
const KEY_RE = /cmcp_[0-9A-Za-z]{38}/g;
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Started {
  stdout = '';
  stderr = '';
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null | undefined;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;

  constructor(dataDir: string) {
    // Bench tools for the slow call in flight at Ctrl-C. No METRICS_PORT: with PORT=0 it must
    // follow (any free port), or the second instance beside the first could not start.
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', CRYPTOMCP_BENCH_TOOLS: '1' };
    delete env.METRICS_PORT;
    delete env.DATABASE_URL; // the embedded database is what npm start is about
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name]; // and tracing off
    this.child = spawn('npm', ['start'], { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (c: string) => (this.stdout += c));
    this.child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.stderr += c));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      });
    });
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Waits until `test(stdout)` holds; fails with both streams if the process exits or time runs out. */
  async waitFor(what: string, test: (stdout: string) => boolean, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test(this.stdout)) {
      if (!this.running) throw new Error(`npm start exited (${this.exitCode ?? this.exitSignal}) before ${what}\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      await sleep(50);
    }
  }

  /** SIGTERM to the whole process group (npm, the shell, node, PostgreSQL), as a terminal or supervisor does. */
  signal(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.child.pid!, sig);
    } catch {
      // group already gone
    }
  }

  /** Last resort for afterAll: stop whatever is left of the group. */
  async kill(): Promise<void> {
    if (groupMembers(this.child.pid!).length === 0) return;
    this.signal('SIGTERM');
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (groupMembers(this.child.pid!).length > 0 && Date.now() < deadline) await sleep(100);
    if (groupMembers(this.child.pid!).length > 0) this.signal('SIGKILL');
  }
}

/** Processes (pid, args) still alive in process group `pgid`. */
function groupMembers(pgid: number): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === pgid && !f[2]?.startsWith('Z'))
    .map((f) => `${f[0]} ${f.slice(3).join(' ')}`);
}

/** Processes whose command line names the data folder (the embedded PostgreSQL: `postgres -D <dir>/postgres`). */
function processesUsing(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(dir))
    .filter((l) => !l.trim().split(/\s+/)[1]?.startsWith('Z'));
}

/** Parses the JSON object printed after `heading` (balanced braces, strings respected). */
function jsonAfter(text: string, heading: string): unknown {
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`"${heading}" not printed`);
  const start = text.indexOf('{', at + heading.length);
  if (start < 0) throw new Error(`no JSON after "${heading}"`);
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error(`JSON after "${heading}" is incomplete`);
}

function parses(text: string, heading: string): boolean {
  try {
    jsonAfter(text, heading);
    return true;
  } catch {
    return false;
  }
}

interface Entry {
  url: string;
  transport: string;
  headers: Record<string, string>;
}

const DESKTOP = 'Desktop assistants';
const EDITOR = 'Code editors';
const BANNER_RE = /cryptomcp is serving 9 MCP servers on (http:\/\/[^\s]+)/;

async function usage(base: string, server: string, key: string) {
  const client = await mcpClient(base, server, key);
  try {
    const result = await client.callTool({ name: 'get_usage', arguments: {} });
    return result.structuredContent as { success: boolean; data: { plan: string; balance: number; status: string } };
  } finally {
    await client.close();
  }
}

/**
 * Sends SIGTERM — to the whole process group (what a terminal or `kill -- -pgid` does), or to the
 * cryptomcp node process alone (so its own shutdown, not the group signal, must stop PostgreSQL) —
 * and checks that every process of the group exits and PostgreSQL let go of the folder cleanly.
 */
async function stopAndCheck(run: Started, dir: string, target: 'group' | 'node'): Promise<void> {
  if (target === 'group') {
    run.signal('SIGTERM');
  } else {
    process.kill(nodeOf(run), 'SIGTERM');
  }
  const exited = await Promise.race([run.exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
  expect(exited, `npm start did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\nstderr:\n${run.stderr}`).toBe(true);
  await expectAllStopped(run, dir, 'SIGTERM');
  if (target === 'node') expect(run.exitCode, `stderr:\n${run.stderr}`).toBe(0);
}

/** Every process of the group has exited and PostgreSQL let go of the folder cleanly. */
async function expectAllStopped(run: Started, dir: string, signal: string): Promise<void> {
  let left: string[];
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  do {
    left = [...new Set([...groupMembers(run.child.pid!), ...processesUsing(dir)])];
    if (left.length === 0) break;
    await sleep(100);
  } while (Date.now() < deadline);
  expect(left, `processes left running after ${signal}:\n${left.join('\n')}\nstderr:\n${run.stderr}`).toEqual([]);
  // A clean PostgreSQL shutdown removes its lock file; a killed postmaster leaves it behind.
  expect(fs.existsSync(path.join(dir, 'postgres', 'postmaster.pid')), 'postmaster.pid left behind: PostgreSQL was not shut down cleanly').toBe(false);
  expect(run.stderr).toContain(`${signal}: draining in-flight requests and stopping`);
}

/** The pid of the cryptomcp node process (not npm, not npm's `sh -c`). */
function nodeOf(run: Started): number {
  const node = groupMembers(run.child.pid!).find((p) => /^\d+ \S*node( --\S+)* server\/cli\.ts serve\b/.test(p));
  expect(node, `no cryptomcp node process in the group:\n${groupMembers(run.child.pid!).join('\n')}`).toBeDefined();
  return Number(node!.split(' ')[0]);
}

function metricsPortOf(banner: string): number {
  const port = /metrics: http:\/\/localhost:(\d+)\/metrics/.exec(banner)?.[1];
  expect(port, `no metrics URL in the banner:\n${banner}`).toBeDefined();
  expect(Number(port)).toBeGreaterThan(0);
  return Number(port);
}

/** The embedded PostgreSQL's port, from the banner's database line. */
function databasePortOf(banner: string): number {
  const port = /database: embedded PostgreSQL in \S+ \(127\.0\.0\.1:(\d+)\)/.exec(banner)?.[1];
  expect(port, `no database line in the banner:\n${banner}`).toBeDefined();
  return Number(port);
}

describe('npm start on an empty data folder', { timeout: 2 * START_TIMEOUT_MS + 2 * STOP_TIMEOUT_MS }, () => {
  let dir: string;
  const runs: Started[] = [];
  let demoKey: string | undefined;
  let first: { run: Started; base: string; metricsPort: number } | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-start-'));
    // mkdtemp makes a 0700 folder; the embedded PostgreSQL runs as `postgres` and must enter it.
    fs.chmodSync(dir, 0o755);
  });
  afterAll(async () => {
    for (const run of runs) await run.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the banner with the nine URLs, a metrics port of its own, a demo key shown once, and both client configurations; the key works (free plan, 150 credits)', async () => {
    const run = new Started(dir);
    runs.push(run);
    await run.waitFor('banner with both client configurations', (out) => BANNER_RE.test(out) && parses(out, EDITOR));
    const out = run.stdout;
    const base = BANNER_RE.exec(out)![1]!;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(base).not.toMatch(/:0$/);
    expect(out).toMatch(new RegExp(`every server, one URL\\s+${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/mcp\\n`));
    for (const s of SERVER_NAMES) expect(out).toContain(`${base}/mcp/${s}`);
    // The dashboard's address, and it answers the web app there.
    expect(out).toContain(`dashboard: ${base}/app/`);
    const dashboard = await fetch(`${base}/app/`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.headers.get('content-type')).toMatch(/^text\/html/);
    // No OTEL_* set: tracing is off, and the banner says so.
    expect(out).toMatch(/^\s*tracing:\s+off /m);

    // One key, printed on a line of its own, and every other mention (curl, configs) is that same key.
    const keyLine = /^\s*(cmcp_[0-9A-Za-z]{38})\s*$/m.exec(out);
    expect(keyLine, 'no line carrying just the demo key').not.toBeNull();
    const key = keyLine![1]!;
    expect(new Set(out.match(KEY_RE))).toEqual(new Set([key]));
    expect(out).toMatch(/free plan/);
    demoKey = key;

    const desktop = jsonAfter(out, DESKTOP) as { mcpServers: Record<string, Entry> };
    const editor = jsonAfter(out, EDITOR) as { mcp: { servers: Record<string, Entry> } };
    for (const entries of [desktop.mcpServers, editor.mcp.servers]) {
      const list = Object.values(entries);
      expect(list).toHaveLength(9);
      expect(list.map((e) => e.url).sort()).toEqual(SERVER_NAMES.map((s) => `${base}/mcp/${s}`).sort());
      for (const [label, e] of Object.entries(entries)) {
        expect(label.length).toBeGreaterThan(0);
        expect(e).toEqual({ url: e.url, transport: 'http', headers: { 'x-api-key': key } });
      }
    }
    expect(editor.mcp.servers).toEqual(desktop.mcpServers);

    // Use a pasted entry exactly as a client would: its url and its x-api-key header.
    const entry = Object.values(desktop.mcpServers).find((e) => e.url.endsWith('/mcp/market-intelligence'))!;
    const url = new URL(entry.url);
    const env = await usage(url.origin, url.pathname.split('/').pop()!, entry.headers['x-api-key']!);
    expect(env.success).toBe(true);
    expect(env.data).toMatchObject({ plan: 'free', balance: 150, status: 'active' });

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(processesUsing(dir).length, 'the embedded PostgreSQL should run from the data folder').toBeGreaterThan(0);
    // METRICS_PORT unset with PORT=0: any free port, printed, and serving.
    const metricsPort = metricsPortOf(out);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    first = { run, base, metricsPort };

  });

  it('a second `PORT=0 npm start` beside the first starts on ports of its own; its banner names the demo account and how to get a key, and that command works', async () => {
    expect(first, 'the first start did not come up').toBeDefined();
    const run = new Started(dir);
    runs.push(run);
    await run.waitFor('the restart banner', (out) => BANNER_RE.test(out) && /keys create --account \S+ --name demo\s*$/m.test(out));
    const out = run.stdout;
    const base = BANNER_RE.exec(out)![1]!;
    expect(base).not.toBe(first!.base);
    const metricsPort = metricsPortOf(out);
    expect(metricsPort).not.toBe(first!.metricsPort);
    for (const b of [base, first!.base]) expect((await fetch(`${b}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);

    // No key again, but what to do instead: the account, the dashboard, and a command to paste.
    expect(out).not.toMatch(/cmcp_/);
    expect(out).not.toContain(DESKTOP);
    const account = /The demo account (\S+) \(free plan, 150 credits left\)/.exec(out);
    expect(account, out).not.toBeNull();
    expect(out).toContain(`sign in to the dashboard (${base}/app/)`);
    const command = /^\s*(npx cryptomcp keys create --account (\S+) --name demo)\s*$/m.exec(out)!;
    expect(command[2]).toBe(account![1]);
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
    delete env.DATABASE_URL;
    const created = execFileSync('sh', ['-c', command[1]!], { cwd: REPO, env, encoding: 'utf8' });
    const key = /^(cmcp_[0-9A-Za-z]{38})$/m.exec(created)?.[1];
    expect(key, created).toBeDefined();
    expect((await usage(base, 'market-intelligence', key!)).data).toMatchObject({ plan: 'free', balance: 150 });

    // This one joined the first's PostgreSQL: stopping it leaves the first serving.
    process.kill(nodeOf(run), 'SIGTERM');
    await run.exited;
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await fetch(`${first!.base}/readyz`)).status).toBe(200);
  });

  it('Ctrl-C (SIGINT to the process group) with a slow call in flight: the call is answered, then PostgreSQL stops cleanly, all within 5 s', async () => {
    expect(first && demoKey, 'the first start did not come up').toBeTruthy();
    const { run, base } = first!;
    const db = new pg.Client({ connectionString: urlFor(databasePortOf(run.stdout)) });
    await db.connect();
    const inFlight = post(`${base}/mcp/market-intelligence`, toolCall('bench_sleep', { ms: 1500 }), { 'x-api-key': demoKey! });
    try {
      // In flight for sure once its reservation is written (the tool runs after it).
      const reserves = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE kind = 'reserve' AND tool = 'bench_sleep'`)).rows[0]!.n;
      await expect.poll(reserves, { timeout: 15_000, interval: 20 }).toBe(1);
    } finally {
      await db.end();
    }
    const signalled = Date.now();
    run.signal('SIGINT');
    const res = await inFlight;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('x-credits-used')).toBe('1');
    const exited = await Promise.race([run.exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
    const took = Date.now() - signalled;
    expect(exited, `npm start did not exit within ${STOP_TIMEOUT_MS} ms of SIGINT\nstderr:\n${run.stderr}`).toBe(true);
    expect(took, `stopping took ${took} ms\nstderr:\n${run.stderr}`).toBeLessThan(5000);
    expect(run.stderr).toContain('SIGINT: draining in-flight requests and stopping');
    await expectAllStopped(run, dir, 'SIGINT');
  });

  it('a start after the Ctrl-C prints no new key, keeps the data, and shows the call in flight charged exactly once and in the request log; SIGTERM to the node process alone stops PostgreSQL too', async () => {
    expect(demoKey, 'the first start did not produce a key').toBeDefined();
    const run = new Started(dir);
    runs.push(run);
    await run.waitFor('the restart banner', (out) => BANNER_RE.test(out) && /keys create --account \S+ --name demo\s*$/m.test(out));
    const out = run.stdout;
    const base = BANNER_RE.exec(out)![1]!;
    for (const s of SERVER_NAMES) expect(out).toContain(`${base}/mcp/${s}`);
    expect(out).not.toMatch(/cmcp_/);
    expect(out).not.toContain(DESKTOP);
    expect(out).not.toContain(EDITOR);
    // The demo account has paid for the one call: 150 - 1.
    expect(out).toMatch(/The demo account \S+ \(free plan, 149 credits left\)/);

    const env = await usage(base, 'kol-analytics', demoKey!);
    expect(env.data).toMatchObject({ plan: 'free', balance: 149 });
    const db = new pg.Client({ connectionString: urlFor(databasePortOf(out)) });
    await db.connect();
    try {
      const ledger = await db.query(`SELECT kind, delta, resolution FROM credit_ledger WHERE tool = 'bench_sleep' ORDER BY id`);
      expect(ledger.rows).toEqual([{ kind: 'reserve', delta: -1, resolution: 'charged' }]);
      const log = await db.query(`SELECT tool, status, credits FROM request_log WHERE tool = 'bench_sleep'`);
      expect(log.rows).toEqual([{ tool: 'bench_sleep', status: 200, credits: 1 }]);
    } finally {
      await db.end();
    }

    await stopAndCheck(run, dir, 'node');
  });
});
