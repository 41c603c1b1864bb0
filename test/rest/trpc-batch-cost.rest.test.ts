// Issue 28 item 5 (docs/api.md "Rate limits"): a /trpc batch costs the edge bucket one token per
// call however its path is spelt. The adapters percent-decode the path before splitting it at
// commas, read `batch` decoded, and Express mounts /trpc case-insensitively, so each spelling
// below is a batch of 16 calls (the answer shows it) and must cost 16, like the plain commas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawGet, registerUser } from '../helpers/http.js';
import { callsIn } from '../../rest/rate-limit.js';

let app: TestApp;
let session: string;
beforeAll(async () => {
  app = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

const N = 16;
const names = (sep: string) => Array.from({ length: N }, () => 'me.get').join(sep);

describe('the edge bucket counts every call of a /trpc batch, however spelt (issue 28 item 5)', () => {
  const spellings: [string, string][] = [
    ['commas', `/trpc/${names(',')}?batch=1`],
    ['%2C', `/trpc/${names('%2C')}?batch=1`],
    ['%2c', `/trpc/${names('%2c')}?batch=1`],
    ['commas and %2C mixed', `/trpc/${names(',').replace(/,(?=me\.get,me)/g, '%2C')}?batch=1`],
    ['an encoded batch=1', `/trpc/${names('%2C')}?%62atch=%31`],
    ['/TRPC/ (Express mounts /trpc case-insensitively)', `/TRPC/${names('%2C')}?batch=1`],
  ];
  for (const [what, target] of spellings) {
    it(`${what}: 16 calls answered, 16 tokens spent`, async () => {
      app.clock.advance(10_000); // the edge bucket is full again (100, 20/s)
      const r = await rawGet(app, target, session);
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      expect(Array.isArray(r.body) && r.body.length).toBe(N);
      expect(r.headers.get('ratelimit-limit')).toBe('100');
      expect(r.headers.get('ratelimit-remaining')).toBe(String(100 - N));
    });
  }

  it('counts as the adapters read: decoded names, the first batch value, a cap past the limit', () => {
    expect(callsIn('/trpc/a%2Cb%2cc?batch=1')).toBe(3);
    expect(callsIn('/trpc/a%2Cb?batch=0&batch=1')).toBe(1);
    expect(callsIn('/trpc/a%2Cb?batch=1&batch=0')).toBe(2);
    expect(callsIn('/trpc/a%2Cb')).toBe(1);
    expect(callsIn('/trpc/a,b%zz?batch=1')).toBe(2);
    expect(callsIn(`/trpc/${'a%2C'.repeat(40)}a?batch=1`)).toBe(17);
    expect(callsIn('/v1/a,b?batch=1')).toBe(1);
    // `batch` is read as URLSearchParams reads it (the first value, decoded), whatever the spelling.
    for (const q of ['batch=1', 'batch=0&batch=1', 'batch=1&batch=0', '%62atch=%31', 'b%61tch=1', 'batch', 'batch=', '=1&batch=1', '&&batch=1', 'batch=1+', 'batch+=1', 'batch=%31%', '%62atch%=1', 'Batch=1', 'batch==1', 'input=%zz&batch=1', 'batch%3D1', 'batch&batch=1', '']) {
      expect(callsIn(`/trpc/a,b?${q}`) === 2, q).toBe(new URLSearchParams(q).get('batch') === '1');
    }
  });
});
