// The one way the server talks to PostgreSQL: a pg.Pool plus `query`, which turns "cannot reach
// the database" (refused, gone, out of connection slots) into DatabaseUnavailableError (503 to
// clients). The pool reconnects by itself when the server comes back, so an outage needs no
// restart. It works behind PgBouncer in transaction mode: no startup parameter but the ones
// PgBouncer accepts (statement_timeout is a `SET` sent on each new connection, and `SET LOCAL`
// in every transaction), and no named prepared statements (a server connection holding one is
// handed to another client, whose next Parse of the same name fails with "already exists").
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
  /** Runs fn in a transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  max?: number;
  /** statement_timeout of every statement (a hung query must not hold a request forever); 0: none. */
  statementTimeoutMs?: number;
  onClose?: () => Promise<void>;
  description?: string;
}

/** The request path's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS). */
export const STATEMENT_TIMEOUT_MS = 10_000;

export function createDatabase({ url, max = 20, statementTimeoutMs = STATEMENT_TIMEOUT_MS, onClose, description }: DatabaseOptions): Database {
  const timeout = Math.max(0, Math.trunc(statementTimeoutMs));
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    application_name: 'cryptomcp',
    // A hung query must not hold a request (and its reservation) forever. Sent as a statement, not
    // as a startup parameter, which PgBouncer refuses ("unsupported startup parameter"), and
    // awaited before the pool hands the new connection out (pg-pool's onConnect; a query sent
    // while another runs is deprecated in pg 8 and refused in 9). In PgBouncer's transaction mode
    // the session setting reaches only the server connection it ran on: transactions set it
    // again (SET LOCAL below); for single statements, set it on the role too (docs/kubernetes.md,
    // "PgBouncer").
    onConnect: async (client) => {
      await client.query(`SET statement_timeout = ${timeout}`);
    },
  });
  // An idle client losing its connection (server restart) must not crash the process, nor one
  // held open between queries (the job runner's LISTEN connection: it reconnects by itself).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));

  const wrap = (err: unknown): never => {
    throw isConnectionError(err) ? new DatabaseUnavailableError(err) : err;
  };
  // Whatever stops the pool from handing out a connection (refused, out of slots, a password
  // PostgreSQL or the pooler refuses, a database that is not there) is the database being
  // unavailable to this pod: 503, never a 500.
  const connect = () => pool.connect().catch((err: unknown): never => {
    throw new DatabaseUnavailableError(err);
  });
  /**
   * Runs fn on a checked-out connection and gives it back, dropped if it broke. A connection
   * that dies while checked out (the server crashed) also emits 'error': heard here (as
   * pool.query does), or it would be an uncaught exception.
   */
  const withClient = async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await connect();
    let broken: Error | undefined;
    const onError = (err: Error) => (broken = err);
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (err) {
      if (isConnectionError(err)) broken ??= err as Error;
      throw err;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  };

  return {
    pool,
    description: description ?? redact(url),
    query: (text, values) => withClient((client) => client.query(text, values)).catch(wrap),
    transaction: (fn) =>
      withClient(async (client) => {
        // One round trip (the simple protocol takes both statements).
        await client.query(`BEGIN; SET LOCAL statement_timeout = ${timeout}`);
        try {
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        } catch (err) {
          if (!isConnectionError(err)) await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      }).catch(wrap),
    async close() {
      await pool.end();
      await onClose?.();
    },
  };
}

/**
 * The Database of a transaction under way (`client` from db.transaction): its statements join
 * that transaction, and its own transaction() is a savepoint inside it (rolled back alone if its
 * fn throws). For running code written against Database, such as the stores, as one part of a
 * larger unit that commits together (the dashboard's action and its audit row).
 */
export function joinTransaction(db: Database, client: pg.PoolClient): Database {
  let savepoints = 0;
  return {
    pool: db.pool,
    description: db.description,
    query: (text, values) => client.query(text, values),
    async transaction(fn) {
      const name = `sp_${++savepoints}`;
      await client.query(`SAVEPOINT ${name}`);
      try {
        const result = await fn(client);
        await client.query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (err) {
        if (!isConnectionError(err)) await client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
        throw err;
      }
    },
    close: () => Promise.reject(new Error('a joined transaction is closed by its owner')),
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
  statementTimeoutMs?: number;
  log?: (line: string) => void;
}): Promise<Database> {
  if (opts.databaseUrl) return createDatabase({ url: opts.databaseUrl, max: opts.max, statementTimeoutMs: opts.statementTimeoutMs });
  const dir = path.join(opts.dataDir, 'postgres');
  const embedded = await startEmbedded(dir, opts.log);
  return createDatabase({
    url: embedded.url,
    max: opts.max,
    statementTimeoutMs: opts.statementTimeoutMs,
    onClose: embedded.stop,
    description: `embedded PostgreSQL in ${dir} (127.0.0.1:${embedded.port})`,
  });
}
