// Browser sessions: a nonce, the wallet sign-in that opens a session (or, signed in already, offers
// to link a new wallet), the session itself and sign-out.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { accountIdByWallet } from '../../accounts/accounts.ts';
import type { Plan } from '../../accounts/plans.ts';
import type { DashboardConfig } from '../../config.ts';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import type { PublicOrigins } from '../../origin.ts';
import { audited, withAudit } from '../audit.ts';
import { parseBody } from '../body.ts';
import { offerCreate, offerView } from '../offers.ts';
import { accountForWallet, accountOf, cookieOptions, NONCE_COOKIE, planCredits, SESSION_COOKIE, sessionOf, sessionView } from '../session.ts';
import { nonceView, SignInBody, type NonceLimit, type SignIn } from '../signIn.ts';
import { attemptRecord, nonceCreate, sessionByToken, sessionCreate, sessionListByAccount, sessionRevoke, sessionRevokeOfAccount } from '../store.ts';

export interface SessionRouteDeps {
  db: Database;
  origins: PublicOrigins;
  plans: () => Promise<Plan[]>;
  settings: Pick<DashboardConfig, 'nonceTtlSeconds' | 'sessionTtlSeconds'>;
  signIn: SignIn;
  /** The nonce limiter, one for this and GET /wallets/nonce. */
  nonceLimit: NonceLimit;
}

/** Before a session: the nonce and the sign-in. */
export function signInRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const { db, origins, settings, signIn } = deps;

  app.get('/auth/nonce', { onRequest: deps.nonceLimit }, async (_request, reply) => {
    const issued = await nonceCreate(db, { purpose: 'sign_in', ttlSeconds: settings.nonceTtlSeconds });
    // The nonce is also bound to this browser: the sign-in must come with this cookie.
    reply.setCookie(NONCE_COOKIE, issued.nonce, cookieOptions(origins, '/api/auth', settings.nonceTtlSeconds));
    reply.header('cache-control', 'no-store');
    return nonceView(issued, origins);
  });

  app.post('/auth/sign-in', async (request, reply) => {
    await signIn.budget(request);
    const body = parseBody(SignInBody, request.body);
    const wallet = await signIn.verify(request, body, { purpose: 'sign_in', cookieNonce: request.cookies[NONCE_COOKIE] });
    await signIn.walletBudget(request, wallet);
    reply.clearCookie(NONCE_COOKIE, { path: '/api/auth' });
    // Signed in already, with a wallet no account has: offer to link it to the current account
    // instead of silently opening a second one (the page may still ask for a separate account).
    const current = request.cookies[SESSION_COOKIE] ? await sessionByToken(db, request.cookies[SESSION_COOKIE]) : undefined;
    if (current && !(await accountIdByWallet(db, wallet.chain, wallet.address))) {
      const offer = await offerCreate(db, {
        session_id: current.id,
        account_id: current.account_id,
        kind: 'link',
        family: wallet.family,
        chain: wallet.chain,
        address: wallet.address,
        source_account_id: null,
        contract: wallet.contract,
        ttlSeconds: settings.nonceTtlSeconds,
      });
      await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok', reason: 'link_offered' });
      return reply.code(202).send({ offer: offerView(offer) });
    }
    const { account, created, session, token } = await withAudit(
      db,
      async (tx) => {
        const found = await accountForWallet(tx, wallet);
        const made = await sessionCreate(tx, {
          accountId: found.account.id,
          family: wallet.family,
          address: wallet.address,
          ttlSeconds: settings.sessionTtlSeconds,
          userAgent: request.headers['user-agent'],
        });
        return { ...found, ...made };
      },
      (r) => ({
        account_id: r.account.id,
        action: 'sign_in',
        wallet: { family: wallet.family, address: wallet.address },
        request_id: request.id,
        target: r.session.id,
        details: { created: r.created },
      }),
    );
    await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok' });
    reply.setCookie(SESSION_COOKIE, token, cookieOptions(origins, '/api', settings.sessionTtlSeconds));
    return reply.code(created ? 201 : 200).send(sessionView(session, account, created, await planCredits(deps.plans, account.plan)));
  });
}

/** Behind the session gate: the session and sign-out. */
export function sessionRoutes(authed: FastifyInstance, deps: Pick<SessionRouteDeps, 'db' | 'plans'>): void {
  const { db } = deps;

  authed.get('/session', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const account = await accountOf(db, request);
    return sessionView(sessionOf(request), account, false, await planCredits(deps.plans, account.plan));
  });

  authed.post('/auth/sign-out', async (request, reply) => {
    await audited(db, request, (tx) => sessionRevoke(tx, sessionOf(request).id), () => ({ action: 'sign_out', target: sessionOf(request).id }));
    reply.clearCookie(SESSION_COOKIE, { path: '/api' });
    return { signed_out: true };
  });

  // The account's active sessions (browsers signed in), and ending one from another.
  authed.get('/sessions', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const current = sessionOf(request);
    const sessions = await sessionListByAccount(db, current.account_id);
    return { sessions: sessions.map((s) => ({ ...s, current: s.id === current.id })) };
  });

  authed.post('/sessions/:id/revoke', async (request, reply) => {
    const { id } = parseBody(z.object({ id: z.string().uuid() }), request.params);
    const current = sessionOf(request);
    await audited(
      db,
      request,
      async (tx) => {
        if (!(await sessionRevokeOfAccount(tx, current.account_id, id))) {
          throw new ApiError('NOT_FOUND', 'No active session with this id on your account.', { session: id });
        }
      },
      () => ({ action: 'session_revoke', target: id }),
    );
    if (id === current.id) reply.clearCookie(SESSION_COOKIE, { path: '/api' });
    return { revoked: true, current: id === current.id };
  });
}
