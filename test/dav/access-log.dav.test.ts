// Issue 30 item 4: the access log records /dav/ paths without the resource name (a client may put a
// to-do's title in it; Cairn keeps the name sealed).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { logSink } from '../helpers/log-sink.js';
import { loggedPath } from '../../server/access-path.js';
import { dav, davUser, ics } from './helpers.js';

const sink = logSink();
let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, {}, { logStream: sink.stream });
});
afterAll(() => app.close());

it('a PUT under a title-like name is logged as /dav/<user>/<calendar>/[resource]', async () => {
  const u = await davUser(app);
  const r = await dav(app, 'PUT', `/dav/${u.userId}/standalone/Secret%20Plans.ics`, { auth: u.auth, body: ics(['UID:s@x', 'SUMMARY:s']) });
  expect(r.status).toBe(201);
  const lines = sink.lines.map((l) => JSON.parse(l) as { msg: string; path: string }).filter((l) => l.msg === 'request' && l.path.startsWith('/dav/'));
  expect(lines.map((l) => l.path)).toEqual([`/dav/${u.userId}/standalone/[resource]`]);
  expect(sink.lines.join('\n')).not.toContain('Secret');
  expect(loggedPath(`/dav/${u.userId}/standalone/`)).toBe(`/dav/${u.userId}/standalone/`);
  expect(loggedPath('/dav/u/c/a/b?x=1')).toBe('/dav/u/c/[resource]');
});
