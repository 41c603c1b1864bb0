// AES-256-GCM sealing of content (DECISIONS §3). A sealed blob is
//   version(1) || nonce(12) || tag(16) || ciphertext
// and the AAD binds it to its owner, table and row, so ciphertext copied to another row (or
// another user's row) fails to open.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { randomSlice } from './random-pool.js';

const VERSION = 1;
const NONCE = 12;
const TAG = 16;
const HEADER = 1 + NONCE + TAG;

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
  // A fresh random 96-bit nonce per seal (from the pooled CSPRNG; the view is copied at once).
  const nonce = Buffer.from(randomSlice(NONCE));
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG });
  cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  cipher.final(); // GCM yields no bytes at final(); it computes the tag
  const out = Buffer.allocUnsafe(HEADER + body.length);
  out[0] = VERSION;
  nonce.copy(out, 1);
  cipher.getAuthTag().copy(out, 1 + NONCE);
  body.copy(out, HEADER);
  return out;
}

/** The decipher options of every open (one object, not one per row). */
const OPEN_OPTIONS = { authTagLength: TAG } as const;

export function open(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array): Buffer {
  const len = blob.byteLength;
  if (len < HEADER || blob[0] !== VERSION) throw new SealError();
  // Nonce, tag and ciphertext as plain Uint8Array views of the blob (issue 12: a page opens 50
  // rows; Buffer#subarray builds each view through the species constructor, ~2-4% of an open).
  const ab = blob.buffer;
  const at = blob.byteOffset;
  const decipher = createDecipheriv('aes-256-gcm', key, new Uint8Array(ab, at + 1, NONCE), OPEN_OPTIONS);
  decipher.setAAD(aad);
  decipher.setAuthTag(new Uint8Array(ab, at + 1 + NONCE, TAG));
  try {
    // GCM's final() only checks the tag (it yields no bytes): no concatenation of the two parts.
    const out = decipher.update(new Uint8Array(ab, at + HEADER, len - HEADER));
    decipher.final();
    return out;
  } catch {
    throw new SealError();
  }
}

export function sealJson(key: Buffer, aad: Buffer, value: unknown): Buffer {
  return seal(key, aad, Buffer.from(JSON.stringify(value), 'utf8'));
}

export function openJson<T>(key: Buffer, aad: Buffer, blob: Buffer | Uint8Array): T {
  return JSON.parse(open(key, aad, blob).toString('utf8')) as T;
}
