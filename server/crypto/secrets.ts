// Credential secrets (DECISIONS §3): 32 random bytes, found by SHA-256, compared in constant time,
// never stored or logged. A credential's secret also derives (HKDF-SHA256) the key that wraps the
// user's data key for that credential.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export function newSecret(): Buffer {
  return randomBytes(32);
}

export function sha256(data: Buffer | string): Buffer {
  return createHash('sha256').update(data).digest();
}

export function hmacSha256(key: Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** HKDF-SHA256 to a 32-byte key. `info` names the purpose so keys never cross uses. */
export function hkdf(ikm: Buffer, info: string, salt: Buffer | string = ''): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));
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
