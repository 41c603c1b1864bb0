// The live stream (routers/live/model.ts) holds no data key: the key its request unwrapped is
// zeroed when the stream starts, while the stream still delivers events and still ends with its
// session (docs/security.md "Keys": nothing unwrapped outlives what needs it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { liveEvents } from '../../routers/live/model.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => app?.close());

describe('live stream and the data key', () => {
  it('zeroes the request\'s data key at the start, and still streams the account\'s events', async () => {
    const reg = await app.caller().auth.register({ email: 'live-key@example.test', password: 'live key password 1' });
    const p = await authenticate(app.deps, `Bearer ${reg.token}`);
    expect(p.dek.some((b) => b !== 0)).toBe(true);
    const ac = new AbortController();
    const it = liveEvents(app.deps, p, undefined, ac.signal);
    const first = await it.next();
    expect(first.done).toBe(false);
    expect(p.dek.every((b) => b === 0)).toBe(true);
    // Still works with a zeroed key: a change made with another request's key is announced.
    const made = await app.caller(reg.token).todos.create({ title: 'seen live' });
    const next = await it.next();
    expect((next.value as unknown as [string, { events: { type: string; id: string }[] }])[1].events.map((e) => e.id)).toContain(made.id);
    ac.abort();
    await it.return(undefined);
  }, 30_000);
});
