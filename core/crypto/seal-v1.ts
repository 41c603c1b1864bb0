// Sealed format v1 (before issue 29; docs/sealed-format.md "v1"): AES-256-GCM through node:crypto,
//   version(1) || nonce(12) || tag(16) || ciphertext
// with the same AAD as v2. Nothing writes v1 any more: `seal` (./seal.ts) opens these blobs, which
// stay on disk until a write, a key rotation or `cairn reseal` replaces them. The sealing half is
// kept, byte for byte the code that wrote every v1 blob, so the tests can build a data directory
// as that code left it (through the real models, never hand-made bytes): `legacyWrites`.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { randomSlice } from './random-pool.js';

export const V1 = 1;
const NONCE = 12;
const TAG = 16;
export const V1_HEADER = 1 + NONCE + TAG;

/**
 * Tests only (test/security/sealed-v2.test.ts, test/security/reseal.process.test.ts): while `on`
 * is true, `seal` writes v1 blobs, as every release before issue 29 did. Nothing in the server
 * sets it.
 */
export const legacyWrites = { on: false };

/** Today's v1 seal, unchanged (only reachable through `legacyWrites`). */
export function sealV1(key: Buffer, aad: Buffer, plaintext: Buffer): Buffer {
  // A fresh random 96-bit nonce per seal (from the pooled CSPRNG; the view is copied at once).
  const nonce = Buffer.from(randomSlice(NONCE));
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG });
  cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  cipher.final(); // GCM yields no bytes at final(); it computes the tag
  const out = Buffer.allocUnsafe(V1_HEADER + body.length);
  out[0] = V1;
  nonce.copy(out, 1);
  cipher.getAuthTag().copy(out, 1 + NONCE);
  body.copy(out, V1_HEADER);
  return out;
}

/** The decipher options of every open (one object, not one per row). */
const OPEN_OPTIONS = { authTagLength: TAG } as const;

/** Opens a v1 blob (its version byte already checked by the caller); false when it does not open. */
export function openV1(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array): Buffer | false {
  const len = blob.byteLength;
  if (len < V1_HEADER) return false;
  // Nonce, tag and ciphertext as plain Uint8Array views of the blob (issue 12: a page opens 50
  // rows; Buffer#subarray builds each view through the species constructor, ~2-4% of an open).
  const ab = blob.buffer;
  const at = blob.byteOffset;
  const decipher = createDecipheriv('aes-256-gcm', key, new Uint8Array(ab, at + 1, NONCE), OPEN_OPTIONS);
  decipher.setAAD(aad);
  decipher.setAuthTag(new Uint8Array(ab, at + 1 + NONCE, TAG));
  try {
    // GCM's final() only checks the tag (it yields no bytes): no concatenation of the two parts.
    const out = decipher.update(new Uint8Array(ab, at + V1_HEADER, len - V1_HEADER));
    decipher.final();
    return out;
  } catch {
    return false;
  }
}
