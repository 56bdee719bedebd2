// Per-account address watchlists (table `watches`, migration 0004): the PostgreSQL WatchStore
// (types.ts declares what the whale-intelligence tools see). Outcomes a user causes
// (already watched, over the cap, unknown address) are values; exceptions are for faults.
import type { Database } from '../db/pool.ts';
import type { Watch, WatchAddOutcome, WatchMark, WatchStore } from './types.ts';
import { MAX_WATCHES_PER_ACCOUNT } from './types.ts';

const COLUMNS = `id, chain, address, note, created_at, last_checked_at, last_checked_block`;
type Row = Omit<Watch, 'created_at' | 'last_checked_at'> & { created_at: Date; last_checked_at: Date | null };
const toWatch = (r: Row): Watch => ({
  ...r,
  created_at: r.created_at.toISOString(),
  last_checked_at: r.last_checked_at ? r.last_checked_at.toISOString() : null,
});

export class SqlWatchStore implements WatchStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  add(accountId: string, w: { chain: string; address: string; note: string | undefined; block: number }): Promise<WatchAddOutcome> {
    return this.#db.transaction(async (client) => {
      // Locking the account row serialises one account's adds, so two concurrent calls cannot
      // both pass the cap check (other accounts are not held up).
      await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      const existing = await client.query<Row>(
        `UPDATE watches SET note = coalesce($4, note) WHERE account_id = $1 AND chain = $2 AND address = $3 RETURNING ${COLUMNS}`,
        [accountId, w.chain, w.address, w.note ?? null],
      );
      if (existing.rows[0]) return { ok: true, created: false, watch: toWatch(existing.rows[0]) };
      const count = await client.query<{ n: number }>('SELECT count(*) AS n FROM watches WHERE account_id = $1', [accountId]);
      if ((count.rows[0]?.n ?? 0) >= MAX_WATCHES_PER_ACCOUNT) return { ok: false, code: 'LIMIT_REACHED', limit: MAX_WATCHES_PER_ACCOUNT };
      const inserted = await client.query<Row>(
        `INSERT INTO watches (account_id, chain, address, note, last_checked_block) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [accountId, w.chain, w.address, w.note ?? null, w.block],
      );
      return { ok: true, created: true, watch: toWatch(inserted.rows[0]!) };
    });
  }

  async list(accountId: string, chain?: string): Promise<Watch[]> {
    const res = await this.#db.query<Row>(
      `SELECT ${COLUMNS} FROM watches WHERE account_id = $1 AND ($2::text IS NULL OR chain = $2) ORDER BY created_at, id`,
      [accountId, chain ?? null],
    );
    return res.rows.map(toWatch);
  }

  async remove(accountId: string, chain: string, address: string): Promise<boolean> {
    const res = await this.#db.query('DELETE FROM watches WHERE account_id = $1 AND chain = $2 AND address = $3', [accountId, chain, address]);
    return (res.rowCount ?? 0) > 0;
  }

  async advance(accountId: string, marks: WatchMark[]): Promise<number> {
    if (marks.length === 0) return 0;
    const res = await this.#db.query(
      `UPDATE watches w SET last_checked_block = m.to_block, last_checked_at = now()
         FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS m(id, expected, to_block)
        WHERE w.id = m.id AND w.account_id = $1 AND w.last_checked_block IS NOT DISTINCT FROM m.expected`,
      [accountId, marks.map((m) => m.id), marks.map((m) => m.expected), marks.map((m) => m.to)],
    );
    return res.rowCount ?? 0;
  }
}
