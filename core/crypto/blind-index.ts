// A blind index (DECISIONS §3): HMAC-SHA256 of a normalised value under a key derived from the
// user's data key, so uniqueness can be enforced without storing the value.
import { hkdf, hmacSha256 } from './secrets.js';

export function blindIndex(dek: Buffer, purpose: string, normalised: string): Buffer {
  return hmacSha256(hkdf(dek, `cairn blind index v1 ${purpose}`), normalised);
}

/** Tag names match case- and width-insensitively (NFKC, lower case). */
export function normaliseTagName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

export function tagNameIndex(dek: Buffer, name: string): Buffer {
  return blindIndex(dek, 'tag name', normaliseTagName(name));
}

/** Spec §4.2: stored idempotent answers are found by a blind index of their key. */
export function idempotencyKeyIndex(dek: Buffer, key: string): Buffer {
  return blindIndex(dek, 'idempotency key', key);
}
