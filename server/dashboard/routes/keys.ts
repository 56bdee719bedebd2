// An account's API keys: list, create (idempotent with an Idempotency-Key), edit, revoke and
// rotate, pause and resume. They go through server/keys/store.ts, the gateway's own code, so a key
// made here works on /mcp at once, and each change drops this pod's cached grants. Each change is
// written to the audit log in the same transaction.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Plan } from '../../accounts/plans.ts';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import type { KeyResolver } from '../../keys/resolver.ts';
import { keyCreate, keyListByAccount, keyRevoke, keyRotate, keySetPaused, keyUpdate, type ApiKey } from '../../keys/store.ts';
import { refuseControlCharacters } from '../../lib/text.ts';
import { parseBody } from '../body.ts';
import { credentialStatus } from '../../lib/credentials.ts';
import { audited } from '../audit.ts';
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
      const { key, plaintext } = await audited(
        db,
        request,
        (tx) => keyCreate(tx, accountId, settings),
        ({ key: k }) => ({ action: 'key_create', target: k.id, details: { name: k.name, ...controlsOf(k) } }),
      );
      return reply.code(201).send({ key: keyView(key), plaintext });
    }
    const result = await audited(
      db,
      request,
      (tx) => keyCreateIdempotent(tx, accountId, idempotencyKey, settings),
      (r) => (r.replayed ? null : { action: 'key_create', target: r.key.id, details: { name: r.key.name, ...controlsOf(r.key) } }),
    );
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
    const id = (await ownedKey(request)).id;
    const key = await audited(
      db,
      request,
      (tx) => keyUpdate(tx, sessionOf(request).account_id, id, (request.body ?? {}) as never),
      (k) => ({ action: 'key_update', target: k.id, details: { name: k.name, changed: Object.keys((request.body ?? {}) as object), ...controlsOf(k) } }),
    );
    // Servers, expiry and read-only are part of what the gateway checks: this pod's cached grants must go.
    deps.keys.clear();
    return { key: keyView(key) };
  });

  authed.post('/keys/:id/revoke', async (request) => {
    const id = (await ownedKey(request)).id;
    const key = await audited(db, request, (tx) => keyRevoke(tx, id), (k) => ({ action: 'key_revoke', target: k.id, details: { name: k.name } }));
    // The gateway caches key lookups briefly; drop this pod's cache so the revocation is immediate here.
    deps.keys.clear();
    return { key: keyView(key) };
  });

  // Pause and resume: enforced by the metering statement itself, so on every replica at once.
  for (const [path, paused] of [['pause', true], ['resume', false]] as const) {
    authed.post(`/keys/:id/${path}`, async (request) => {
      const id = (await ownedKey(request)).id;
      const key = await audited(
        db,
        request,
        (tx) => keySetPaused(tx, sessionOf(request).account_id, id, paused),
        (k) => ({ action: paused ? 'key_pause' : 'key_resume', target: k.id, details: { name: k.name } }),
      );
      return { key: keyView(key) };
    });
  }

  authed.post('/keys/:id/rotate', async (request, reply) => {
    const { grace_seconds } = parseBody(RotateBody, request.body);
    const old = await ownedKey(request);
    const rotated = await audited(
      db,
      request,
      (tx) => keyRotate(tx, sessionOf(request).account_id, old.id, grace_seconds),
      (r) => ({ action: 'key_rotate', target: r.key.id, details: { replaced: old.id, grace_seconds } }),
    );
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
    paused: k.paused_at !== null,
    paused_at: k.paused_at?.toISOString() ?? null,
    ...controlsOf(k),
    // Counted while a cap is set, for the period that started at cap_window.
    cap_spent: k.credit_cap !== null && k.cap_window !== null && k.cap_window.getTime() >= capWindowStart(k.cap_period, new Date()) ? k.cap_spent : 0,
  };
}

function controlsOf(k: ApiKey) {
  return { read_only: k.read_only, credit_cap: k.credit_cap, cap_period: k.cap_period, rate_limit_per_minute: k.rate_limit_per_minute };
}

/** The start of the cap's current period (UTC), as key_cap_window computes it in SQL. */
function capWindowStart(period: 'day' | 'month', now: Date): number {
  return period === 'day' ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) : Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}
