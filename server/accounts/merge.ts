// One account, several wallets (issue 24): merging the account a wallet already has into another
// account, and unlinking a wallet. Both run in one transaction holding the accounts' row locks, the
// same locks the metering statement takes (in id order, so the two cannot deadlock), so a call
// metered at the same moment sees either the accounts before the merge or after it, never between.
import type { PoolClient } from 'pg';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { FREE_PLAN } from './accounts.ts';

export type MergeRefusal = 'same_account' | 'wallet_moved' | 'suspended' | 'calls_in_flight' | 'key_limit' | 'payment_in_flight' | 'paid_plan';

export interface MergeResult {
  id: string;
  source_account_id: string;
  target_account_id: string;
  /** Credits moved from the source's balance to the target's. */
  credits: number;
  /** The source's free allowance left unspent: not moved (each account has the free allowance once). */
  free_credits_not_moved: number;
  keys: number;
  wallets: number;
  /** The target's balance after the merge. */
  balance: number;
}

const refuse = (reason: MergeRefusal, message: string, details: Record<string, unknown> = {}): never => {
  throw new ApiError('MERGE_REFUSED', message, { reason, ...details });
};

/**
 * Merges `source` into `target`: the source's wallets, keys (revoked ones too, so their history
 * stays with them), watches, request log and its daily counts, orders and payments move; its paid
 * credits move by two ledger rows ('adjust', request ids merge:<id>:out and merge:<id>:in) — on
 * the free plan only its top-up credits, since what is left of its free allowance would be a
 * second one for the target (it is written off on the source, merge:<id>:free); its sessions end; it is left suspended with
 * balance 0 and no monthly period, so it can neither be signed into nor renewed. `wallet` is the
 * source's wallet whose holder asked for the merge: if it has moved since, nothing happens.
 */
export async function accountMerge(
  db: Database,
  input: { id: string; source: string; target: string; wallet: { family: string; address: string } },
): Promise<MergeResult> {
  if (input.source === input.target) refuse('same_account', 'This wallet already belongs to your account.');
  return db.transaction(async (client) => {
    const lock = () =>
      client.query<{ id: string; balance: number; status: string; max_keys: number; plan: string; paid_until: Date | null; scheduled: boolean }>(
        `SELECT a.id, a.balance, a.status, a.plan, a.paid_until, p.max_keys,
                EXISTS (SELECT 1 FROM plan_schedule s WHERE s.account_id = a.id) AS scheduled
           FROM accounts a JOIN plans p ON p.name = a.plan
          WHERE a.id = ANY ($1::uuid[]) ORDER BY a.id FOR UPDATE OF a`,
        [[input.source, input.target]],
      );
    await lock();
    // Renewals and scheduled plan starts that are due happen first (a lapse not yet applied would
    // hide plan time bought to follow it), then the accounts are read as they are.
    await client.query('SELECT account_renew_if_due(id) FROM unnest($1::uuid[]) AS id', [[input.source, input.target]]);
    const locked = await lock();
    const source = locked.rows.find((r) => r.id === input.source);
    const target = locked.rows.find((r) => r.id === input.target);
    if (!source || !target) throw new ApiError('NOT_FOUND', 'One of the two accounts no longer exists.', {});
    const owner = await client.query<{ account_id: string }>('SELECT account_id FROM wallets WHERE family = $1 AND address = $2', [
      input.wallet.family,
      input.wallet.address,
    ]);
    if (owner.rows[0]?.account_id !== source.id) {
      refuse('wallet_moved', 'That wallet is no longer on the account you asked to merge. Sign with it again to see where it is now.');
    }
    if (source.status !== 'active' || target.status !== 'active') {
      refuse('suspended', 'A suspended account cannot be merged. Contact the operator of this service.');
    }
    // A reservation still open on the source would be refunded to it after the merge: wait for it.
    const open = await client.query(`SELECT 1 FROM credit_ledger WHERE account_id = $1 AND kind = 'reserve' AND resolved_at IS NULL LIMIT 1`, [
      source.id,
    ]);
    if (open.rowCount) refuse('calls_in_flight', 'A call made with a key of that account is still running. Try again in a few seconds.');
    // A payment handed in but not confirmed yet would be credited to an account that no longer
    // signs in. Submitting takes a share lock on the account, so none starts while this holds it.
    // (A submitted order is verified until as long again as its lifetime after it expired.)
    const paying = await client.query<{ id: string }>(
      `SELECT id FROM payment_orders WHERE account_id = $1 AND status = 'submitted' AND expires_at + (expires_at - created_at) > now() LIMIT 1`,
      [source.id],
    );
    if (paying.rowCount) {
      refuse('payment_in_flight', 'That account has a payment waiting for confirmation. Merge once it is credited (usually within minutes).', {
        order: paying.rows[0]!.id,
      });
    }
    // Paid plan time is the account's own; it cannot run on another account's plan, so it is not thrown away.
    if ((source.paid_until && source.paid_until.getTime() > Date.now()) || source.scheduled) {
      refuse('paid_plan', `That account has paid plan time (${source.plan}) until ${source.paid_until?.toISOString() ?? 'later'}. Merge your account into it instead, or merge after that date.`, {
        plan: source.plan,
        paid_until: source.paid_until?.toISOString() ?? null,
      });
    }
    const active = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM api_keys
        WHERE account_id = ANY ($1::uuid[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [[source.id, target.id]],
    );
    const activeKeys = active.rows[0]!.n;
    if (activeKeys > target.max_keys) {
      refuse('key_limit', `Together the two accounts hold ${activeKeys} active keys and your plan allows ${target.max_keys}. Revoke some first.`, {
        active_keys: activeKeys,
        max_keys: target.max_keys,
      });
    }
    return moveAll(client, input.id, source, target);
  });
}

async function moveAll(
  client: PoolClient,
  id: string,
  source: { id: string; balance: number; plan: string },
  target: { id: string },
): Promise<MergeResult> {
  const wallets = await client.query('UPDATE wallets SET account_id = $2 WHERE account_id = $1', [source.id, target.id]);
  const keys = await client.query('UPDATE api_keys SET account_id = $2 WHERE account_id = $1', [source.id, target.id]);
  // A watch the target already has stays as the target's; the rest move.
  await client.query(
    `UPDATE watches w SET account_id = $2 WHERE w.account_id = $1
        AND NOT EXISTS (SELECT 1 FROM watches t WHERE t.account_id = $2 AND t.chain = w.chain AND t.address = w.address)`,
    [source.id, target.id],
  );
  await client.query('DELETE FROM watches WHERE account_id = $1', [source.id]);
  await client.query('UPDATE request_log SET account_id = $2 WHERE account_id = $1', [source.id, target.id]);
  // The log's daily counts follow it (their groups never collide: key ids are the accounts' own, and a
  // key-less group of both is added up).
  await client.query(
    `INSERT INTO request_log_daily AS d (account_id, day, key_id, server, method, tool, status, error_code, requests, credits)
     SELECT $2, day, key_id, server, method, tool, status, error_code, requests, credits FROM request_log_daily WHERE account_id = $1
     ON CONFLICT ON CONSTRAINT request_log_daily_group
     DO UPDATE SET requests = d.requests + EXCLUDED.requests, credits = d.credits + EXCLUDED.credits`,
    [source.id, target.id],
  );
  await client.query('DELETE FROM request_log_daily WHERE account_id = $1', [source.id]);
  await client.query('UPDATE dashboard_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE account_id = $1', [source.id]);
  // Orders (a pending one can still be paid, now by the target) and purchases with their receipts.
  await client.query('UPDATE payment_orders SET account_id = $2 WHERE account_id = $1', [source.id, target.id]);
  await client.query('UPDATE payments SET account_id = $2 WHERE account_id = $1', [source.id, target.id]);

  // Bought top-up credits stay top-up credits on the target (kept at its renewals); the ledger
  // rows say how many of the moved credits they were (topup_delta), as a purchase's row does.
  const emptied = await client.query<{ topup: number }>(
    `UPDATE accounts a SET balance = 0, topup = 0, status = 'suspended', period_end = NULL, updated_at = now()
       FROM accounts old WHERE a.id = $1 AND old.id = a.id RETURNING old.topup AS topup`,
    [source.id],
  );
  const topup = emptied.rows[0]!.topup;
  // On the free plan, what is not top-up is what is left of the free allowance: it stays behind.
  const credits = source.plan === FREE_PLAN ? topup : source.balance;
  const notMoved = source.balance - credits;
  if (notMoved > 0) {
    await client.query(
      `INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note) VALUES ($1, $2, 'adjust', $3, $4, $5)`,
      [source.id, `merge:${id}:free`, -notMoved, credits, `free allowance not moved by the merge into account ${target.id} (one per account)`],
    );
  }
  await client.query(
    `INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, topup_delta) VALUES ($1, $2, 'adjust', $3, 0, $4, $5)`,
    [source.id, `merge:${id}:out`, -credits, `merged into account ${target.id}`, topup ? -topup : null],
  );
  const after = await client.query<{ balance: number }>('UPDATE accounts SET balance = balance + $2, topup = topup + $3, updated_at = now() WHERE id = $1 RETURNING balance', [
    target.id,
    credits,
    topup,
  ]);
  const balance = after.rows[0]!.balance;
  await client.query(
    `INSERT INTO credit_ledger (account_id, request_id, kind, delta, balance_after, note, topup_delta) VALUES ($1, $2, 'adjust', $3, $4, $5, $6)`,
    [target.id, `merge:${id}:in`, credits, balance, `merged from account ${source.id}`, topup || null],
  );
  // The wallets that came over share the target's free allowance from now on.
  await client.query('SELECT wallets_share_free_grant($1)', [target.id]);
  // merged_at is when the merge took effect (it holds both accounts' locks now), not when its
  // transaction began: a call charged to the source while the merge waited for its lock came before it.
  await client.query(
    'INSERT INTO account_merges (id, source_account_id, target_account_id, credits, keys, wallets, merged_at) VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp())',
    [id, source.id, target.id, credits, keys.rowCount ?? 0, wallets.rowCount ?? 0],
  );
  return {
    id,
    source_account_id: source.id,
    target_account_id: target.id,
    credits,
    free_credits_not_moved: notMoved,
    keys: keys.rowCount ?? 0,
    wallets: wallets.rowCount ?? 0,
    balance,
  };
}

export type UnlinkRefusal = 'last_wallet' | 'current_wallet' | 'not_linked';

/**
 * Removes a wallet from an account, never its last one (the account row lock serialises two
 * unlinks, so two wallets cannot both be removed at once), and ends the sessions it opened.
 * `current` is the wallet of the session asking: it cannot remove itself.
 */
export async function accountUnlinkWallet(
  db: Database,
  accountId: string,
  wallet: { family: string; address: string },
  current: { family: string; address: string },
): Promise<void> {
  await db.transaction(async (client) => {
    await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    const rows = await client.query<{ family: string; address: string }>('SELECT family, address FROM wallets WHERE account_id = $1', [accountId]);
    const same = (w: { family: string; address: string }) => w.family === wallet.family && w.address === wallet.address;
    if (!rows.rows.some(same)) throw new ApiError('UNLINK_REFUSED', 'That wallet is not linked to your account.', { reason: 'not_linked' });
    if (rows.rows.length <= 1) {
      throw new ApiError('UNLINK_REFUSED', 'This is the only wallet of your account: link another one before removing it.', { reason: 'last_wallet' });
    }
    if (same(current)) {
      throw new ApiError('UNLINK_REFUSED', 'You are signed in with this wallet. Sign in with another wallet of this account to remove it.', {
        reason: 'current_wallet',
      });
    }
    await client.query('DELETE FROM wallets WHERE account_id = $1 AND family = $2 AND address = $3', [accountId, wallet.family, wallet.address]);
    await client.query(
      `UPDATE dashboard_sessions SET revoked_at = coalesce(revoked_at, now())
        WHERE account_id = $1 AND wallet_family = $2 AND wallet_address = $3`,
      [accountId, wallet.family, wallet.address],
    );
  });
}
