// Debian's PgBouncer (1.18, installed by scripts/provision.ts) in front of the test PostgreSQL, on
// a free port, in the mode asked for: what users put in front of the database (and CloudNativePG's
// Pooler runs). 1.18 has no max_prepared_statements: in transaction mode a named prepared
// statement breaks as soon as two clients share a server connection.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../server/db/embedded.ts';

export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The same database URL, through PgBouncer. */
  url: string;
  port: number;
  log: () => string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  mode: 'session' | 'transaction';
  /** Server connections per database/user pair. */
  poolSize: number;
  maxClientConn?: number;
}

/** Starts PgBouncer for the one database `databaseUrl` names, with its user and password. */
export async function startPgBouncer(databaseUrl: string, opts: PgBouncerOptions): Promise<PgBouncer> {
  const target = new URL(databaseUrl);
  const dbname = target.pathname.slice(1);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-pgbouncer-'));
  // PgBouncer refuses to run as root: as root it drops to `postgres` (-u), which must read the files.
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const ini = [
    '[databases]',
    `${dbname} = host=${target.hostname} port=${target.port} dbname=${dbname} user=${user} password=${password}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir =`,
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'users.txt')}`,
    `pool_mode = ${opts.mode}`,
    `default_pool_size = ${opts.poolSize}`,
    'min_pool_size = 0',
    `max_client_conn = ${opts.maxClientConn ?? 1000}`,
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  fs.writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  // Not daemonized and without a logfile, PgBouncer logs to stderr.
  const log = () => output;
  await waitForPort(port, child, log);
  const url = new URL(databaseUrl);
  url.port = String(port);
  return {
    url: url.toString(),
    port,
    log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGINT');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the port accepts a connection; fails if the process exits first. */
async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}):\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer not listening on ${port} in 10 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
