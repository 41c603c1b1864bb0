// Issue 30 item 3: PROPPATCH of Apple's calendar-order moves the project among its siblings (the
// same model as POST /v1/containers/{id}/move), as the order a client shows; a value that is not a
// position is refused (403, nothing changed); the standalone calendar has no project to move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { dav, davUser, responses, type DavUser } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const A = 'http://apple.com/ns/ical/';
const orderBody = (n: string) => `<D:propertyupdate xmlns:D="DAV:" xmlns:A="${A}"><D:set><D:prop><A:calendar-order>${n}</A:calendar-order></D:prop></D:set></D:propertyupdate>`;

async function orders(u: DavUser): Promise<Map<string, number>> {
  const r = await dav(app, 'PROPFIND', `/dav/${u.userId}/`, { auth: u.auth, headers: { depth: '1' }, body: `<D:propfind xmlns:D="DAV:" xmlns:A="${A}"><D:prop><A:calendar-order/></D:prop></D:propfind>` });
  expect(r.status).toBe(207);
  const out = new Map<string, number>();
  for (const [href, block] of responses(r.text)) {
    const m = /<A:calendar-order[^>]*>(\d+)<\/A:calendar-order>/.exec(block) ?? /calendar-order[^>]*>(\d+)</.exec(block);
    const id = href.split('/').filter(Boolean).pop()!;
    if (m) out.set(id, Number(m[1]));
  }
  return out;
}

async function projectOrder(u: DavUser, ids: string[]): Promise<string[]> {
  const list = (await call(app, 'GET', '/v1/containers?limit=200', { token: u.session })).body.data as { id: string; sortKey: string }[];
  return list.filter((c) => ids.includes(c.id)).sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0)).map((c) => c.id);
}

describe('calendar-order', () => {
  it('moves the project among its siblings, up and down, and refuses what is not a position', async () => {
    const u = await davUser(app);
    const ids: string[] = [];
    for (const name of ['Alpha', 'Bravo', 'Charlie']) ids.push((await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name } })).body.id);
    const [a, b, c] = ids as [string, string, string];
    expect(await projectOrder(u, ids)).toEqual([a, b, c]);
    const o = await orders(u);
    // Charlie to Alpha's place: first.
    expect((await dav(app, 'PROPPATCH', `/dav/${u.userId}/${c}/`, { auth: u.auth, body: orderBody(String(o.get(a))) })).status).toBe(207);
    expect(await projectOrder(u, ids)).toEqual([c, a, b]);
    const o2 = await orders(u);
    expect(o2.get(c)!).toBeLessThan(o2.get(a)!);
    // Alpha down to Bravo's place: after Bravo.
    expect((await dav(app, 'PROPPATCH', `/dav/${u.userId}/${a}/`, { auth: u.auth, body: orderBody(String(o2.get(b))) })).status).toBe(207);
    expect(await projectOrder(u, ids)).toEqual([c, b, a]);
    // Not a position: 403 in the multistatus, nothing moved.
    const bad = await dav(app, 'PROPPATCH', `/dav/${u.userId}/${b}/`, { auth: u.auth, body: orderBody('first') });
    expect(bad.status).toBe(207);
    expect(bad.text).toContain('403 Forbidden');
    expect(await projectOrder(u, ids)).toEqual([c, b, a]);
  });
});
