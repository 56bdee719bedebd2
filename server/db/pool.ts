// The one way the server talks to PostgreSQL: a pg.Pool plus `query`, which turns "cannot reach
// the database" into DatabaseUnavailableError (503 to clients). The pool reconnects by itself
// when the server comes back, so an outage needs no restart.
import pg from 'pg';
import { DatabaseUnavailableError, isConnectionError } from '../errors.ts';
import { startEmbedded } from './embedded.ts';
import path from 'node:path';

// bigint counts (e.g. count(*)) as JS numbers: every count here fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface Database {
  pool: pg.Pool;
  /** Where the pool points (embedded server or DATABASE_URL), for messages; no password. */
  description: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  /** A hot-path query as a named prepared statement: parsed and planned once per connection. */
  prepared<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  /** Runs fn in a transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  max?: number;
  onClose?: () => Promise<void>;
  description?: string;
}

export function createDatabase({ url, max = 20, onClose, description }: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    // A hung query must not hold a request (and its reservation) forever.
    statement_timeout: 10_000,
    application_name: 'cryptomcp',
  });
  // An idle client losing its connection (server restart) must not crash the process, nor one
  // held open between queries (the job runner's LISTEN connection: it reconnects by itself).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));

  const wrap = (err: unknown): never => {
    throw isConnectionError(err) ? new DatabaseUnavailableError(err) : err;
  };

  return {
    pool,
    description: description ?? redact(url),
    query: (text, values) => pool.query(text, values).catch(wrap),
    prepared: (name, text, values) => pool.query({ name, text, values }).catch(wrap),
    async transaction(fn) {
      const client = await pool.connect().catch(wrap);
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        return wrap(err);
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
      await onClose?.();
    },
  };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres';
  }
}

/**
 * DATABASE_URL if given; otherwise the embedded server under `<dataDir>/postgres`, started now
 * (or joined, if another cryptomcp process already runs it) and stopped on close.
 */
export async function openDatabase(opts: {
  databaseUrl: string | undefined;
  dataDir: string;
  max?: number;
  log?: (line: string) => void;
}): Promise<Database> {
  if (opts.databaseUrl) return createDatabase({ url: opts.databaseUrl, max: opts.max });
  const dir = path.join(opts.dataDir, 'postgres');
  const embedded = await startEmbedded(dir, opts.log);
  return createDatabase({
    url: embedded.url,
    max: opts.max,
    onClose: embedded.stop,
    description: `embedded PostgreSQL in ${dir} (127.0.0.1:${embedded.port})`,
  });
}
