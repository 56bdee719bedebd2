// The operator's own connection to the gateway's PostgreSQL database: a small pg pool for the
// plans table (operator/db/plans.ts). The contract with the gateway is the SQL schema its
// migrations create (`cryptomcp migrate`), not its code: nothing here imports server/.
import pg from 'pg';

// count(*) as a JS number: every count here fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface OperatorDatabase {
  /** Where the pool points, for messages; no password. */
  description: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  close(): Promise<void>;
}

export function createOperatorDatabase(url: string): OperatorDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    application_name: 'cryptomcp-operator',
    // A hung statement must not hold a worker (and its key) forever. A SET on each new connection,
    // awaited before the pool hands it out, not a startup parameter: PgBouncer refuses those
    // (docs/kubernetes.md, "PgBouncer").
    onConnect: async (client) => {
      await client.query('SET statement_timeout = 10000');
    },
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => {});
  return {
    description: redact(url),
    query: (text, values) => pool.query(text, values),
    close: () => pool.end(),
  };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the database';
  }
}
