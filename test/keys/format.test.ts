import { describe, expect, it } from 'vitest';
import { displayPrefix, generateKey, hashKey, isWellFormedKey, KEY_LENGTH } from '../../server/keys/format.ts';

describe('API key format', () => {
  it('generates cmcp_ + 32 base62 characters + a 6-character base62 checksum', () => {
    const { plaintext, hash, prefix } = generateKey();
    expect(plaintext).toMatch(/^cmcp_[0-9A-Za-z]{38}$/);
    expect(plaintext).toHaveLength(KEY_LENGTH);
    expect(isWellFormedKey(plaintext)).toBe(true);
    expect(hash.equals(hashKey(plaintext))).toBe(true);
    expect(hash).toHaveLength(32);
    expect(prefix).toBe(plaintext.slice(0, 11));
    expect(displayPrefix(plaintext)).toBe(prefix);
  });

  it('never repeats a key across many generations', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateKey().plaintext));
    expect(keys.size).toBe(2000);
  });

  it('rejects every single-character change offline (the checksum catches look-alikes)', () => {
    const { plaintext } = generateKey();
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let accepted = 0;
    for (let i = 5; i < plaintext.length; i++) {
      for (const c of alphabet) {
        if (c === plaintext[i]) continue;
        const mutated = plaintext.slice(0, i) + c + plaintext.slice(i + 1);
        if (isWellFormedKey(mutated)) accepted++;
      }
    }
    expect(accepted).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['wrong prefix', 'sk_live_0123456789abcdefghijklmnopqrstuvwxyzAB'],
    ['too short', 'cmcp_abc'],
    ['non-base62 character', `cmcp_${'a'.repeat(31)}-000000`],
    ['trailing space', `${generateKey().plaintext} `],
  ])('rejects a malformed key: %s', (_label, candidate) => {
    expect(isWellFormedKey(candidate)).toBe(false);
  });
});
