// API key format (DESIGN.md §5): `cmcp_` + 32 random base62 characters + a 6-character base62
// CRC32 of those 32 characters. The checksum lets us (and secret scanners) reject look-alikes
// offline, before any database lookup. Only the SHA-256 of the whole key is stored.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'cmcp_';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const KEY_PATTERN = /^cmcp_[0-9A-Za-z]{38}$/;

function base62(n: number, width: number): string {
  let out = '';
  let rest = n;
  while (rest > 0) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export interface NewKey {
  plaintext: string;
  hash: Buffer;
  prefix: string;
}

export function generateKey(): NewKey {
  const body = randomBase62(BODY_LENGTH);
  const plaintext = PREFIX + body + checksum(body);
  return { plaintext, hash: hashKey(plaintext), prefix: displayPrefix(plaintext) };
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedKey(candidate: string): boolean {
  if (candidate.length !== KEY_LENGTH || !KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return candidate.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

export function hashKey(plaintext: string): Buffer {
  return createHash('sha256').update(plaintext).digest();
}

/** What the dashboard and CLI show to identify a key: the prefix and first 6 random characters. */
export function displayPrefix(plaintext: string): string {
  return plaintext.slice(0, PREFIX.length + 6);
}
