import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';

export const CHAINS = ['ethereum', 'base', 'polygon', 'bsc', 'solana'] as const;
export type Chain = (typeof CHAINS)[number];

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export interface Wallet {
  chain: Chain;
  address: string;
  created_at: Date;
}

export interface Account {
  id: string;
  plan: string;
  status: 'active' | 'suspended';
  balance: number;
  period_start: Date;
  /** When the next monthly renewal is due; null for one-time plans. */
  period_end: Date | null;
  /** The part of the balance bought in credit packs: kept at renewal, spent last. */
  topup: number;
  /** A plan bought on chain is paid until then (it returns to free after); null: not paid on chain. */
  paid_until: Date | null;
  /**
   * 'granted': opened with the free allowance; 'withheld': opened with 0 credits because its wallet
   * had the free allowance before (once per wallet, for ever); null: opened otherwise.
   */
  free_allowance: 'granted' | 'withheld' | null;
  created_at: Date;
  wallets: Wallet[];
}

/** Normalises a wallet address for its chain, or throws INVALID_PARAMS. */
export function normaliseWallet(chain: Chain, address: string): { family: 'evm' | 'solana'; address: string } {
  if (chain === 'solana') {
    if (!SOLANA_ADDRESS.test(address)) {
      throw new ApiError('INVALID_PARAMS', 'Not a Solana address (base58, 32-44 characters).', {
        issues: [{ path: 'wallet', message: 'expected a base58 Solana public key' }],
      });
    }
    return { family: 'solana', address };
  }
  if (!EVM_ADDRESS.test(address)) {
    throw new ApiError('INVALID_PARAMS', 'Not an EVM address (0x followed by 40 hex digits).', {
      issues: [{ path: 'wallet', message: 'expected 0x followed by 40 hex digits' }],
    });
  }
  return { family: 'evm', address: address.toLowerCase() };
}

export const AccountIdSchema = z.string().uuid();

function assertAccountId(id: string): void {
  if (!AccountIdSchema.safeParse(id).success) {
    throw new ApiError('INVALID_PARAMS', 'Account ids are UUIDs.', { issues: [{ path: 'account', message: 'expected a UUID' }] });
  }
}

/** The plan whose opening allowance a wallet receives once, for ever (wallet_free_grants). */
export const FREE_PLAN = 'free';

/**
 * Opens an account for a wallet. On the free plan the opening allowance is granted only if the
 * wallet never had it (wallet_free_grants, never emptied); otherwise the account opens with 0
 * credits. `contractChain`: the wallet was proved by EIP-1271 on that chain (a contract wallet
 * there), which is part of its identity in that record.
 */
export async function accountCreate(
  db: Database,
  input: { wallet: string; chain: Chain; plan: string; now?: Date; contractChain?: Chain },
): Promise<Account> {
  const wallet = normaliseWallet(input.chain, input.wallet);
  const grantChain = input.contractChain && input.contractChain !== 'solana' ? input.contractChain : '';
  const id = await db.transaction(async (client) => {
    const plan = await client.query('SELECT 1 FROM plans WHERE name = $1', [input.plan]);
    if (plan.rowCount === 0) throw new ApiError('NOT_FOUND', `No plan named "${input.plan}".`, { plan: input.plan });
    const taken = await client.query('SELECT account_id FROM wallets WHERE family = $1 AND address = $2', [
      wallet.family,
      wallet.address,
    ]);
    if (taken.rowCount) throw new ApiError('WALLET_IN_USE', undefined, { wallet: wallet.address });
    let free: 'granted' | 'withheld' | null = null;
    if (input.plan === FREE_PLAN) {
      // A key-proved record ('') stands for the address on every chain, a contract's for its chain only.
      const had = await client.query(`SELECT 1 FROM wallet_free_grants WHERE family = $1 AND address = $2 AND chain IN ('', $3) LIMIT 1`, [
        wallet.family,
        wallet.address,
        grantChain,
      ]);
      free = had.rowCount ? 'withheld' : 'granted';
    }
    const created = await client.query<{ id: string }>('SELECT account_open($1, $2, $3) AS id', [input.plan, free !== 'withheld', input.now ?? null]);
    const accountId = created.rows[0]!.id;
    if (free) await client.query('UPDATE accounts SET free_allowance = $2 WHERE id = $1', [accountId, free]);
    try {
      await client.query('INSERT INTO wallets (account_id, family, chain, address, contract) VALUES ($1, $2, $3, $4, $5)', [
        accountId,
        wallet.family,
        input.chain,
        wallet.address,
        grantChain !== '',
      ]);
      if (free === 'granted') {
        await client.query(
          `INSERT INTO wallet_free_grants (family, address, chain, account_id, credits)
           SELECT $1, $2, $3, $4, credits FROM plans WHERE name = $5`,
          [wallet.family, wallet.address, grantChain, accountId, input.plan],
        );
      }
    } catch (err) {
      // Another first sign-in of this wallet won the race: its account is the wallet's.
      if ((err as { code?: string }).code === '23505') throw new ApiError('WALLET_IN_USE', undefined, { wallet: wallet.address });
      throw err;
    }
    return accountId;
  });
  return (await accountGet(db, id))!;
}

export async function accountGet(db: Database, id: string): Promise<Account | undefined> {
  assertAccountId(id);
  const res = await db.query<Omit<Account, 'wallets'>>(
    `SELECT id, plan, status, balance, period_start, period_end, topup, paid_until, free_allowance, created_at FROM accounts WHERE id = $1`,
    [id],
  );
  const row = res.rows[0];
  if (!row) return undefined;
  const wallets = await db.query<Wallet>(
    'SELECT chain, address, created_at FROM wallets WHERE account_id = $1 ORDER BY created_at',
    [id],
  );
  return { ...row, wallets: wallets.rows };
}

async function requireAccount(db: Database, id: string): Promise<Account> {
  const account = await accountGet(db, id);
  if (!account) throw new ApiError('NOT_FOUND', `No account ${id}.`, { account: id });
  return account;
}

export async function accountSetPlan(db: Database, id: string, plan: string, now?: Date): Promise<Account> {
  await requireAccount(db, id);
  try {
    await db.query('SELECT account_set_plan($1, $2, $3, $4)', [id, plan, `plan:${randomUUID()}`, now ?? null]);
  } catch (err) {
    if ((err as { code?: string }).code === 'P0002') throw new ApiError('NOT_FOUND', `No plan named "${plan}".`, { plan });
    throw err;
  }
  return requireAccount(db, id);
}

/** Adds credits, or deducts them with a negative amount (never below zero). One ledger row. */
export async function accountGrant(db: Database, id: string, amount: number, note?: string): Promise<Account> {
  if (!Number.isSafeInteger(amount) || Math.abs(amount) > 1_000_000_000) {
    throw new ApiError('INVALID_PARAMS', 'The amount must be an integer of at most 1,000,000,000 in size.', {
      issues: [{ path: 'credits', message: 'expected an integer' }],
    });
  }
  await requireAccount(db, id);
  await db.query('SELECT account_grant($1, $2, $3, $4)', [id, amount, `grant:${randomUUID()}`, note ?? 'granted by an operator']);
  return requireAccount(db, id);
}

export async function accountSetStatus(db: Database, id: string, status: 'active' | 'suspended'): Promise<Account> {
  await requireAccount(db, id);
  await db.query('UPDATE accounts SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
  return requireAccount(db, id);
}

/** The demo account's wallet (`npm start` on a fresh database): a fixed, well-formed address that nobody holds a key for. */
export const DEMO_WALLET = '0x000000000000000000000000000000000000d3e0';

/**
 * The first sign-in of a wallet that has no account, on a database holding the demo account,
 * takes the demo account over: its seed wallet (its only one, DEMO_WALLET) becomes the signing wallet,
 * so the key `npm start` printed, its credits and its usage are in the dashboard of whoever runs
 * the service. Once claimed no wallet holds DEMO_WALLET and every later wallet gets an account
 * of its own; two first sign-ins at once claim it at most once (the row is updated under its lock
 * and the second finds DEMO_WALLET gone). The demo account's id, when this sign-in claimed it.
 */
export async function accountClaimDemo(db: Database, chain: Chain, address: string): Promise<string | undefined> {
  const wallet = normaliseWallet(chain, address);
  const res = await db.query<{ account_id: string }>(
    `UPDATE wallets w SET family = $1, chain = $2, address = $3, created_at = now()
      WHERE w.family = 'evm' AND w.address = $4
        AND NOT EXISTS (SELECT 1 FROM wallets o WHERE o.account_id = w.account_id AND o.id <> w.id)
      RETURNING w.account_id`,
    [wallet.family, chain, wallet.address, DEMO_WALLET],
  );
  return res.rows[0]?.account_id;
}

/** The account a wallet belongs to, if any. */
export async function accountIdByWallet(db: Database, chain: Chain, address: string): Promise<string | undefined> {
  const wallet = normaliseWallet(chain, address);
  const res = await db.query<{ account_id: string }>('SELECT account_id FROM wallets WHERE family = $1 AND address = $2', [
    wallet.family,
    wallet.address,
  ]);
  return res.rows[0]?.account_id;
}

/**
 * A contract wallet (EIP-1271) is a wallet on the chain it was proved on only: whoever controls
 * the same address on another chain is someone else. Its wallet row keeps the chain it was first
 * proved on (wallets.chain); a contract proof on any other chain is refused. A key's proof holds on
 * every chain.
 */
export async function contractChainMismatch(db: Database, address: string, network: Chain): Promise<Chain | undefined> {
  const res = await db.query<{ chain: Chain }>("SELECT chain FROM wallets WHERE family = 'evm' AND address = $1", [address.toLowerCase()]);
  const bound = res.rows[0]?.chain;
  return bound !== undefined && bound !== network ? bound : undefined;
}

/**
 * Links another wallet to an account (dashboard sign-in proves the caller holds it). Linking a
 * wallet the account already has is a no-op; a wallet of another account is WALLET_IN_USE.
 */
export async function accountLinkWallet(db: Database, id: string, chain: Chain, address: string, contract = false): Promise<Account> {
  const wallet = normaliseWallet(chain, address);
  await requireAccount(db, id);
  const linked = await db.transaction(async (client) => {
    const res = await client.query<{ account_id: string }>(
      `WITH ins AS (
         INSERT INTO wallets (account_id, family, chain, address, contract) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (family, address) DO NOTHING RETURNING account_id)
       SELECT account_id FROM ins
       UNION ALL SELECT account_id FROM wallets WHERE family = $2 AND address = $4
       LIMIT 1`,
      [id, wallet.family, chain, wallet.address, contract && chain !== 'solana'],
    );
    if (res.rows[0]?.account_id !== id) return false;
    // The wallet now shares this account's free allowance: it never opens another one with it.
    await client.query('SELECT wallets_share_free_grant($1)', [id]);
    return true;
  });
  if (!linked) throw new ApiError('WALLET_IN_USE', undefined, { wallet: wallet.address });
  return requireAccount(db, id);
}
