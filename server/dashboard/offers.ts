// Offers to link or merge a wallet (migration 0012). A session that proved a wallet by signature
// but could not simply link it gets an offer: the proof is kept for a few minutes, for this session
// only, and used once (one UPDATE claims it, so two requests cannot both use it).
import type { Chain } from '../accounts/accounts.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { WalletFamily } from './store.ts';

export interface WalletOffer {
  id: string;
  session_id: string;
  account_id: string;
  kind: 'link' | 'merge';
  family: WalletFamily;
  chain: Chain;
  address: string;
  source_account_id: string | null;
  /** The wallet was proved through its contract (EIP-1271) on `chain`, not by its own key. */
  contract: boolean;
  expires_at: Date;
}

const COLUMNS = 'id, session_id, account_id, kind, family, chain, address, source_account_id, contract, expires_at';

export async function offerCreate(
  db: Database,
  input: Omit<WalletOffer, 'id' | 'expires_at'> & { ttlSeconds: number },
): Promise<WalletOffer> {
  const res = await db.query<WalletOffer>(
    `INSERT INTO account_wallet_offers (session_id, account_id, kind, family, chain, address, source_account_id, contract, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9)) RETURNING ${COLUMNS}`,
    [input.session_id, input.account_id, input.kind, input.family, input.chain, input.address, input.source_account_id, input.contract, input.ttlSeconds],
  );
  return res.rows[0]!;
}

/** This session's live offer of that kind, or OFFER_EXPIRED. Does not use it up. */
export async function offerGet(db: Database, id: string, sessionId: string, kind: WalletOffer['kind']): Promise<WalletOffer> {
  const res = await db.query<WalletOffer>(
    `SELECT ${COLUMNS} FROM account_wallet_offers
      WHERE id = $1::uuid AND session_id = $2 AND kind = $3 AND used_at IS NULL AND expires_at > now()`,
    [id, sessionId, kind],
  );
  const offer = res.rows[0];
  if (!offer) throw new ApiError('OFFER_EXPIRED', undefined, { offer: id });
  return offer;
}

/** Uses an offer up; OFFER_EXPIRED if it is not this session's live offer of that kind. */
export async function offerUse(db: Database, id: string, sessionId: string, kind: WalletOffer['kind']): Promise<WalletOffer> {
  const res = await db.query<WalletOffer>(
    `UPDATE account_wallet_offers SET used_at = now()
      WHERE id = $1::uuid AND session_id = $2 AND kind = $3 AND used_at IS NULL AND expires_at > now()
      RETURNING ${COLUMNS}`,
    [id, sessionId, kind],
  );
  const offer = res.rows[0];
  if (!offer) throw new ApiError('OFFER_EXPIRED', undefined, { offer: id });
  return offer;
}

export async function offerSweep(db: Database): Promise<void> {
  await db.query(`DELETE FROM account_wallet_offers WHERE expires_at < now() - interval '1 hour'`);
}

/**
 * The sentence both wallets sign to merge: it names both accounts and the offer, so a signature
 * made for it cannot be used for any other merge (and each also carries its own single-use nonce).
 */
export function mergeStatement(offer: Pick<WalletOffer, 'id' | 'account_id' | 'source_account_id'>): string {
  return (
    `Merge cryptomcp account ${offer.source_account_id} into account ${offer.account_id}: its credits, API keys and wallets ` +
    `move there and it stops being a separate login. Offer ${offer.id}.`
  );
}

/** An offer as the page gets it; a merge's with the statement both wallets sign and what it would bring. */
export function offerView(offer: WalletOffer, source?: Record<string, unknown>) {
  return {
    id: offer.id,
    kind: offer.kind,
    wallet: { family: offer.family, chain: offer.chain, address: offer.address },
    expires_at: offer.expires_at.toISOString(),
    ...(offer.kind === 'merge' ? { statement: mergeStatement(offer), source: { id: offer.source_account_id, ...source } } : {}),
  };
}
