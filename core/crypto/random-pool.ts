// CSPRNG bytes cut from a pooled buffer: one randomFillSync per few hundred uses instead of a
// randomBytes call each (a measurable share of a small request, docs/performance.md). Every byte
// is handed out once. Used for request and event ids and for the nonces of sealed values (24 bytes
// each: core/crypto/seal.ts).
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(8192);
let at = pool.length;

/**
 * `n` fresh random bytes (n ≤ 8192) as a view into the pool: copy or consume them before the next
 * call (everything here is synchronous), never keep the view.
 */
export function randomSlice(n: number): Buffer {
  if (at + n > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const out = pool.subarray(at, at + n);
  at += n;
  return out;
}
