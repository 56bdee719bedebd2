// The browser session as the /api route modules see it: its cookies, the session the gate in
// api.ts put on the request, the signed-in account, and the answer that describes them.
import type { FastifyRequest } from 'fastify';
import { accountClaimDemo, accountCreate, accountGet, accountIdByWallet, contractChainMismatch, type Account, type Chain } from '../accounts/accounts.ts';
import type { Plan } from '../accounts/plans.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { PublicOrigins } from '../origin.ts';
import type { Session } from './store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: Session;
  }
}

export const SESSION_COOKIE = 'cmcp_session';
export const NONCE_COOKIE = 'cmcp_nonce';
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A dashboard cookie: HTTP-only, same-site strict, and Secure unless the dashboard is on this machine. */
export function cookieOptions(origins: PublicOrigins, path: string, maxAge: number) {
  return {
    path,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: !LOCAL_HOSTS.has(new URL(origins.dashboard).hostname),
    maxAge,
  };
}

/** The session of a request that passed the gate (only routes behind it may ask). */
export const sessionOf = (request: FastifyRequest): Session => request.dashboardSession!;

export async function accountOf(db: Database, request: FastifyRequest): Promise<Account> {
  const account = await accountGet(db, sessionOf(request).account_id);
  if (!account) throw new ApiError('SESSION_REQUIRED');
  return account;
}

/** The plan's allowance, beside the balance so the page can say when credits run low. */
export async function planCredits(plans: () => Promise<Plan[]>, plan: string): Promise<number | null> {
  return (await plans()).find((p) => p.name === plan)?.credits ?? null;
}

/** The wallet's account, made on its first sign-in. */
export async function accountForWallet(db: Database, wallet: { chain: Chain; address: string; contract: boolean }): Promise<{ account: Account; created: boolean }> {
  const { chain, address, contract } = wallet;
  const existing = async () => {
    const id = await accountIdByWallet(db, chain, address);
    if (!id) return undefined;
    // Checked again here: a first sign-in of the same contract address on another chain may have won a race.
    if (contract && (await contractChainMismatch(db, address, chain))) throw new ApiError('SIGN_IN_REJECTED', undefined, { reason: 'contract_chain' });
    return { account: (await accountGet(db, id))!, created: false };
  };
  const found = await existing();
  if (found) return found;
  // On an instance `npm start` seeded, the first wallet to sign in gets the demo account and its key.
  const demo = contract ? undefined : await accountClaimDemo(db, chain, address);
  if (demo !== undefined) return { account: (await accountGet(db, demo))!, created: false };
  try {
    return { account: await accountCreate(db, { wallet: address, chain, plan: 'free', contractChain: contract ? chain : undefined }), created: true };
  } catch (err) {
    // Two first sign-ins of one wallet at once: the other made the account; use it.
    if (err instanceof ApiError && err.code === 'WALLET_IN_USE') {
      const other = await existing();
      if (other) return other;
    }
    throw err;
  }
}

export function walletView(w: Account['wallets'][number]) {
  return { chain: w.chain, address: w.address, created_at: w.created_at.toISOString() };
}

export function sessionView(session: Session, account: Account, created: boolean, allowance: number | null) {
  return {
    account: {
      id: account.id,
      plan: account.plan,
      status: account.status,
      balance: account.balance,
      allowance,
      created: created,
      // 'withheld': this account opened with 0 credits because its wallet had the free allowance before.
      free_allowance: account.free_allowance,
      wallets: account.wallets.map(walletView),
    },
    wallet: { family: session.wallet_family, address: session.wallet_address },
    csrf_token: session.csrf_token,
    expires_at: session.expires_at.toISOString(),
  };
}
