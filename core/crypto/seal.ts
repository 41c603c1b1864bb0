// Sealing of content (DECISIONS §3; docs/sealed-format.md). Every sealed value is a versioned blob;
// every write seals v2:
//   v2: 0x02 || nonce(24) || XChaCha20-Poly1305-IETF ciphertext || tag(16)      (libsodium)
//   v1: 0x01 || nonce(12) || tag(16) || AES-256-GCM ciphertext                  (read only: ./seal-v1.ts)
// and the AAD binds it to its owner, table and row, so ciphertext copied to another row (or
// another user's row, or another table) fails to open. Every open and seal of the project comes
// through here, so a data directory written before v2 keeps opening without a step.
//
// Why libsodium (issue 29): node:crypto's per-decipher cost (a createDecipheriv, its native handle
// and the GC work it leaves) held a page of 50 rows to 57-66 % of the plaintext baseline; libsodium
// opens into a buffer we allocate, with no object per call. XChaCha20-Poly1305's 192-bit random
// nonces also end AES-GCM's per-key budget of random 96-bit nonces.
//
// Key material: the key Buffer (a request's data key, a credential's wrapping key) is handed to
// libsodium in place (sodium-native reads the typed array's own memory, no copy). libsodium derives
// the XChaCha subkey and the Poly1305 key on its stack and zeroes both (sodium_memzero) before it
// returns, so no copy of a key outlives the call on libsodium's side; the Buffer itself lives as
// long as the request that unwrapped it (routers/auth/credentials.ts), as before.
import sodium from 'sodium-native';
import { randomSlice } from './random-pool.js';
import { legacyWrites, openV1, sealV1, V1 } from './seal-v1.js';

const { crypto_aead_xchacha20poly1305_ietf_encrypt: encrypt, crypto_aead_xchacha20poly1305_ietf_decrypt: decrypt } = sodium;

const V2 = 2;
const NONCE = 24;
const TAG = 16;
const HEADER = 1 + NONCE;
const OVERHEAD = HEADER + TAG;

export class SealError extends Error {
  constructor() {
    super('sealed value failed to open');
    this.name = 'SealError';
  }
}

/** The AAD of a sealed row: user id, table and row id, unambiguous (NUL-separated). */
export function rowAad(userId: string, table: string, rowId: string): Buffer {
  return Buffer.from(`${userId}\0${table}\0${rowId}`, 'utf8');
}

export function seal(key: Buffer, aad: Buffer, plaintext: Buffer): Buffer {
  if (key.length !== 32) throw new Error('seal: key must be 32 bytes');
  if (legacyWrites.on) return sealV1(key, aad, plaintext);
  // One allocation: the blob itself. The nonce is 24 fresh random bytes from the pooled CSPRNG
  // (copied into the blob at once); libsodium writes ciphertext and tag straight after it.
  const out = Buffer.allocUnsafe(OVERHEAD + plaintext.length);
  out[0] = V2;
  randomSlice(NONCE).copy(out, 1);
  const ab = out.buffer;
  const at = out.byteOffset;
  encrypt(new Uint8Array(ab, at + HEADER, plaintext.length + TAG), plaintext, aad, null, new Uint8Array(ab, at + 1, NONCE), key);
  return out;
}

export function open(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array): Buffer {
  const len = blob.byteLength;
  const version = blob[0];
  if (version === V2 && len >= OVERHEAD && key.length === 32) {
    // The plaintext goes into one buffer allocated here; nonce and ciphertext are plain
    // Uint8Array views at the blob's own offset (issue 12: no Buffer#subarray per view).
    return openV2(key, aad, blob, Buffer.allocUnsafe(len - OVERHEAD));
  }
  if (version === V1) {
    const out = openV1(key, aad, blob);
    if (out) return out;
  }
  // Too short, an unknown version, or it does not open under this key and AAD.
  throw new SealError();
}

/**
 * `open` into a buffer the caller reuses (one allocation for many opens instead of one each: the
 * dead plaintexts of a whole-account read are external memory the GC frees late, issue 29's peak
 * RSS). The plaintext is a view of `into`; the caller zeroes `into` when the request is done with
 * it (nothing decrypted outlives its request). A blob that is not v2, or longer than `into`, is
 * opened as `open` does.
 */
export function openInto(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array, into: Buffer): Buffer {
  const len = blob.byteLength;
  if (blob[0] !== V2 || len < OVERHEAD || key.length !== 32 || into.length < len - OVERHEAD) return open(key, aad, blob);
  return openV2(key, aad, blob, into.subarray(0, len - OVERHEAD));
}

/** A v2 blob's plaintext into `out` (its exact length). */
function openV2(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array, out: Buffer): Buffer {
  const ab = blob.buffer;
  const at = blob.byteOffset;
  try {
    decrypt(out, null, new Uint8Array(ab, at + HEADER, blob.byteLength - HEADER), aad, new Uint8Array(ab, at + 1, NONCE), key);
  } catch {
    throw new SealError();
  }
  return out;
}

/** The plaintext length of a v2 blob (for sizing `openInto`'s buffer), or 0. */
export function plainLength(blob: Buffer | Uint8Array): number {
  return blob[0] === V2 && blob.byteLength >= OVERHEAD ? blob.byteLength - OVERHEAD : 0;
}

export function sealJson(key: Buffer, aad: Buffer, value: unknown): Buffer {
  return seal(key, aad, Buffer.from(JSON.stringify(value), 'utf8'));
}

export function openJson<T>(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array): T {
  return JSON.parse(open(key, aad, blob).toString('utf8')) as T;
}

/** The format version of a sealed blob (1 or 2), or null for anything else (reseal, the tests). */
export function sealedVersion(blob: Buffer | Uint8Array): 1 | 2 | null {
  const v = blob[0];
  return v === V1 || v === V2 ? v : null;
}
