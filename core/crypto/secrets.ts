// Credential secrets (DECISIONS §3): 32 random bytes, found by SHA-256, compared in constant time,
// never stored or logged. A credential's secret also derives (HKDF-SHA256) the key that wraps the
// user's data key for that credential.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function newSecret(): Buffer {
  return randomBytes(32);
}

export function sha256(data: Buffer | string): Buffer {
  return createHash('sha256').update(data).digest();
}

export function hmacSha256(key: Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

const BLOCK_1 = Buffer.of(1);

/**
 * HKDF-SHA256 (RFC 5869) to a 32-byte key. `info` names the purpose so keys never cross uses.
 * 32 bytes is one expand block, so this is HMAC(HMAC(salt, ikm), info || 0x01), computed with
 * node:crypto's HMAC; an empty salt is HashLen zero bytes, which HMAC pads to the same key. Same
 * output as `hkdfSync` (test/security/hkdf.test.ts checks both and the RFC's vectors) at about
 * half its cost: `hkdfSync` builds KeyObjects on every call, and every request pays one of these.
 */
export function hkdf(ikm: Buffer, info: string | Buffer, salt: Buffer | string = ''): Buffer {
  const prk = createHmac('sha256', salt).update(ikm).digest();
  return createHmac('sha256', prk).update(info).update(BLOCK_1).digest();
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) {
    // Still spend the comparison so length mismatches do not return measurably faster.
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** base64url without padding, the wire form of every secret. */
export function toB64u(buf: Buffer): string {
  return buf.toString('base64url');
}

export function fromB64u(s: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  return Buffer.from(s, 'base64url');
}
