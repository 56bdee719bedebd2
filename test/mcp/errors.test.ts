// The error mapping's net under the input checks: PostgreSQL refusing a character (a NUL, bytes
// that are not UTF-8) is the caller's bad input, answered 400 INVALID_PARAMS, never a 500.
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { toApiError } from '../../server/errors.ts';

describe('toApiError', () => {
  it('maps PostgreSQL refusing a NUL in text to 400 INVALID_PARAMS (the real driver error)', async () => {
    const client = new pg.Client({ connectionString: inject('pgUrl') });
    await client.connect();
    try {
      const err = await client.query('SELECT $1::text', ['a\u0000b']).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeDefined();
      const mapped = toApiError(err);
      expect(mapped.code).toBe('INVALID_PARAMS');
      expect(mapped.status).toBe(400);
    } finally {
      await client.end();
    }
  });

  it('leaves other database errors internal', () => {
    expect(toApiError(Object.assign(new Error('x'), { code: '42P01' })).code).toBe('INTERNAL_ERROR');
  });
});
