// Stage 2 (DESIGN.md §3 row 2): the presented key (x-api-key, or Authorization: Bearer) belongs
// to a live key. A key looked up in the database may be traced in the request's span (`around`).
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors.ts';
import type { KeyResolver } from '../keys/resolver.ts';
import type { KeyGrant } from '../keys/store.ts';

export async function authenticate(
  keys: KeyResolver,
  headers: IncomingHttpHeaders,
  around: (<T>(load: () => T) => T) | undefined,
): Promise<KeyGrant> {
  const check = await keys.resolve(presentedKey(headers), around);
  if (check.ok) return check.grant;
  if (check.code === 'API_KEY_EXPIRED') throw new ApiError(check.code, undefined, { expired_at: check.expiredAt.toISOString() });
  throw new ApiError(check.code);
}

export function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const apiKey = singleHeader(headers['x-api-key'])?.trim();
  if (apiKey) return apiKey;
  const auth = singleHeader(headers.authorization);
  const match = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return match?.[1];
}
