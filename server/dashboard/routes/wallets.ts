// An account's wallets: a link nonce, linking a proved wallet, the offers a sign-in or a link left
// (link it here, or a separate account after all), merging another wallet's account into this one
// (both wallets sign), and unlinking.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { accountGet, accountIdByWallet, accountLinkWallet } from '../../accounts/accounts.ts';
import { accountMerge, accountUnlinkWallet } from '../../accounts/merge.ts';
import { ApiError } from '../../errors.ts';
import type { KeyResolver } from '../../keys/resolver.ts';
import { keyListByAccount } from '../../keys/store.ts';
import { audited } from '../audit.ts';
import { parseBody } from '../body.ts';
import { credentialStatus } from '../../lib/credentials.ts';
import { mergeStatement, offerCreate, offerGet, offerUse, offerView } from '../offers.ts';
import { accountForWallet, cookieOptions, planCredits, SESSION_COOKIE, sessionOf, sessionView, walletView } from '../session.ts';
import { messageField, nonceView, SignInBody } from '../signIn.ts';
import { attemptRecord, nonceCreate, sessionCreate, sessionRevoke } from '../store.ts';
import type { SessionRouteDeps } from './sessions.ts';

const MergeBody = z.object({ offer_id: z.string().uuid(), signatures: z.array(SignInBody).length(2) });
const UnlinkBody = z.object({ family: z.enum(['evm', 'solana']), address: z.string().min(1).max(64) });

function parseOfferId(params: unknown): string {
  return parseBody(z.object({ id: z.string().uuid() }), params).id;
}

/** What a sign-in needs, and the key cache, cleared on this pod when a merge moves keys to another account. */
export interface WalletRouteDeps extends SessionRouteDeps {
  keys: KeyResolver;
}

export function walletRoutes(authed: FastifyInstance, deps: WalletRouteDeps): void {
  const { db, origins, settings, signIn } = deps;

  authed.get('/wallets/nonce', { onRequest: deps.nonceLimit }, async (request, reply) => {
    const issued = await nonceCreate(db, { purpose: 'link', sessionId: sessionOf(request).id, ttlSeconds: settings.nonceTtlSeconds });
    reply.header('cache-control', 'no-store');
    return nonceView(issued, origins);
  });

  authed.post('/wallets', async (request, reply) => {
    await signIn.budget(request);
    const body = parseBody(SignInBody, request.body);
    const session = sessionOf(request);
    const wallet = await signIn.verify(request, body, { purpose: 'link', sessionId: session.id });
    await signIn.walletBudget(request, wallet);
    const owner = await accountIdByWallet(db, wallet.chain, wallet.address);
    if (owner !== undefined && owner !== session.account_id) {
      // The wallet has an account of its own: refused as before, with an offer to merge it here.
      const offer = await offerCreate(db, {
        session_id: session.id,
        account_id: session.account_id,
        kind: 'merge',
        family: wallet.family,
        chain: wallet.chain,
        address: wallet.address,
        source_account_id: owner,
        contract: wallet.contract,
        ttlSeconds: settings.nonceTtlSeconds,
      });
      await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok', reason: 'merge_offered' });
      throw new ApiError('WALLET_IN_USE', 'This wallet already has a cryptomcp account of its own; it can be merged into yours.', {
        wallet: wallet.address,
        offer: offerView(offer, await mergePreview(owner, session.account_id)),
      });
    }
    const account = await audited(
      db,
      request,
      (tx) => accountLinkWallet(tx, session.account_id, wallet.chain, wallet.address, wallet.contract),
      () => ({ action: 'wallet_link', target: `${wallet.family}:${wallet.address}`, details: { chain: wallet.chain } }),
    );
    await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok', reason: 'link' });
    return reply.code(201).send({ wallets: account.wallets.map(walletView) });
  });

  /**
   * What a merge would bring: the other account's plan, balance, keys and wallets; and, when the
   * plan's key cap forbids it, why (shown before either wallet is asked to sign). accountMerge
   * checks the cap again under its locks.
   */
  const mergePreview = async (accountId: string, targetId: string) => {
    const other = await accountGet(db, accountId);
    const keys = await keyListByAccount(db, accountId);
    const activeHere = (await keyListByAccount(db, targetId)).filter((k) => credentialStatus(k) === 'active').length;
    const activeThere = keys.filter((k) => credentialStatus(k) === 'active').length;
    const target = await accountGet(db, targetId);
    const maxKeys = (await deps.plans()).find((p) => p.name === target?.plan)?.max_keys;
    const blocked =
      maxKeys !== undefined && activeHere + activeThere > maxKeys
        ? {
            reason: 'key_limit',
            message: `Together the two accounts hold ${activeHere + activeThere} active keys and your plan allows ${maxKeys}. Revoke ${activeHere + activeThere - maxKeys} first, then merge.`,
            active_keys: activeHere + activeThere,
            max_keys: maxKeys,
          }
        : null;
    return {
      blocked,
      plan: other?.plan ?? null,
      balance: other?.balance ?? 0,
      // On the free plan only top-up credits move: the free allowance is one per account.
      credits_moved: other ? (other.plan === 'free' ? other.topup : other.balance) : 0,
      active_keys: keys.filter((k) => credentialStatus(k) === 'active').length,
      wallets: (other?.wallets ?? []).map(walletView),
    };
  };

  // A wallet offered at sign-in (no account had it): link it to this account…
  authed.post('/wallets/offers/:id/link', async (request, reply) => {
    const session = sessionOf(request);
    const { account } = await audited(
      db,
      request,
      async (tx) => {
        const used = await offerUse(tx, parseOfferId(request.params), session.id, 'link');
        return { offer: used, account: await accountLinkWallet(tx, session.account_id, used.chain, used.address, used.contract) };
      },
      ({ offer: o }) => ({ action: 'wallet_link', target: `${o.family}:${o.address}`, details: { chain: o.chain } }),
    );
    return reply.code(201).send({ wallets: account.wallets.map(walletView) });
  });

  // …or open a separate account for it after all, and switch this browser to that account.
  authed.post('/wallets/offers/:id/separate-account', async (request, reply) => {
    const session = sessionOf(request);
    const offer = await offerUse(db, parseOfferId(request.params), session.id, 'link');
    const { account, created } = await accountForWallet(db, { chain: offer.chain, address: offer.address, contract: offer.contract });
    await sessionRevoke(db, session.id);
    const next = await sessionCreate(db, {
      accountId: account.id,
      family: offer.family,
      address: offer.address,
      ttlSeconds: settings.sessionTtlSeconds,
      userAgent: request.headers['user-agent'],
    });
    reply.setCookie(SESSION_COOKIE, next.token, cookieOptions(origins, '/api', settings.sessionTtlSeconds));
    return reply.code(created ? 201 : 200).send(sessionView(next.session, account, created, await planCredits(deps.plans, account.plan)));
  });

  // Merge the offered wallet's account into this one: both wallets sign the merge statement,
  // each message with a link nonce of this session (GET /wallets/nonce).
  authed.post('/merges', async (request) => {
    await signIn.budget(request);
    const body = parseBody(MergeBody, request.body);
    const session = sessionOf(request);
    const offer = await offerGet(db, body.offer_id, session.id, 'merge');
    const statement = mergeStatement(offer);
    for (const signed of body.signatures) {
      if (messageField(signed.family, signed.message, 'statement') !== statement) {
        throw new ApiError('MERGE_REFUSED', 'A signed message does not state this merge. Start the merge again.', { reason: 'wrong_statement' });
      }
    }
    const signers = [];
    for (const signed of body.signatures) {
      const signer = await signIn.verify(request, signed, { purpose: 'link', sessionId: session.id });
      await signIn.walletBudget(request, signer);
      signers.push(signer);
    }
    const target = await accountGet(db, session.account_id);
    const isOffered = (w: { family: string; address: string }) => w.family === offer.family && w.address === offer.address;
    const isTargets = (w: { family: string; address: string }) =>
      (target?.wallets ?? []).some((t) => (t.chain === 'solana' ? 'solana' : 'evm') === w.family && t.address === w.address);
    if (!signers.some(isOffered) || !signers.some(isTargets)) {
      throw new ApiError('MERGE_REFUSED', 'Both wallets must sign: one of your account and the one being merged.', { reason: 'missing_signature' });
    }
    const merged = await audited(
      db,
      request,
      async (tx) => {
        const done = await accountMerge(tx, { id: offer.id, source: offer.source_account_id!, target: session.account_id, wallet: offer });
        await offerUse(tx, offer.id, session.id, 'merge');
        return done;
      },
      (done) => ({ action: 'account_merge', target: offer.source_account_id, details: { wallet: `${offer.family}:${offer.address}`, ...done } }),
    );
    // Keys changed account: this pod's cached grants must go (other pods' expire within the key cache TTL).
    deps.keys.clear();
    await attemptRecord(db, { client: request.ip, family: offer.family, address: offer.address, outcome: 'ok', reason: 'merge' });
    const account = (await accountGet(db, session.account_id))!;
    return { merged, ...sessionView(session, account, false, await planCredits(deps.plans, account.plan)) };
  });

  authed.post('/wallets/unlink', async (request) => {
    const body = parseBody(UnlinkBody, request.body);
    const session = sessionOf(request);
    const wallet = { family: body.family, address: body.family === 'evm' ? body.address.toLowerCase() : body.address };
    await audited(
      db,
      request,
      (tx) => accountUnlinkWallet(tx, session.account_id, wallet, { family: session.wallet_family, address: session.wallet_address }),
      () => ({ action: 'wallet_unlink', target: `${wallet.family}:${wallet.address}` }),
    );
    const account = (await accountGet(db, session.account_id))!;
    return { wallets: account.wallets.map(walletView) };
  });
}
