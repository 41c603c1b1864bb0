// core/crypto/random-pool.ts hands out pooled CSPRNG bytes (request/event ids, sealing nonces).
// A byte handed out twice would repeat a nonce under the same key: every slice must be fresh,
// across refills of the pool too.
import { describe, expect, it } from 'vitest';
import { randomSlice } from '../../core/crypto/random-pool.js';
import { seal } from '../../core/crypto/seal.js';

describe('the random pool', () => {
  it('never hands out the same bytes twice, across several refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) seen.add(randomSlice(12).toString('hex')); // 36 kB: four refills
    expect(seen.size).toBe(3000);
  });

  it('gives every sealed value its own nonce', () => {
    const key = Buffer.alloc(32, 7);
    const nonces = new Set<string>();
    for (let i = 0; i < 2000; i++) nonces.add(seal(key, Buffer.from('aad'), Buffer.from('same text')).subarray(1, 13).toString('hex'));
    expect(nonces.size).toBe(2000);
  });
});
