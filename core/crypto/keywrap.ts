// Wrapping the per-user data key (DEK) under key-encryption keys (DECISIONS §3): one wrap under a
// password-derived key and one per live credential, derived from that credential's secret.
// A wrap is a sealed value like any other (./seal.ts): new wraps are format v2 (XChaCha20-Poly1305),
// and a v1 wrap (AES-256-GCM, from before issue 29) still unwraps. A credential's v1 wrap cannot be
// re-made without that credential's secret, which the server never keeps: it ends with its
// credential (expiry, revocation, revoke-all, a password change or key rotation), while the password
// wrap is re-made by key rotation, a password change and `cairn reseal` (docs/sealed-format.md).
import { randomBytes } from 'node:crypto';
import { open, seal } from './seal.js';
import { hkdf } from './secrets.js';

export function newDataKey(): Buffer {
  return randomBytes(32);
}

function wrapAad(userId: string, purpose: string): Buffer {
  return Buffer.from(`cairn-dek\0${userId}\0${purpose}`, 'utf8');
}

/** The key-encryption key a credential secret derives; `kind` separates sessions, tokens, grants. */
export function credentialKek(secret: Buffer, kind: string): Buffer {
  return hkdf(secret, `cairn credential kek v1 ${kind}`);
}

export function wrapDataKey(kek: Buffer, userId: string, purpose: string, dek: Buffer): Buffer {
  return seal(kek, wrapAad(userId, purpose), dek);
}

/** Throws SealError when the KEK is wrong or the wrap was moved to another user or purpose. */
export function unwrapDataKey(kek: Buffer, userId: string, purpose: string, wrapped: Buffer): Buffer {
  return open(kek, wrapAad(userId, purpose), wrapped);
}
