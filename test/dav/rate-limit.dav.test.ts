// Issue 30 item 1: the CalDAV door counts the same per-credential buckets as /v1 and /trpc,
// keyed by the app password's secret: another spelling of the Basic header (the email's case)
// does not buy a fresh budget, and writes also count in the write bucket.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { RATE_BUCKETS } from '../../core/config.js';
import { basic, dav, davUser, ics } from './helpers.js';

let app: TestApp;
// credential: 60 per 5 minutes, credentialWrites: 12; the edge (2/s, bursts of 10) is refilled by
// moving the clock a second before each request.
const FACTOR = 0.1;
beforeAll(async () => {
  app = await startApp({ CAIRN_RATE_LIMIT_FACTOR: String(FACTOR) });
});
afterAll(() => app.close());

it('the credential bucket counts every spelling of one app password together; a write also counts in the write bucket', async () => {
  const u = await davUser(app);
  const limit = Math.floor(RATE_BUCKETS.credential.limit * FACTOR);
  const spellings = [basic(u.email, u.token), basic(u.email.toUpperCase(), u.token)];
  for (let i = 0; i < limit; i++) {
    app.clock.advance(1000);
    const r = await dav(app, 'PROPFIND', '/dav/', { auth: spellings[i % 2]!, headers: { depth: '0' } });
    expect(r.status, `request ${i + 1}`).toBe(207);
  }
  app.clock.advance(1000);
  const refused = await dav(app, 'PROPFIND', '/dav/', { auth: spellings[1]!, headers: { depth: '0' } });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBeTruthy();
  app.clock.advance(5 * 60_000);
  const writes = Math.floor(RATE_BUCKETS.credentialWrites.limit * FACTOR);
  for (let i = 0; i < writes; i++) {
    app.clock.advance(1000);
    expect((await dav(app, 'PUT', `/dav/${u.userId}/standalone/w${i}.ics`, { auth: u.auth, body: ics([`UID:w${i}`, 'SUMMARY:w']) })).status).toBe(201);
  }
  app.clock.advance(1000);
  const refusedWrite = await dav(app, 'PUT', `/dav/${u.userId}/standalone/last.ics`, { auth: u.auth, body: ics(['UID:last', 'SUMMARY:last']) });
  expect(refusedWrite.status).toBe(429);
  expect(refusedWrite.text).toContain('credentialWrites');
});
