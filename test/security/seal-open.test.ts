// core/crypto/seal.ts open(): the blob's nonce, tag and ciphertext are read through views at the
// blob's own offset (issue 12), so a blob that is a window into a larger buffer (SQLite's, a pool
// slice, a plain Uint8Array) opens exactly like a standalone one, and every malformed or altered
// blob still fails with SealError.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { open, openJson, rowAad, seal, sealJson, SealError } from '../../core/crypto/seal.js';

const key = randomBytes(32);
const aad = rowAad('U1', 'todos', 'T1');

/** The blob copied into the middle of a bigger buffer, as a view with a non-zero offset. */
function windowed(blob: Buffer, before = 7, after = 5): Buffer {
  const big = Buffer.alloc(before + blob.length + after, 0xab);
  blob.copy(big, before);
  return big.subarray(before, before + blob.length);
}

describe('open', () => {
  it('opens a standalone blob, a window into a larger buffer and a plain Uint8Array alike', () => {
    const value = { title: 'Ünïcode ✓', notes: 'x'.repeat(300) };
    const blob = sealJson(key, aad, value);
    expect(openJson(key, aad, blob)).toEqual(value);
    const w = windowed(blob);
    expect(w.byteOffset).toBeGreaterThan(0);
    expect(openJson(key, aad, w)).toEqual(value);
    const u8 = new Uint8Array(w.buffer, w.byteOffset, w.byteLength);
    expect(Buffer.isBuffer(u8)).toBe(false);
    expect(openJson(key, aad, u8)).toEqual(value);
    // The empty plaintext too.
    expect(open(key, aad, windowed(seal(key, aad, Buffer.alloc(0)))).length).toBe(0);
  });

  it('refuses short, wrongly versioned, altered or misbound blobs (SealError), windowed or not', () => {
    const blob = sealJson(key, aad, { title: 'secret' });
    const variants: [string, Buffer][] = [
      ['too short for the header', blob.subarray(0, 28)],
      // (2 is format v2 since issue 29; test/security/sealed-v2.test.ts covers the versions.)
      ['unknown version', Buffer.concat([Buffer.from([3]), blob.subarray(1)])],
      // Flipped, not set: a random nonce byte may already hold any fixed value.
      ['altered nonce', (() => { const b = Buffer.from(blob); b[1] = b[1]! ^ 1; return b; })()],
      ['altered tag', (() => { const b = Buffer.from(blob); b[20] = b[20]! ^ 1; return b; })()],
      ['altered ciphertext', (() => { const b = Buffer.from(blob); b[b.length - 1] = b[b.length - 1]! ^ 1; return b; })()],
      ['truncated ciphertext', blob.subarray(0, blob.length - 1)],
    ];
    for (const [name, b] of variants) {
      expect(() => open(key, aad, b), name).toThrow(SealError);
      expect(() => open(key, aad, windowed(b)), `${name} (windowed)`).toThrow(SealError);
    }
    // Another row's AAD or another key.
    expect(() => open(key, rowAad('U1', 'todos', 'T2'), windowed(blob))).toThrow(SealError);
    expect(() => open(randomBytes(32), aad, windowed(blob))).toThrow(SealError);
    // The bytes around a window are never read: a window over a longer sealed buffer still opens only its own bytes.
    const longer = Buffer.concat([blob, Buffer.from([1, 2, 3])]);
    expect(() => open(key, aad, longer)).toThrow(SealError);
    expect(openJson(key, aad, longer.subarray(0, blob.length))).toEqual({ title: 'secret' });
  });
});
