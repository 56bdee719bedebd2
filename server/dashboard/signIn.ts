// What signing a message with a wallet goes through, for a sign-in (routes/sessions.ts) and for a
// wallet link or merge (routes/wallets.ts): the nonce limiter, the per-client, per-wallet and
// service-wide budgets, and the message's verification. One set of limiters per API, so a link
// spends the same budget as a sign-in.
import { parseSignInMessageText } from '@solana/wallet-standard-util';
import type { FastifyRequest } from 'fastify';
import { parseSiweMessage } from 'viem/siwe';
import { z } from 'zod';
import { contractChainMismatch, type Chain } from '../accounts/accounts.ts';
import type { DashboardConfig } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { Limiter, retryAfterSeconds } from '../lib/limiter.ts';
import type { PublicOrigins } from '../origin.ts';
import type { EvmNetwork } from '../providers/evm/chains.ts';
import { attemptCountRecent, attemptRecord, nonceConsume, type WalletFamily } from './store.ts';
import { checkSiweMessage, signInClients, verifySiweSignature, verifySolanaSignIn, type Expectation, type RefusalReason } from './verify.ts';

export const SignInBody = z.object({
  family: z.enum(['evm', 'solana']),
  message: z.string().min(1).max(4000),
  // EIP-1271 / ERC-6492 signatures can be long; base64 ed25519 signatures are 88 characters.
  signature: z.string().min(1).max(20_000),
});

export type SignedWallet = { family: WalletFamily; chain: Chain; address: string; contract: boolean };

type SignInSettings = Pick<DashboardConfig, 'signInLimit' | 'signInWindowSeconds' | 'signInWalletLimit' | 'signInGlobalLimit' | 'nonceTtlSeconds'>;

/** 429 RATE_LIMITED with its bound and a Retry-After. */
function rateLimited(message: string, bound: { limit: number; window_seconds: number }, retry: number, scope?: 'service' | 'wallet'): ApiError {
  return new ApiError('RATE_LIMITED', message, { ...bound, retry_after_seconds: retry, ...(scope ? { scope } : {}) }, { 'retry-after': String(retry) });
}

/** An onRequest hook for the routes that issue nonces (one instance for all of them). */
export type NonceLimit = (request: FastifyRequest) => Promise<void>;

/**
 * Nonces are issued before anyone has proved anything, so their issuance is limited per client
 * address too: per minute, twice the sign-in budget (at least 30). In memory, per pod: it only
 * guards the table against floods; the sign-in budget that matters is the PostgreSQL-wide one.
 */
export function nonceRateLimit(signInLimit: number): NonceLimit {
  const max = Math.max(30, signInLimit * 2);
  const limiter = Limiter.perWindow(max, 60_000);
  return async (request) => {
    const taken = limiter.take(`${request.routeOptions.url}|${request.ip}`);
    if (taken.ok) return;
    throw rateLimited('Too many sign-in nonces requested from this address; retry later.', { limit: max, window_seconds: 60 }, retryAfterSeconds(taken.retryAfterMs));
  };
}

/** A nonce as the page gets it, with what its signed message must name. */
export function nonceView(issued: { nonce: string; expires_at: Date }, origins: PublicOrigins) {
  return { nonce: issued.nonce, expires_at: issued.expires_at.toISOString(), domain: new URL(origins.dashboard).host, uri: origins.dashboard };
}

export interface SignIn {
  /**
   * Refuses a client past its sign-in budget (counted in PostgreSQL, so shared by every pod), and
   * everyone once this pod has taken the window's sign-in attempts from all clients together. Only
   * attempts within their client's budget count toward the shared one: one client hammering past
   * its own limit cannot lock everyone else out.
   */
  budget(request: FastifyRequest): Promise<void>;
  /**
   * Verifies a signed sign-in message: the nonce is consumed first (single use, even when the
   * signature then fails), then the fields and the signature are checked.
   */
  verify(
    request: FastifyRequest,
    body: z.infer<typeof SignInBody>,
    nonceScope: { purpose: 'sign_in'; cookieNonce: string | undefined } | { purpose: 'link'; sessionId: string },
  ): Promise<SignedWallet>;
  /** Refuses a wallet proved more often than its budget (counted once its signature verified, so no one can spend another's). */
  walletBudget(request: FastifyRequest, wallet: { family: WalletFamily; address: string }): Promise<void>;
}

export function signIn(deps: {
  db: Database;
  settings: SignInSettings;
  /** The dashboard's origin, which sign-in messages must name: configured, never the request's Host, which a phishing page chooses. */
  origins: PublicOrigins;
  evm: { rpcUrls: Record<EvmNetwork, string>; timeoutMs: number };
}): SignIn {
  const { db, settings, origins } = deps;
  const evmClient = signInClients(deps.evm.rpcUrls, deps.evm.timeoutMs);
  // Behind a proxy the client address is what X-Forwarded-For says; a pod reachable directly lets
  // anyone rotate it. These two bounds hold whatever it says (in memory, per pod).
  const signInWindowMs = settings.signInWindowSeconds * 1000;
  const walletSignIns = Limiter.perWindow(settings.signInWalletLimit, signInWindowMs);
  const allSignIns = Limiter.perWindow(settings.signInGlobalLimit, signInWindowMs, { maxKeys: 1 });

  return {
    async budget(request) {
      const recent = await attemptCountRecent(db, request.ip, settings.signInWindowSeconds);
      if (recent.count >= settings.signInLimit) {
        await attemptRecord(db, { client: request.ip, outcome: 'rate_limited' });
        const oldest = recent.oldest?.getTime() ?? Date.now();
        const retry = Math.max(1, Math.ceil((oldest + settings.signInWindowSeconds * 1000 - Date.now()) / 1000));
        throw rateLimited('Too many sign-in attempts from this address; retry later.', { limit: settings.signInLimit, window_seconds: settings.signInWindowSeconds }, retry);
      }
      const global = allSignIns.take('all');
      if (global.ok) return;
      throw rateLimited(
        'Too many sign-in attempts on this service right now; retry later.',
        { limit: settings.signInGlobalLimit, window_seconds: settings.signInWindowSeconds },
        retryAfterSeconds(global.retryAfterMs),
        'service',
      );
    },

    async verify(request, body, nonceScope) {
      const refuse = async (reason: RefusalReason | 'nonce_unknown' | 'nonce_used' | 'nonce_expired', address?: string): Promise<never> => {
        await attemptRecord(db, { client: request.ip, family: body.family, address, outcome: 'refused', reason });
        throw new ApiError('SIGN_IN_REJECTED', undefined, { reason });
      };
      const nonce = messageField(body.family, body.message, 'nonce');
      if (!nonce) return refuse('malformed_message');
      if (nonceScope.purpose === 'sign_in' && nonceScope.cookieNonce !== nonce) return refuse('nonce_mismatch');
      const claimed = await nonceConsume(db, {
        nonce,
        purpose: nonceScope.purpose,
        sessionId: nonceScope.purpose === 'link' ? nonceScope.sessionId : undefined,
      });
      if (!claimed.ok) return refuse(claimed.reason);
      const expect: Expectation = {
        domain: new URL(origins.dashboard).host,
        origin: origins.dashboard,
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
    },

    async walletBudget(request, wallet) {
      const taken = walletSignIns.take(`${wallet.family}:${wallet.address}`);
      if (taken.ok) return;
      await attemptRecord(db, { client: request.ip, family: wallet.family, address: wallet.address, outcome: 'rate_limited', reason: 'wallet' });
      throw rateLimited(
        'Too many sign-ins with this wallet; retry later.',
        { limit: settings.signInWalletLimit, window_seconds: settings.signInWindowSeconds },
        retryAfterSeconds(taken.retryAfterMs),
        'wallet',
      );
    },
  };
}

/**
 * A field of a signed sign-in message: its nonce (read before anything else so it is used up
 * whatever follows) or its statement line (what the signer was shown).
 */
export function messageField(family: WalletFamily, message: string, field: 'nonce' | 'statement'): string | undefined {
  try {
    return family === 'evm' ? parseSiweMessage(message)[field] : (parseSignInMessageText(message)?.[field] ?? undefined);
  } catch {
    return undefined;
  }
}
