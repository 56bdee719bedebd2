// What every gateway benchmark needs in its database: a plan whose credits and rate limit the
// load never reaches (so the runs measure the service, not refusals), and accounts on it.
import { accountCreate } from '../../server/accounts/accounts.ts';
import { planUpsert } from '../../server/accounts/plans.ts';
import type { Database } from '../../server/db/pool.ts';
import { keyCreate } from '../../server/keys/store.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';

export async function createBenchPlan(db: Database, name: string): Promise<void> {
  await planUpsert(db, {
    name,
    display_name: 'Bench',
    credits: 1_000_000_000,
    renewal: 'one-time',
    requests_per_minute: 100_000_000,
    burst: 10_000_000,
    servers: [...SERVER_NAMES],
    max_keys: 5,
  });
}

/**
 * `count` accounts on `plan`, with an API key each when `keys` is set. `walletTag` (one hex
 * digit) keeps the wallets of different benchmarks apart on a shared DATABASE_URL.
 */
export async function createBenchAccounts(
  db: Database,
  opts: { count: number; plan: string; walletTag: string; keys: boolean },
): Promise<{ accountIds: string[]; keys: string[] }> {
  const accountIds: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < opts.count; i++) {
    const wallet = `0x${opts.walletTag.repeat(8)}${Date.now().toString(16).padStart(16, '0')}${i.toString(16).padStart(16, '0')}`;
    const account = await accountCreate(db, { wallet, chain: 'ethereum', plan: opts.plan });
    accountIds.push(account.id);
    if (opts.keys) keys.push((await keyCreate(db, account.id, { name: 'bench' })).plaintext);
  }
  return { accountIds, keys };
}
