// OAuth access tokens at the gateway: a Bearer value that is not an API key is looked up as an
// access token (by its SHA-256) and read as its connection's grant, in the same shape as a key's
// (key_id is the connection's id). The servers it may call are those of the token's audience
// (RFC 8707 resource) that the user approved; the rest of the gateway treats it as a key.
import type { Database } from '../db/pool.ts';
import { KeyResolver, type GrantLookup } from '../keys/resolver.ts';
import { serversOfAudience } from './provider.ts';
import { connectionTouchMany, tokenGrantByHash } from './store.ts';

/** oidc-provider's opaque tokens: 256 random bits, base64url (43 characters); a little slack. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,128}$/;

export function accessTokenLookup(servers: readonly string[]): GrantLookup {
  return {
    wellFormed: (presented) => TOKEN_PATTERN.test(presented),
    load: async (db: Database, hash: Buffer) => {
      const row = await tokenGrantByHash(db, hash);
      if (!row) return undefined;
      const { audience, connection_servers, ...grant } = row;
      const audienceServers = serversOfAudience(audience, servers);
      return { ...grant, key_servers: connection_servers.filter((s) => audienceServers.includes(s)) };
    },
    touch: connectionTouchMany,
  };
}

export function accessTokenResolver(db: Database, servers: readonly string[], opts: { ttlMs: number; now?: () => number; onLookup?: (hit: boolean) => void }): KeyResolver {
  return new KeyResolver(db, { ...opts, lookup: accessTokenLookup(servers) });
}
