// oidc-provider's storage Adapter, backed by PostgreSQL (oauth_artifacts). Ids are stored as their
// SHA-256 (a token's, code's or session's id is the secret itself) and the payload's copy of the
// id (jti) is removed before storing, so the table holds no usable token or code. Two hooks tie the
// library's grants to our connections: a revoked grant ends its connection, and each refresh
// token issued slides the grant's and the connection's end forward. With the database down every
// endpoint answers 503 temporarily_unavailable (RFC 6749 §4.1.2.1), as /mcp answers 503
// SERVICE_UNAVAILABLE, instead of the library's 500 server_error.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Database } from '../db/pool.ts';
import { DatabaseUnavailableError, isConnectionError } from '../errors.ts';
import { artifactConsume, artifactDestroy, artifactFind, artifactFindByUid, artifactUpsert, grantExtend, grantRevoke, type ArtifactRow } from './store.ts';

export class PgAdapter implements Adapter {
  readonly #db: Database;
  readonly #model: string;
  readonly #onRevoked: (() => void) | undefined;

  /** `onRevoked`: a token or grant was revoked here, so this pod's token cache must forget it now. */
  constructor(model: string, db: Database, onRevoked?: () => void) {
    this.#model = model;
    this.#db = db;
    this.#onRevoked = onRevoked;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti, ...rest } = payload;
    // A Session is also looked up by uid, which cannot give its id back, so it keeps its jti: it
    // is the library's own browser session, which never stands in for our consent (consent.ts).
    const jtiIsId = jti === id && this.#model !== 'Session';
    const stored: Record<string, unknown> = jtiIsId ? rest : { ...payload };
    const grantId = this.#model === 'Grant' ? id : (payload.grantId ?? null);
    const uid = typeof payload.uid === 'string' ? payload.uid : null;
    await available(async () => {
      await artifactUpsert(this.#db, { model: this.#model, id, payload: stored, jtiIsId, grantId, uid, expiresInSeconds: expiresIn });
      if (this.#model === 'RefreshToken' && payload.grantId && expiresIn) await grantExtend(this.#db, payload.grantId, expiresIn);
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return revive(id, await available(() => artifactFind(this.#db, this.#model, id)));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await available(() => artifactFindByUid(this.#db, this.#model, uid));
    return row ? revive(undefined, row) : undefined;
  }

  findByUserCode(): Promise<undefined> {
    // The device flow is off: there are no user codes.
    return Promise.resolve(undefined);
  }

  async consume(id: string): Promise<void> {
    await available(() => artifactConsume(this.#db, this.#model, id));
  }

  async destroy(id: string): Promise<void> {
    await available(() => artifactDestroy(this.#db, this.#model, id));
    if (this.#model === 'AccessToken') this.#onRevoked?.();
  }

  /** Code or refresh token reuse, or a revoked refresh token: everything under the grant ends. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await available(() => grantRevoke(this.#db, grantId, 'grant_revoked'));
    // At once on this pod (the replay came here); other pods within their cache TTL.
    this.#onRevoked?.();
  }
}

function revive(id: string | undefined, row: ArtifactRow | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  const payload = { ...row.payload } as AdapterPayload;
  if (row.jti_is_id && id !== undefined) payload.jti = id;
  if (row.consumed_at) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
  return payload;
}

/** Runs a storage call; a database that cannot be reached becomes the library's own 503 error. */
async function available<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof DatabaseUnavailableError) && !isConnectionError(err)) throw err;
    const unavailable = new errors.CustomOIDCProviderError('temporarily_unavailable', 'The service is temporarily unavailable; retry later.', { cause: err });
    // Still exposed (error and description in the answer), with the status of an outage.
    unavailable.status = 503;
    unavailable.statusCode = 503;
    throw unavailable;
  }
}
