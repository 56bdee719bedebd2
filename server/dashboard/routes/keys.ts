// An account's API keys: list, create (idempotent with an Idempotency-Key), edit, revoke and
// rotate. They go through server/keys/store.ts, the gateway's own code, so a key made here works
// on /mcp at once, and each change drops this pod's cached grants.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Plan } from '../../accounts/plans.ts';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import type { KeyResolver } from '../../keys/resolver.ts';
import { keyCreate, keyListByAccount, keyRevoke, keyRotate, keyUpdate, type ApiKey } from '../../keys/store.ts';
import { refuseControlCharacters } from '../../lib/text.ts';
import { parseBody } from '../body.ts';
import { credentialStatus } from '../../lib/credentials.ts';
import { keyCreateIdempotent, parseIdempotencyKey } from '../idempotency.ts';
import { accountOf, sessionOf } from '../session.ts';

/** A key's name is one line; its description may have line breaks. */
const KEY_TEXT = { name: 'line', description: 'text' } as const;

const RotateBody = z.object({ grace_seconds: z.number().int().min(0).max(30 * 86400) });

export function keyRoutes(authed: FastifyInstance, deps: { db: Database; plans: () => Promise<Plan[]>; keys: KeyResolver }): void {
  const { db } = deps;

  authed.get('/keys', async (request) => {
    const keys = await keyListByAccount(db, sessionOf(request).account_id);
    const account = await accountOf(db, request);
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
