// The dashboard's JSON API under /api (DESIGN.md §5, issue 8): wallet sign-in, browser sessions,
// keys, usage and plans. An encapsulated Fastify plugin: its cookie parsing, session lookup and
// CSRF checks apply here only, never to /mcp. Keys go through server/keys/store.ts, the gateway's
// own code, so a key made here works on /mcp at once.
import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import { parseSignInMessageText } from '@solana/wallet-standard-util';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseSiweMessage } from 'viem/siwe';
import { z } from 'zod';
import { accountCreate, accountGet, accountIdByWallet, accountLinkWallet, contractChainMismatch, type Account, type Chain } from '../accounts/accounts.ts';
import { accountMerge, accountUnlinkWallet } from '../accounts/merge.ts';
import { publicPlan, type Plan } from '../accounts/plans.ts';
import type { DashboardConfig } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import { keyCreate, keyListByAccount, keyRevoke, keyRotate, keyUpdate, type ApiKey } from '../keys/store.ts';
import type { Registry } from '../mcp/registry.ts';
import type { UsageReader } from '../mcp/tool.ts';
import type { EvmNetwork } from '../providers/evm/chains.ts';
import { consentPublicRoutes, consentSessionRoutes } from '../oauth/consent.ts';
import type { OAuthServer } from '../oauth/server.ts';
import type { PublicOrigins } from '../origin.ts';
import {
  attemptCountRecent,
  attemptRecord,
  dashboardSweep,
  nonceConsume,
  nonceCreate,
  sessionByToken,
  sessionCreate,
  sessionRevoke,
  type Session,
  type WalletFamily,
} from './store.ts';
import { idempotencySweep, keyCreateIdempotent, parseIdempotencyKey } from './idempotency.ts';
import { mergeStatement, offerCreate, offerGet, offerSweep, offerUse, type WalletOffer } from './offers.ts';
import { requestLogPage, requestLogSweep } from './requestLog.ts';
import { parseRange, usageBreakdown, usageCsv, usageDaily } from './usage.ts';
import type { Payments } from '../payments/orders.ts';
import { paymentRoutes } from './payments.ts';
import { checkSiweMessage, signInClients, SIGN_IN_CHAINS, verifySiweSignature, verifySolanaSignIn, type Expectation, type RefusalReason } from './verify.ts';
import { credentialStatus, parseBody, refuseNulInput } from './body.ts';
import { refuseControlCharacters } from '../lib/text.ts';
import { Limiter, retryAfterSeconds } from '../lib/limiter.ts';

export interface DashboardDeps {
  db: Database;
  registry: Registry;
  plans: () => Promise<Plan[]>;
  usage: UsageReader;
  keys: KeyResolver;
  settings: DashboardConfig;
  evm: { rpcUrls: Record<EvmNetwork, string>; timeoutMs: number };
  /** Where MCP clients reach the servers and the dashboard's origin, from configuration only. */
  origins: PublicOrigins;
  /** OAuth consent and Connected apps (server/oauth/consent.ts); absent without the authorization server. */
  oauth?: { server: OAuthServer; tokens: KeyResolver | undefined };
  /** On-chain payments (issue 21); absent: the Plans page offers no purchase. */
  payments?: Payments;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: Session;
  }
}

const SESSION_COOKIE = 'cmcp_session';
const NONCE_COOKIE = 'cmcp_nonce';
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const SignInBody = z.object({
  family: z.enum(['evm', 'solana']),
  message: z.string().min(1).max(4000),
  // EIP-1271 / ERC-6492 signatures can be long; base64 ed25519 signatures are 88 characters.
  signature: z.string().min(1).max(20_000),
});

/**
 * Nonces are issued before anyone has proved anything, so their issuance is limited per client
 * address too: per minute, twice the sign-in budget (at least 30). In memory, per pod: it only
 * guards the table against floods; the sign-in budget that matters is the PostgreSQL-wide one.
 */
function nonceRateLimit(signInLimit: number): (request: FastifyRequest) => Promise<void> {
  const max = Math.max(30, signInLimit * 2);
  const limiter = Limiter.perWindow(max, 60_000);
  return async (request) => {
    const taken = limiter.take(`${request.routeOptions.url}|${request.ip}`);
    if (taken.ok) return;
    const retry = retryAfterSeconds(taken.retryAfterMs);
    throw new ApiError(
      'RATE_LIMITED',
      'Too many sign-in nonces requested from this address; retry later.',
      { limit: max, window_seconds: 60, retry_after_seconds: retry },
      { 'retry-after': String(retry) },
    );
  };
}

const RequestsQuery = z.object({
  key: z.string().uuid().optional(),
  server: z.string().max(64).optional(),
  tool: z.string().max(128).optional(),
  status: z.union([z.enum(['ok', 'error', 'rate_limited']), z.string().regex(/^[1-5]\d{2}$/)]).optional(),
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** A key's name is one line; its description may have line breaks. */
const KEY_TEXT = { name: 'line', description: 'text' } as const;

const RotateBody = z.object({ grace_seconds: z.number().int().min(0).max(30 * 86400) });

const MergeBody = z.object({ offer_id: z.string().uuid(), signatures: z.array(SignInBody).length(2) });
const UnlinkBody = z.object({ family: z.enum(['evm', 'solana']), address: z.string().min(1).max(64) });

function parseOfferId(params: unknown): string {
  return parseBody(z.object({ id: z.string().uuid() }), params).id;
}

export async function dashboardApi(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { db, settings } = deps;
  const evmClient = signInClients(deps.evm.rpcUrls, deps.evm.timeoutMs);
  await app.register(cookie);
  const nonceLimit = nonceRateLimit(settings.signInLimit);
  // Behind a proxy the client address is what X-Forwarded-For says; a pod reachable directly lets
  // anyone rotate it. These two bounds hold whatever it says (in memory, per pod).
  const signInWindowMs = settings.signInWindowSeconds * 1000;
  const walletSignIns = Limiter.perWindow(settings.signInWalletLimit, signInWindowMs);
  const allSignIns = Limiter.perWindow(settings.signInGlobalLimit, signInWindowMs, { maxKeys: 1 });

  const sweep = setInterval(() => {
    dashboardSweep(db).catch(() => {});
    idempotencySweep(db).catch(() => {});
    offerSweep(db).catch(() => {});
    requestLogSweep(db, settings.requestLogRetentionDays).catch(() => {});
  }, 10 * 60_000);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));

  /** The plan's allowance, beside the balance so the page can say when credits run low. */
  const planCredits = async (plan: string): Promise<number | null> => (await deps.plans()).find((p) => p.name === plan)?.credits ?? null;

  /**
   * The dashboard's origin, which sign-in messages must name: configured (or the URL the server
   * listens on), never the request's Host, which a phishing page chooses.
   */
  const dashboardOrigin = (): string => deps.origins.dashboard;
  const cookieOptions = (path: string, maxAge: number) => ({
    path,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: !LOCAL_HOSTS.has(new URL(dashboardOrigin()).hostname),
    maxAge,
  });

  // Every mutating request must come from the dashboard's own pages: a browser's Origin and
  // Sec-Fetch-Site say where it came from (a cross-site form or fetch is refused here), and a
  // session's requests must also echo the session's CSRF token (checked below).
  app.addHook('onRequest', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== dashboardOrigin()) throw new ApiError('CSRF_REJECTED', undefined, { reason: 'origin' });
    const site = request.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') throw new ApiError('CSRF_REJECTED', undefined, { reason: 'cross_site' });
  });
  // Key names and descriptions, and every other text a route stores, are refused with a NUL.
  app.addHook('preValidation', refuseNulInput);

  app.get('/config', async () => ({
    mcp_base_url: deps.origins.base,
    servers: [...deps.registry.values()].map((s) => ({ name: s.name, description: s.description })),
    chains: Object.entries(SIGN_IN_CHAINS).map(([id, network]) => ({ id: Number(id), network })),
    walletconnect_project_id: settings.walletConnectProjectId ?? null,
    request_log_retention_days: settings.requestLogRetentionDays,
  }));

  const consent = deps.oauth && { db, oauth: deps.oauth.server, tokens: deps.oauth.tokens };
  if (consent) consentPublicRoutes(app, consent);

  app.get('/auth/nonce', { onRequest: nonceLimit }, async (request, reply) => {
    const { nonce, expires_at } = await nonceCreate(db, { purpose: 'sign_in', ttlSeconds: settings.nonceTtlSeconds });
    // The nonce is also bound to this browser: the sign-in must come with this cookie.
    reply.setCookie(NONCE_COOKIE, nonce, cookieOptions('/api/auth', settings.nonceTtlSeconds));
    reply.header('cache-control', 'no-store');
    return { nonce, expires_at: expires_at.toISOString(), domain: new URL(dashboardOrigin()).host, uri: dashboardOrigin() };
  });

  /**
   * Refuses a client past its sign-in budget (counted in PostgreSQL, so shared by every pod), and
   * everyone once this pod has taken the window's sign-in attempts from all clients together. Only
   * attempts within their client's budget count toward the shared one: one client hammering past
   * its own limit cannot lock everyone else out.
   */
  async function signInBudget(request: FastifyRequest): Promise<void> {
    const recent = await attemptCountRecent(db, request.ip, settings.signInWindowSeconds);
    if (recent.count >= settings.signInLimit) {
      await attemptRecord(db, { client: request.ip, outcome: 'rate_limited' });
      const oldest = recent.oldest?.getTime() ?? Date.now();
      const retry = Math.max(1, Math.ceil((oldest + settings.signInWindowSeconds * 1000 - Date.now()) / 1000));
      throw new ApiError(
        'RATE_LIMITED',
        'Too many sign-in attempts from this address; retry later.',
        { limit: settings.signInLimit, window_seconds: settings.signInWindowSeconds, retry_after_seconds: retry },
        { 'retry-after': String(retry) },
      );
    }
    const global = allSignIns.take('all');
    if (global.ok) return;
    const retry = retryAfterSeconds(global.retryAfterMs);
    throw new ApiError(
      'RATE_LIMITED',
      'Too many sign-in attempts on this service right now; retry later.',
      { limit: settings.signInGlobalLimit, window_seconds: settings.signInWindowSeconds, retry_after_seconds: retry, scope: 'service' },
      { 'retry-after': String(retry) },
    );
  }

  /**
   * Verifies a signed sign-in message: the nonce is consumed first (single use, even when the
   * signature then fails), then the fields and the signature are checked.
   */
  async function verifySignedMessage(
    request: FastifyRequest,
    body: z.infer<typeof SignInBody>,
    nonceScope: { purpose: 'sign_in'; cookieNonce: string | undefined } | { purpose: 'link'; sessionId: string },
  ): Promise<{ family: WalletFamily; chain: Chain; address: string; contract: boolean }> {
    const refuse = async (reason: RefusalReason | 'nonce_unknown' | 'nonce_used' | 'nonce_expired', address?: string): Promise<never> => {
      await attemptRecord(db, { client: request.ip, family: body.family, address, outcome: 'refused', reason });
      throw new ApiError('SIGN_IN_REJECTED', undefined, { reason });
    };
    const nonce = messageNonce(body.family, body.message);
    if (!nonce) return refuse('malformed_message');
    if (nonceScope.purpose === 'sign_in' && nonceScope.cookieNonce !== nonce) return refuse('nonce_mismatch');
    const claimed = await nonceConsume(db, {
      nonce,
      purpose: nonceScope.purpose,
      sessionId: nonceScope.purpose === 'link' ? nonceScope.sessionId : undefined,
    });
    if (!claimed.ok) return refuse(claimed.reason);
    const expect: Expectation = {
      domain: new URL(dashboardOrigin()).host,
      origin: dashboardOrigin(),
      now: new Date(),
      maxAgeSeconds: settings.nonceTtlSeconds,
    };
    if (body.family === 'solana') {
      const result = verifySolanaSignIn(body.message, body.signature, expect);
      if (!result.ok) return refuse(result.reason);
      return { family: 'solana', chain: 'solana', address: result.address, contract: false };
    }
    const checked = checkSiweMessage(body.message, expect);
    if (!checked.ok) return refuse(checked.reason);
    let valid: Awaited<ReturnType<typeof verifySiweSignature>>;
    try {
      valid = await verifySiweSignature(evmClient(checked.network), { address: checked.address, message: body.message, signature: body.signature });
    } catch (err) {
      request.log.warn({ err }, 'EIP-1271 check failed');
      throw new ApiError('UPSTREAM_ERROR', 'Could not reach the chain to check a smart-contract wallet signature.', { provider: `rpc:${checked.network}` });
    }
    if (!valid) return refuse('bad_signature', checked.address.toLowerCase());
    const address = checked.address.toLowerCase();
    // A contract wallet signs in only on the chain it was first proved on.
    if (valid === 'contract' && (await contractChainMismatch(db, address, checked.network))) return refuse('contract_chain', address);
    return { family: 'evm', chain: checked.network, address, contract: valid === 'contract' };
  }

  /** Refuses a wallet proved more often than its budget (counted once its signature verified, so no one can spend another's). */
  async function walletBudget(request: FastifyRequest, wallet: { family: WalletFamily; address: string }): Promise<void> {
    const taken = walletSignIns.take(`${wallet.family}:${wallet.address}`);
    if (taken.ok) return;
    await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'rate_limited', reason: 'wallet' });
    const retry = retryAfterSeconds(taken.retryAfterMs);
    throw new ApiError(
      'RATE_LIMITED',
      'Too many sign-ins with this wallet; retry later.',
      { limit: settings.signInWalletLimit, window_seconds: settings.signInWindowSeconds, retry_after_seconds: retry, scope: 'wallet' },
      { 'retry-after': String(retry) },
    );
  }

  app.post('/auth/sign-in', async (request, reply) => {
    await signInBudget(request);
    const body = parseBody(SignInBody, request.body);
    const wallet = await verifySignedMessage(request, body, { purpose: 'sign_in', cookieNonce: request.cookies[NONCE_COOKIE] });
    await walletBudget(request, wallet);
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
    const { account, created } = await accountForWallet(db, wallet);
    const { session, token } = await sessionCreate(db, {
      accountId: account.id,
      family: wallet.family,
      address: wallet.address,
      ttlSeconds: settings.sessionTtlSeconds,
      userAgent: request.headers['user-agent'],
    });
    await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok' });
    reply.setCookie(SESSION_COOKIE, token, cookieOptions('/api', settings.sessionTtlSeconds));
    return reply.code(created ? 201 : 200).send(sessionView(session, account, created, await planCredits(account.plan)));
  });

  // Everything below needs a signed-in session, and a mutating request its CSRF token.
  await app.register(async (authed) => {
    authed.addHook('onRequest', async (request) => {
      const token = request.cookies[SESSION_COOKIE];
      const session = token ? await sessionByToken(db, token) : undefined;
      if (!session) throw new ApiError('SESSION_REQUIRED');
      if (request.method !== 'GET' && request.method !== 'HEAD' && !csrfMatches(request.headers['x-csrf-token'], session.csrf_token)) {
        throw new ApiError('CSRF_REJECTED', undefined, { reason: 'token' });
      }
      request.dashboardSession = session;
    });
    const sessionOf = (request: FastifyRequest): Session => request.dashboardSession!;
    const accountOf = async (request: FastifyRequest): Promise<Account> => {
      const account = await accountGet(db, sessionOf(request).account_id);
      if (!account) throw new ApiError('SESSION_REQUIRED');
      return account;
    };

    if (consent) consentSessionRoutes(authed, consent, (request) => sessionOf(request).account_id);

    authed.get('/session', async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const account = await accountOf(request);
      return sessionView(sessionOf(request), account, false, await planCredits(account.plan));
    });

    authed.post('/auth/sign-out', async (request, reply) => {
      await sessionRevoke(db, sessionOf(request).id);
      reply.clearCookie(SESSION_COOKIE, { path: '/api' });
      return { signed_out: true };
    });

    authed.get('/wallets/nonce', { onRequest: nonceLimit }, async (request, reply) => {
      const { nonce, expires_at } = await nonceCreate(db, { purpose: 'link', sessionId: sessionOf(request).id, ttlSeconds: settings.nonceTtlSeconds });
      reply.header('cache-control', 'no-store');
      return { nonce, expires_at: expires_at.toISOString(), domain: new URL(dashboardOrigin()).host, uri: dashboardOrigin() };
    });

    authed.post('/wallets', async (request, reply) => {
      await signInBudget(request);
      const body = parseBody(SignInBody, request.body);
      const session = sessionOf(request);
      const wallet = await verifySignedMessage(request, body, { purpose: 'link', sessionId: session.id });
      await walletBudget(request, wallet);
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
          offer: offerView(offer, await mergePreview(owner)),
        });
      }
      const account = await accountLinkWallet(db, session.account_id, wallet.chain, wallet.address, wallet.contract);
      await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'ok', reason: 'link' });
      return reply.code(201).send({ wallets: account.wallets.map(walletView) });
    });

    /** What a merge would bring: the other account's plan, balance, keys and wallets. */
    const mergePreview = async (accountId: string) => {
      const other = await accountGet(db, accountId);
      const keys = await keyListByAccount(db, accountId);
      return {
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
      const offer = await offerUse(db, parseOfferId(request.params), session.id, 'link');
      const account = await accountLinkWallet(db, session.account_id, offer.chain, offer.address, offer.contract);
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
      reply.setCookie(SESSION_COOKIE, next.token, cookieOptions('/api', settings.sessionTtlSeconds));
      return reply.code(created ? 201 : 200).send(sessionView(next.session, account, created, await planCredits(account.plan)));
    });

    // Merge the offered wallet's account into this one: both wallets sign the merge statement,
    // each message with a link nonce of this session (GET /wallets/nonce).
    authed.post('/merges', async (request) => {
      await signInBudget(request);
      const body = parseBody(MergeBody, request.body);
      const session = sessionOf(request);
      const offer = await offerGet(db, body.offer_id, session.id, 'merge');
      const statement = mergeStatement(offer);
      for (const signed of body.signatures) {
        if (messageStatement(signed.family, signed.message) !== statement) {
          throw new ApiError('MERGE_REFUSED', 'A signed message does not state this merge. Start the merge again.', { reason: 'wrong_statement' });
        }
      }
      const signers = [];
      for (const signed of body.signatures) {
        const signer = await verifySignedMessage(request, signed, { purpose: 'link', sessionId: session.id });
        await walletBudget(request, signer);
        signers.push(signer);
      }
      const target = await accountGet(db, session.account_id);
      const isOffered = (w: { family: string; address: string }) => w.family === offer.family && w.address === offer.address;
      const isTargets = (w: { family: string; address: string }) =>
        (target?.wallets ?? []).some((t) => (t.chain === 'solana' ? 'solana' : 'evm') === w.family && t.address === w.address);
      if (!signers.some(isOffered) || !signers.some(isTargets)) {
        throw new ApiError('MERGE_REFUSED', 'Both wallets must sign: one of your account and the one being merged.', { reason: 'missing_signature' });
      }
      const merged = await accountMerge(db, { id: offer.id, source: offer.source_account_id!, target: session.account_id, wallet: offer });
      await offerUse(db, offer.id, session.id, 'merge');
      // Keys changed account: this pod's cached grants must go (other pods' expire within the key cache TTL).
      deps.keys.clear();
      await attemptRecord(db, { client: request.ip, family: offer.family, address: offer.address, outcome: 'ok', reason: 'merge' });
      const account = (await accountGet(db, session.account_id))!;
      return { merged, ...sessionView(session, account, false, await planCredits(account.plan)) };
    });

    authed.post('/wallets/unlink', async (request) => {
      const body = parseBody(UnlinkBody, request.body);
      const session = sessionOf(request);
      const wallet = { family: body.family, address: body.family === 'evm' ? body.address.toLowerCase() : body.address };
      await accountUnlinkWallet(db, session.account_id, wallet, { family: session.wallet_family, address: session.wallet_address });
      const account = (await accountGet(db, session.account_id))!;
      return { wallets: account.wallets.map(walletView) };
    });

    authed.get('/keys', async (request) => {
      const keys = await keyListByAccount(db, sessionOf(request).account_id);
      const account = await accountOf(request);
      const plan = (await deps.plans()).find((p) => p.name === account.plan);
      return { keys: keys.map((k) => keyView(k)).reverse(), max_keys: plan?.max_keys ?? null };
    });

    // With an Idempotency-Key header, the same header within 24 hours answers the key the first
    // request made (200, Idempotent-Replayed: true, plaintext null: the secret is never stored).
    authed.post('/keys', async (request, reply) => {
      const accountId = sessionOf(request).account_id;
      refuseControlCharacters(request.body, KEY_TEXT);
      const settings = (request.body ?? {}) as never;
      const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key']);
      if (idempotencyKey === undefined) {
        const { key, plaintext } = await keyCreate(db, accountId, settings);
        return reply.code(201).send({ key: keyView(key), plaintext });
      }
      const result = await keyCreateIdempotent(db, accountId, idempotencyKey, settings);
      if (result.replayed) return reply.code(200).header('idempotent-replayed', 'true').send({ key: keyView(result.key), plaintext: null, replayed: true });
      return reply.code(201).send({ key: keyView(result.key), plaintext: result.plaintext });
    });

    const ownedKey = async (request: FastifyRequest): Promise<ApiKey> => {
      const id = (request.params as { id: string }).id;
      const key = (await keyListByAccount(db, sessionOf(request).account_id)).find((k) => k.id === id);
      if (!key) throw new ApiError('NOT_FOUND', 'No key with this id on your account.', { key: id });
      return key;
    };

    // Edit an active key's name, description, servers or expiry (null clears the last three).
    authed.patch('/keys/:id', async (request) => {
      refuseControlCharacters(request.body, KEY_TEXT);
      const key = await keyUpdate(db, sessionOf(request).account_id, (await ownedKey(request)).id, (request.body ?? {}) as never);
      // Servers and expiry are part of what the gateway checks: this pod's cached grants must go.
      deps.keys.clear();
      return { key: keyView(key) };
    });

    authed.post('/keys/:id/revoke', async (request) => {
      const key = await keyRevoke(db, (await ownedKey(request)).id);
      // The gateway caches key lookups briefly; drop this pod's cache so the revocation is immediate here.
      deps.keys.clear();
      return { key: keyView(key) };
    });

    authed.post('/keys/:id/rotate', async (request, reply) => {
      const { grace_seconds } = parseBody(RotateBody, request.body);
      const old = await ownedKey(request);
      const rotated = await keyRotate(db, sessionOf(request).account_id, old.id, grace_seconds);
      deps.keys.clear();
      return reply.code(201).send({ key: keyView(rotated.key), plaintext: rotated.plaintext, replaced: keyView(rotated.replaced) });
    });

    // `days` (last N days) or `from` and `to` (YYYY-MM-DD, UTC, both included).
    authed.get('/usage', async (request) => {
      const range = parseRange(request.query);
      const accountId = sessionOf(request).account_id;
      return { ...(await deps.usage.usage(accountId)), ...range, daily: await usageDaily(db, accountId, range) };
    });

    // What the gateway logged in the range: by day, key, server/tool and error code, with
    // succeeded, failed and rate-limited (429) apart; optionally one key's requests only.
    authed.get('/usage/breakdown', async (request) => {
      const range = parseRange(omit(request.query, 'key'));
      const { key } = parseBody(z.object({ key: z.string().uuid().optional() }), pick(request.query, 'key'));
      return usageBreakdown(db, sessionOf(request).account_id, range, { keyId: key, retentionDays: settings.requestLogRetentionDays });
    });

    // The request log: newest first, filtered by key, server, tool and status, paged by `before`.
    authed.get('/requests', async (request) => {
      const q = parseBody(RequestsQuery, request.query);
      const status = q.status === undefined ? undefined : /^\d{3}$/.test(q.status) ? Number(q.status) : (q.status as 'ok' | 'error' | 'rate_limited');
      return requestLogPage(
        db,
        sessionOf(request).account_id,
        { key_id: q.key, server: q.server, tool: q.tool, status, before: q.before, limit: q.limit },
        settings.requestLogRetentionDays,
      );
    });

    authed.get('/usage.csv', async (request, reply) => {
      const range = parseRange(request.query);
      const csv = await usageCsv(db, sessionOf(request).account_id, range);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="cryptomcp-usage-${range.from}-${range.to}.csv"`)
        .send(csv);
    });

    if (deps.payments) {
      const payments = deps.payments;
      await authed.register(async (paid) =>
        paymentRoutes(paid, { db, payments, plans: deps.plans, accountIdOf: (request) => sessionOf(request).account_id, onCredited: () => deps.keys.clear() }),
      );
    }

    authed.get('/plans', async (request) => {
      const account = await accountOf(request);
      return {
        current: account.plan,
        contact: settings.contact ?? null,
        paid_until: account.paid_until?.toISOString() ?? null,
        // Plans bought to start when the paid time before them ends.
        scheduled: (
          await db.query<{ plan: string; starts_at: Date; ends_at: Date }>('SELECT plan, starts_at, ends_at FROM plan_schedule WHERE account_id = $1 ORDER BY starts_at', [account.id])
        ).rows.map((r) => ({ plan: r.plan, starts_at: r.starts_at.toISOString(), ends_at: r.ends_at.toISOString() })),
        free_allowance: account.free_allowance,
        topup: account.topup,
        // What can be bought, and where it can be paid (empty: payments are off).
        packs: deps.payments?.packs ?? [],
        chains: (deps.payments?.chains ?? []).map((c) => ({
          chain: c.chain,
          chain_id: c.chainId,
          token: c.token,
          decimals: c.decimals,
          confirmations: c.confirmations,
        })),
        plans: (await deps.plans()).map((p) => ({ ...publicPlan(p), display_name: p.display_name, current: p.name === account.plan })),
      };
    });
  });
}

/** The query without one field, and with only that field (the range and key are parsed apart). */
function omit(query: unknown, field: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries((query ?? {}) as Record<string, unknown>).filter(([k]) => k !== field));
}
function pick(query: unknown, field: string): Record<string, unknown> {
  const value = ((query ?? {}) as Record<string, unknown>)[field];
  return value === undefined ? {} : { [field]: value };
}

/** The nonce a message names, read before anything else so it is used up whatever follows. */
function messageNonce(family: WalletFamily, message: string): string | undefined {
  try {
    return family === 'evm' ? parseSiweMessage(message).nonce : (parseSignInMessageText(message)?.nonce ?? undefined);
  } catch {
    return undefined;
  }
}

/** The statement line of a signed sign-in message (what the signer was shown). */
function messageStatement(family: WalletFamily, message: string): string | undefined {
  try {
    return family === 'evm' ? parseSiweMessage(message).statement : (parseSignInMessageText(message)?.statement ?? undefined);
  } catch {
    return undefined;
  }
}

function offerView(offer: WalletOffer, source?: Record<string, unknown>) {
  return {
    id: offer.id,
    kind: offer.kind,
    wallet: { family: offer.family, chain: offer.chain, address: offer.address },
    expires_at: offer.expires_at.toISOString(),
    ...(offer.kind === 'merge' ? { statement: mergeStatement(offer), source: { id: offer.source_account_id, ...source } } : {}),
  };
}

function csrfMatches(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}

async function accountForWallet(db: Database, wallet: { chain: Chain; address: string; contract: boolean }): Promise<{ account: Account; created: boolean }> {
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

function walletView(w: Account['wallets'][number]) {
  return { chain: w.chain, address: w.address, created_at: w.created_at.toISOString() };
}

function sessionView(session: Session, account: Account, created: boolean, allowance: number | null) {
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

function keyView(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    description: k.description,
    prefix: k.prefix,
    servers: k.servers,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    expires_at: k.expires_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
    rotated_from: k.rotated_from,
    status: credentialStatus(k),
  };
}

