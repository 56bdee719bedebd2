// Stage 2 (DESIGN.md §3 row 2): the presented key (x-api-key, or Authorization: Bearer) belongs
// to a live key — or, for a Bearer value that is not an API key, to a live OAuth connection
// (server/oauth/tokens.ts), read as the same grant. An access token is never accepted as
// x-api-key. A key looked up in the database may be traced in the request's span (`around`).
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import type { KeyGrant } from '../keys/store.ts';

export interface Authenticated {
  grant: KeyGrant;
  /** The resolver that found it, which records its use. */
  resolver: KeyResolver;
}

export async function authenticate(
  keys: KeyResolver,
  headers: IncomingHttpHeaders,
  around: (<T>(load: () => T) => T) | undefined,
  tokens?: KeyResolver,
): Promise<Authenticated> {
  const presented = presentedCredential(headers);
  const resolver = tokens && presented?.via === 'bearer' && !presented.value.startsWith('cmcp_') ? tokens : keys;
  const check = await resolver.resolve(presented?.value, around);
  if (check.ok) return { grant: check.grant, resolver };
  // An OAuth access token is never "an API key": a dead one says so in OAuth's terms (RFC 6750 §3.1).
  if (resolver === tokens && check.code !== 'MISSING_API_KEY') {
    const reason = check.code === 'API_KEY_EXPIRED' ? 'expired' : check.code === 'API_KEY_REVOKED' ? 'revoked' : 'unknown';
    throw new ApiError('INVALID_TOKEN', undefined, { reason, ...(check.code === 'API_KEY_EXPIRED' && { expired_at: check.expiredAt.toISOString() }) });
  }
  if (check.code === 'API_KEY_EXPIRED') throw new ApiError(check.code, undefined, { expired_at: check.expiredAt.toISOString() });
  throw new ApiError(check.code);
}

export function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function presentedCredential(headers: IncomingHttpHeaders): { value: string; via: 'x-api-key' | 'bearer' } | undefined {
  const apiKey = singleHeader(headers['x-api-key'])?.trim();
  if (apiKey) return { value: apiKey, via: 'x-api-key' };
  const auth = singleHeader(headers.authorization);
  const match = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return match?.[1] ? { value: match[1], via: 'bearer' } : undefined;
}
