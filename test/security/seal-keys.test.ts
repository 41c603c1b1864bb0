// Issue 12: server/crypto/seal.ts builds ciphers from a KeyObject kept per key Buffer (a WeakMap
// on the Buffer itself, from its second use). Whatever the key's history, a blob opens only under
// the key bytes it was sealed with, and another Buffer with the same bytes is the same key.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, seal, SealError } from '../../server/crypto/seal.js';

const aad = Buffer.from('user\0todos\0row');

describe('sealing with the per-Buffer KeyObject', () => {
  it('round-trips on first, second and later uses of a key, and refuses another key at every stage', () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    for (let i = 0; i < 5; i++) {
      const blob = seal(a, aad, Buffer.from(`text ${i}`));
      expect(open(a, aad, blob).toString()).toBe(`text ${i}`);
      expect(() => open(b, aad, blob)).toThrow(SealError);
      expect(() => open(a, Buffer.from('user\0todos\0other'), blob)).toThrow(SealError);
      const other = seal(b, aad, Buffer.from(`other ${i}`));
      expect(() => open(a, aad, other)).toThrow(SealError);
      expect(open(b, aad, other).toString()).toBe(`other ${i}`);
    }
  });

  it('a copy of the key bytes in a new Buffer opens what the original sealed (and the reverse)', () => {
    const a = randomBytes(32);
    const blobs = [0, 1, 2].map((i) => seal(a, aad, Buffer.from(`x${i}`)));
    const copy = Buffer.from(a);
    for (let i = 0; i < 3; i++) expect(open(copy, aad, blobs[i]!).toString()).toBe(`x${i}`);
    const back = [0, 1, 2].map((i) => seal(copy, aad, Buffer.from(`y${i}`)));
    for (let i = 0; i < 3; i++) expect(open(a, aad, back[i]!).toString()).toBe(`y${i}`);
  });

  it('a key of the wrong length is still refused', () => {
    const short = randomBytes(16);
    expect(() => seal(short, aad, Buffer.from('x'))).toThrow();
    const blob = seal(randomBytes(32), aad, Buffer.from('x'));
    expect(() => open(short, aad, blob)).toThrow();
    expect(() => open(short, aad, blob)).toThrow();
  });
});
