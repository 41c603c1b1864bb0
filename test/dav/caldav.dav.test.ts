// Issue 30 (docs/caldav.md): the CalDAV door over real HTTP against the real app: app passwords
// and their audience, discovery, calendars, items with ETag preconditions, names and UIDs, the
// VTODO mapping, unknown properties surviving a REST edit, reports, sync tokens, recurring
// completions, MKCALENDAR / PROPPATCH / MOVE / DELETE, and events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { basic, dav, davUser, etagIn, ics, propfindBody, responses, type DavUser } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const project = async (u: DavUser, body: Record<string, unknown> = {}) => (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Launch', ...body } })).body.id as string;
const todosOf = async (u: DavUser) => (await call(app, 'GET', '/v1/todos?include_trashed=true', { token: u.session })).body.data as Record<string, unknown>[];
const syncBody = (token: string, extra = '') => `<D:sync-collection xmlns:D="DAV:"><D:sync-token>${token}</D:sync-token><D:sync-level>1</D:sync-level>${extra}<D:prop><D:getetag/></D:prop></D:sync-collection>`;
const tokenIn = (xml: string) => /<D:sync-token>([^<]+)<\/D:sync-token>/.exec(xml)![1]!;

describe('app passwords (issue 30 item 1)', () => {
  it('Basic with the email (any case) and a dav token works; everything else is 401 with the Basic challenge', async () => {
    const u = await davUser(app);
    const ok = await dav(app, 'PROPFIND', '/dav/', { auth: basic(u.email.toUpperCase(), u.token), headers: { depth: '0' }, body: propfindBody('D:current-user-principal') });
    expect(ok.status).toBe(207);
    const other = await davUser(app);
    const rest = (await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'cli', expiresInDays: 30, scopes: ['todos:read'] } })).body.token as string;
    for (const auth of [
      undefined,
      `Bearer ${u.session}`,
      `Bearer ${u.token}`,
      `Bearer ${rest}`,
      basic(u.email, rest),
      basic(other.email, u.token),
      basic(u.email, u.password),
      basic(u.email, `${u.token}x`),
    ]) {
      const r = await dav(app, 'PROPFIND', '/dav/', { ...(auth ? { auth } : {}), headers: { depth: '0' } });
      expect(r.status, String(auth)).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Basic realm="Cairn", charset="UTF-8"');
    }
    // Revoking the token ends it.
    const keys = (await call(app, 'GET', '/v1/keys', { token: u.session })).body.data as { id: string; audience: string }[];
    await call(app, 'DELETE', `/v1/keys/${keys.find((k) => k.audience === 'dav')!.id}`, { token: u.session });
    expect((await dav(app, 'PROPFIND', '/dav/', { auth: u.auth, headers: { depth: '0' } })).status).toBe(401);
  });

  it('a key rotation ends the app password; after it, names, UIDs and kept properties still resolve under the new key', async () => {
    const u = await davUser(app);
    const href = `/dav/${u.userId}/standalone/kept%20name.ics`;
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: ics(['UID:kept@host', 'SUMMARY:Kept', 'X-KEEP:me']) })).status).toBe(201);
    const rotated = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    expect(rotated.status).toBe(200);
    expect((await dav(app, 'GET', href, { auth: u.auth })).status).toBe(401);
    const fresh = (await call(app, 'POST', '/v1/keys', { token: rotated.body.token, body: { name: 'again', expiresInDays: 30, audience: 'dav' } })).body.token as string;
    const g = await dav(app, 'GET', href, { auth: basic(u.email, fresh) });
    expect(g.status).toBe(200);
    expect(g.text).toContain('UID:kept@host');
    expect(g.text).toContain('X-KEEP:me');
    // A password change ends it too.
    const changed = await call(app, 'POST', '/v1/auth/password', { token: rotated.body.token, body: { currentPassword: u.password, newPassword: 'another correct horse' } });
    expect(changed.status).toBe(200);
    expect((await dav(app, 'GET', href, { auth: basic(u.email, fresh) })).status).toBe(401);
  });

  it('another user\'s paths are not found', async () => {
    const a = await davUser(app);
    const b = await davUser(app);
    expect((await dav(app, 'PROPFIND', `/dav/${b.userId}/`, { auth: a.auth, headers: { depth: '1' } })).status).toBe(404);
    expect((await dav(app, 'GET', `/dav/${b.userId}/standalone/x.ics`, { auth: a.auth })).status).toBe(404);
  });
});

describe('discovery (item 2)', () => {
  it('well-known redirects to the root; OPTIONS advertises calendar-access; the root and principal answer the home; Depth infinity is refused', async () => {
    const u = await davUser(app);
    for (const method of ['GET', 'PROPFIND']) {
      const r = await dav(app, method, '/.well-known/caldav', {});
      expect(r.status).toBe(301);
      expect(r.headers.get('location')).toBe('/dav/');
    }
    const o = await dav(app, 'OPTIONS', '/dav/', {});
    expect(o.status).toBe(200);
    expect(o.headers.get('dav')).toBe('1, 3, calendar-access');
    expect(o.headers.get('allow')).toContain('REPORT');
    const root = await dav(app, 'PROPFIND', '/dav/', { auth: u.auth, headers: { depth: '0' }, body: propfindBody('D:current-user-principal', 'X:nothing xmlns:X="urn:x"') });
    expect(root.text).toContain(`<D:current-user-principal><D:href>/dav/${u.userId}/</D:href></D:current-user-principal>`);
    expect(root.text).toMatch(/<X:nothing xmlns:X="urn:x"\/><\/D:prop><D:status>HTTP\/1.1 404 Not Found/);
    const home = await dav(app, 'PROPFIND', `/dav/${u.userId}/`, { auth: u.auth, headers: { depth: '0' }, body: propfindBody('C:calendar-home-set', 'D:principal-URL', 'D:displayname') });
    expect(home.text).toContain(`<C:calendar-home-set><D:href>/dav/${u.userId}/</D:href></C:calendar-home-set>`);
    expect(home.text).toContain(`<D:principal-URL><D:href>/dav/${u.userId}/</D:href></D:principal-URL>`);
    const inf = await dav(app, 'PROPFIND', `/dav/${u.userId}/`, { auth: u.auth, headers: { depth: 'infinity' } });
    expect(inf.status).toBe(403);
    expect(inf.text).toContain('<D:propfind-finite-depth/>');
    const doctype = await dav(app, 'PROPFIND', '/dav/', { auth: u.auth, headers: { depth: '0' }, body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>' });
    expect(doctype.status).toBe(400);
  });
});

describe('calendars (item 3)', () => {
  it('one VTODO calendar per live, unarchived project and subproject (area as a name prefix) plus standalone', async () => {
    const u = await davUser(app);
    const area = (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'area', name: 'Work' } })).body.id;
    const p1 = await project(u, { parentId: area, colorHex: '#00FF00' });
    const sub = (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'subproject', name: 'Docs', parentId: p1 } })).body.id;
    const archived = await project(u, { name: 'Old' });
    await call(app, 'POST', `/v1/containers/${archived}/archive`, { token: u.session });
    const trashed = await project(u, { name: 'Gone' });
    await call(app, 'POST', `/v1/containers/${trashed}/trash`, { token: u.session });
    const r = await dav(app, 'PROPFIND', `/dav/${u.userId}/`, {
      auth: u.auth,
      headers: { depth: '1' },
      body: propfindBody('D:displayname', 'D:resourcetype', 'C:supported-calendar-component-set', 'A:calendar-color', 'D:supported-report-set', 'D:current-user-privilege-set'),
    });
    const all = responses(r.text);
    expect([...all.keys()].sort()).toEqual([`/dav/${u.userId}/`, `/dav/${u.userId}/${p1}/`, `/dav/${u.userId}/${sub}/`, `/dav/${u.userId}/standalone/`].sort());
    const launch = all.get(`/dav/${u.userId}/${p1}/`)!;
    expect(launch).toContain('<D:displayname>Work › Launch</D:displayname>');
    expect(launch).toContain('<D:resourcetype><D:collection/><C:calendar/></D:resourcetype>');
    expect(launch).toContain('<C:comp name="VTODO"/>');
    expect(launch).toContain('<A:calendar-color>#00FF00FF</A:calendar-color>');
    expect(launch).toContain('<C:calendar-multiget/>');
    expect(launch).toContain('<D:sync-collection/>');
    expect(all.get(`/dav/${u.userId}/${sub}/`)).toContain('<D:displayname>Work › Launch › Docs</D:displayname>');
  });

  it('MKCALENDAR makes a project, PROPPATCH renames and recolours it, DELETE trashes it (restorable)', async () => {
    const u = await davUser(app);
    const id = 'a1b2c3d4-0000-4000-8000-00000000abcd';
    const mk = await dav(app, 'MKCALENDAR', `/dav/${u.userId}/${id}/`, {
      auth: u.auth,
      body: `<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:A="http://apple.com/ns/ical/"><D:set><D:prop><D:displayname>Groceries</D:displayname><A:calendar-color>#112233FF</A:calendar-color></D:prop></D:set></C:mkcalendar>`,
    });
    expect(mk.status).toBe(201);
    const c = await call(app, 'GET', `/v1/containers/${id.toUpperCase()}`, { token: u.session });
    expect(c.body).toMatchObject({ kind: 'project', name: 'Groceries', colorHex: '#112233' });
    const pp = await dav(app, 'PROPPATCH', `/dav/${u.userId}/${id}/`, {
      auth: u.auth,
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:A="http://apple.com/ns/ical/"><D:set><D:prop><D:displayname>Shopping</D:displayname><A:calendar-color>#445566</A:calendar-color></D:prop></D:set></D:propertyupdate>`,
    });
    expect(pp.status).toBe(207);
    expect(pp.text).toContain('200 OK');
    expect((await call(app, 'GET', `/v1/containers/${id.toUpperCase()}`, { token: u.session })).body).toMatchObject({ name: 'Shopping', colorHex: '#445566' });
    const bad = await dav(app, 'PROPPATCH', `/dav/${u.userId}/${id}/`, {
      auth: u.auth,
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:X="urn:x"><D:set><D:prop><D:displayname>Nope</D:displayname><X:other>1</X:other></D:prop></D:set></D:propertyupdate>`,
    });
    expect(bad.text).toContain('403 Forbidden');
    expect(bad.text).toContain('424 Failed Dependency');
    expect((await call(app, 'GET', `/v1/containers/${id.toUpperCase()}`, { token: u.session })).body.name).toBe('Shopping');
    expect((await dav(app, 'DELETE', `/dav/${u.userId}/${id}/`, { auth: u.auth })).status).toBe(204);
    expect((await call(app, 'GET', `/v1/containers/${id.toUpperCase()}`, { token: u.session })).body.trashedAt).not.toBeNull();
    expect((await dav(app, 'PROPFIND', `/dav/${u.userId}/${id}/`, { auth: u.auth, headers: { depth: '0' } })).status).toBe(404);
    expect((await dav(app, 'DELETE', `/dav/${u.userId}/standalone/`, { auth: u.auth })).status).toBe(403);
  });
});

describe('items (item 4)', () => {
  it('PUT creates, GET reads with a strong ETag, If-None-Match/If-Match are honoured (412), DELETE trashes', async () => {
    const u = await davUser(app);
    const p = await project(u);
    const href = `/dav/${u.userId}/${p}/9f1c2e7a-aaaa-4bbb-8ccc-123456789abc.ics`;
    const body = ics(['UID:9f1c2e7a-aaaa-4bbb-8ccc-123456789abc', 'DTSTAMP:20261120T100000Z', 'SUMMARY:Buy milk', 'DESCRIPTION:two litres', 'DTSTART;VALUE=DATE:20261124', 'DUE;VALUE=DATE:20261125', 'PRIORITY:1', 'CATEGORIES:errands,home']);
    const created = await dav(app, 'PUT', href, { auth: u.auth, body, headers: { 'if-none-match': '*' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBeNull();
    const [t] = await todosOf(u);
    expect(t).toMatchObject({ title: 'Buy milk', notes: 'two litres', whenDate: '2026-11-24', deadline: '2026-11-25', priority: 'high', tags: ['errands', 'home'], parentId: p, status: 'open' });
    const got = await dav(app, 'GET', href, { auth: u.auth });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(/^text\/calendar/);
    const etag = got.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(got.text).toContain('UID:9f1c2e7a-aaaa-4bbb-8ccc-123456789abc');
    expect(got.text).toContain('DTSTART;VALUE=DATE:20261124');
    expect(got.text).toContain('DUE;VALUE=DATE:20261125');
    expect(got.text).toContain('PRIORITY:1');
    expect(got.text).toContain('STATUS:NEEDS-ACTION');
    // The id's own name serves the to-do only when the client did not choose another.
    expect((await dav(app, 'GET', `/dav/${u.userId}/${p}/${t!.id}.ics`, { auth: u.auth })).status).toBe(404);

    expect((await dav(app, 'PUT', href, { auth: u.auth, body, headers: { 'if-none-match': '*' } })).status).toBe(412);
    expect((await dav(app, 'PUT', href, { auth: u.auth, body, headers: { 'if-match': '"stale"' } })).status).toBe(412);
    const completed = body.replace('PRIORITY:1', 'PRIORITY:1\r\nSTATUS:COMPLETED\r\nCOMPLETED:20261124T080000Z');
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: completed, headers: { 'if-match': etag } })).status).toBe(204);
    const done = (await todosOf(u))[0]!;
    expect(done.status).toBe('completed');
    // The client's COMPLETED time is written back.
    const after = await dav(app, 'GET', href, { auth: u.auth });
    expect(after.text).toContain('COMPLETED:20261124T080000Z');
    expect(after.headers.get('etag')).not.toBe(etag);
    // A replay with the old precondition does nothing.
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: completed, headers: { 'if-match': etag } })).status).toBe(412);

    expect((await dav(app, 'DELETE', href, { auth: u.auth, headers: { 'if-match': etag } })).status).toBe(412);
    expect((await dav(app, 'DELETE', href, { auth: u.auth, headers: { 'if-match': after.headers.get('etag')! } })).status).toBe(204);
    expect((await todosOf(u))[0]!.trashedAt).not.toBeNull();
    expect((await dav(app, 'GET', href, { auth: u.auth })).status).toBe(404);
  });

  it('to-dos made elsewhere appear as <id>.ics with UID = id; the ETag changes with a REST edit, a completion and a tag deleted', async () => {
    const u = await davUser(app);
    const t = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'From REST', tags: ['a'], whenDate: '2026-12-05', deadline: '2026-12-01', evening: true } })).body;
    const href = `/dav/${u.userId}/standalone/${t.id}.ics`;
    const g1 = await dav(app, 'GET', href, { auth: u.auth });
    expect(g1.text).toContain(`UID:${t.id}`);
    // DTSTART never after DUE: DUE wins, the date travels in X-CAIRN-WHEN-DATE.
    expect(g1.text).not.toContain('DTSTART');
    expect(g1.text).toContain('X-CAIRN-WHEN-DATE:2026-12-05');
    expect(g1.text).toContain('X-CAIRN-EVENING:TRUE');
    const e1 = g1.headers.get('etag');
    await call(app, 'PATCH', `/v1/todos/${t.id}`, { token: u.session, body: { notes: 'n' } });
    const e2 = (await dav(app, 'GET', href, { auth: u.auth })).headers.get('etag');
    expect(e2).not.toBe(e1);
    const tag = (await call(app, 'GET', '/v1/tags', { token: u.session })).body.data[0].id;
    await call(app, 'DELETE', `/v1/tags/${tag}`, { token: u.session });
    const g3 = await dav(app, 'GET', href, { auth: u.auth });
    expect(g3.headers.get('etag')).not.toBe(e2);
    expect(g3.text).not.toContain('CATEGORIES');
    await call(app, 'POST', `/v1/todos/${t.id}/complete`, { token: u.session });
    expect((await dav(app, 'GET', href, { auth: u.auth })).headers.get('etag')).not.toBe(g3.headers.get('etag'));
    // A Cairn-aware round trip of that resource changes nothing.
    const before = (await todosOf(u))[0]!;
    const back = (await dav(app, 'GET', href, { auth: u.auth })).text;
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: back })).status).toBe(204);
    const again = (await todosOf(u))[0]!;
    expect({ ...again, updatedAt: 0 }).toEqual({ ...before, updatedAt: 0 });
  });

  it('client names and UIDs are kept and sealed; a changed UID or a reused UID is refused; nothing is stored for invalid data', async () => {
    const u = await davUser(app);
    const href = `/dav/${u.userId}/standalone/my%20title%20file.ics`;
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: ics(['UID:1234abcd@laptop', 'SUMMARY:One']) })).status).toBe(201);
    const g = await dav(app, 'GET', href, { auth: u.auth });
    expect(g.text).toContain('UID:1234abcd@laptop');
    const list = await dav(app, 'PROPFIND', `/dav/${u.userId}/standalone/`, { auth: u.auth, headers: { depth: '1' }, body: propfindBody('D:getetag') });
    expect([...responses(list.text).keys()]).toContain(href);
    const change = await dav(app, 'PUT', href, { auth: u.auth, body: ics(['UID:other@laptop', 'SUMMARY:One']) });
    expect(change.status).toBe(409);
    expect(change.text).toContain('<C:no-uid-conflict/>');
    const reuse = await dav(app, 'PUT', `/dav/${u.userId}/standalone/second.ics`, { auth: u.auth, body: ics(['UID:1234abcd@laptop', 'SUMMARY:Two']) });
    expect(reuse.status).toBe(409);
    expect(reuse.text).toContain('<C:no-uid-conflict/>');
    const vevent = await dav(app, 'PUT', `/dav/${u.userId}/standalone/ev.ics`, { auth: u.auth, body: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:e\r\nSUMMARY:Meet\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n' });
    expect(vevent.status).toBe(403);
    expect(vevent.text).toContain('<C:supported-calendar-component/>');
    const garbage = await dav(app, 'PUT', `/dav/${u.userId}/standalone/bad.ics`, { auth: u.auth, body: 'not ical at all' });
    expect(garbage.status).toBe(403);
    expect(garbage.text).toContain('<C:valid-calendar-data/>');
    const two = ics(['UID:a', 'SUMMARY:A', 'END:VTODO', 'BEGIN:VTODO', 'UID:b', 'SUMMARY:B']);
    expect((await dav(app, 'PUT', `/dav/${u.userId}/standalone/two.ics`, { auth: u.auth, body: two })).status).toBe(403);
    expect((await todosOf(u)).map((t) => t.title)).toEqual(['One']);
    // The sealed row goes with its to-do: nothing lingers after a delete.
    const id = (await todosOf(u))[0]!.id as string;
    const rows = () => (app.deps.db.$client.prepare('SELECT count(*) AS n FROM dav_resources WHERE todo_id = ?').get(id) as { n: number }).n;
    expect(rows()).toBe(1);
    expect((await call(app, 'DELETE', `/v1/todos/${id}`, { token: u.session })).status).toBe(204);
    expect(rows()).toBe(0);
  });

  it('DATE-TIME dates become their calendar date in their own zone; the client\'s value, unknown properties and components survive a REST edit', async () => {
    const u = await davUser(app);
    const href = `/dav/${u.userId}/standalone/rich.ics`;
    const tz = ['BEGIN:VTIMEZONE', 'TZID:Europe/Berlin', 'BEGIN:STANDARD', 'DTSTART:19701025T030000', 'TZOFFSETFROM:+0200', 'TZOFFSETTO:+0100', 'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU', 'END:STANDARD', 'END:VTIMEZONE'];
    const body = ics(
      [
        'UID:rich@apple',
        'SUMMARY:Rich',
        'DTSTART;TZID=Europe/Berlin:20261124T233000',
        'DUE:20261125T230000Z',
        'X-APPLE-SORT-ORDER:123456',
        'URL:https://example.test/x',
        'GEO:48.1;11.5',
        'CLASS:PRIVATE',
        'X-MY-THING;X-PARAM=1:kept',
        'BEGIN:VALARM',
        'ACTION:DISPLAY',
        'DESCRIPTION:Reminder',
        'TRIGGER:-PT15M',
        'END:VALARM',
      ],
      tz,
    );
    expect((await dav(app, 'PUT', href, { auth: u.auth, body })).status).toBe(201);
    const [t] = await todosOf(u);
    expect(t).toMatchObject({ whenDate: '2026-11-24', deadline: '2026-11-25' });
    await call(app, 'PATCH', `/v1/todos/${t!.id}`, { token: u.session, body: { title: 'Rich, edited' } });
    const g = (await dav(app, 'GET', href, { auth: u.auth })).text;
    for (const line of ['SUMMARY:Rich\\, edited', 'DTSTART;TZID=Europe/Berlin:20261124T233000', 'DUE:20261125T230000Z', 'X-APPLE-SORT-ORDER:123456', 'URL:https://example.test/x', 'GEO:48.1;11.5', 'CLASS:PRIVATE', 'X-MY-THING;X-PARAM=1:kept', 'BEGIN:VALARM', 'TRIGGER:-PT15M', 'TZID:Europe/Berlin']) {
      expect(g, line).toContain(line);
    }
    // A date moved through the API is written as a DATE; the original value goes.
    await call(app, 'PATCH', `/v1/todos/${t!.id}`, { token: u.session, body: { whenDate: '2026-11-23' } });
    const g2 = (await dav(app, 'GET', href, { auth: u.auth })).text;
    expect(g2).toContain('DTSTART;VALUE=DATE:20261123');
    expect(g2).toContain('DUE:20261125T230000Z');
  });

  it('MOVE moves a to-do to another calendar, keeping its name and UID', async () => {
    const u = await davUser(app);
    const p = await project(u);
    expect((await dav(app, 'PUT', `/dav/${u.userId}/standalone/m.ics`, { auth: u.auth, body: ics(['UID:m@x', 'SUMMARY:Mover']) })).status).toBe(201);
    const mv = await dav(app, 'MOVE', `/dav/${u.userId}/standalone/m.ics`, { auth: u.auth, headers: { destination: `${app.url}/dav/${u.userId}/${p}/m.ics` } });
    expect(mv.status).toBe(201);
    expect((await todosOf(u))[0]!.parentId).toBe(p);
    expect((await dav(app, 'GET', `/dav/${u.userId}/${p}/m.ics`, { auth: u.auth })).text).toContain('UID:m@x');
    expect((await dav(app, 'GET', `/dav/${u.userId}/standalone/m.ics`, { auth: u.auth })).status).toBe(404);
  });
});

describe('reports (item 7)', () => {
  it('calendar-multiget and calendar-query (COMPLETED is-not-defined, STATUS text-match, time-range)', async () => {
    const u = await davUser(app);
    const p = await project(u);
    const a = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'open one', parentId: p, deadline: '2026-12-10' } })).body;
    const b = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'done one', parentId: p } })).body;
    await call(app, 'POST', `/v1/todos/${b.id}/complete`, { token: u.session });
    const base = `/dav/${u.userId}/${p}/`;
    const mg = await dav(app, 'REPORT', base, {
      auth: u.auth,
      headers: { depth: '1' },
      body: `<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop><D:href>${base}${a.id}.ics</D:href><D:href>${base}nope.ics</D:href></C:calendar-multiget>`,
    });
    const got = responses(mg.text);
    expect(got.get(`${base}${a.id}.ics`)).toContain('SUMMARY:open one');
    expect(got.get(`${base}nope.ics`)).toContain('404 Not Found');
    const query = (filter: string) =>
      dav(app, 'REPORT', base, {
        auth: u.auth,
        headers: { depth: '1' },
        body: `<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO">${filter}</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>`,
      }).then((r) => [...responses(r.text).keys()]);
    expect(await query('<C:prop-filter name="COMPLETED"><C:is-not-defined/></C:prop-filter>')).toEqual([`${base}${a.id}.ics`]);
    expect(await query('<C:prop-filter name="STATUS"><C:text-match negate-condition="yes">COMPLETED</C:text-match></C:prop-filter>')).toEqual([`${base}${a.id}.ics`]);
    expect(await query('<C:prop-filter name="STATUS"><C:text-match>COMPLETED</C:text-match></C:prop-filter>')).toEqual([`${base}${b.id}.ics`]);
    expect(await query('<C:prop-filter name="DUE"><C:time-range start="20261201T000000Z" end="20261231T000000Z"/></C:prop-filter>')).toEqual([`${base}${a.id}.ics`]);
    expect(await query('<C:prop-filter name="DUE"><C:time-range start="20270101T000000Z"/></C:prop-filter>')).toEqual([]);
    expect((await query('')).length).toBe(2);
  });

  it('sync-collection: all on an empty token, then creates, edits, moves and trashes from any door; unknown token 403; limit 507', async () => {
    const u = await davUser(app, undefined, 365);
    const p = await project(u);
    const other = await project(u, { name: 'Other' });
    const base = `/dav/${u.userId}/${p}/`;
    const sync = (token: string, extra = '') => dav(app, 'REPORT', base, { auth: u.auth, headers: { depth: '1' }, body: syncBody(token, extra) });
    const a = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'a', parentId: p } })).body;
    const b = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'b', parentId: p } })).body;
    const c = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'c', parentId: p } })).body;
    const first = await sync('');
    expect([...responses(first.text).keys()].sort()).toEqual([a, b, c].map((t) => `${base}${t.id}.ics`).sort());
    const t1 = tokenIn(first.text);
    // Nothing changed: no responses, the same token.
    const same = await sync(t1);
    expect(responses(same.text).size).toBe(0);
    expect(tokenIn(same.text)).toBe(t1);
    await call(app, 'PATCH', `/v1/todos/${a.id}`, { token: u.session, body: { title: 'a2' } });
    await call(app, 'POST', `/v1/todos/${b.id}/move`, { token: u.session, body: { parentId: other } });
    await call(app, 'POST', `/v1/todos/${c.id}/trash`, { token: u.session });
    expect((await dav(app, 'PUT', `${base}new.ics`, { auth: u.auth, body: ics(['UID:new@x', 'SUMMARY:new']) })).status).toBe(201);
    const second = await sync(t1);
    const got = responses(second.text);
    expect(got.get(`${base}${a.id}.ics`)).toContain('<D:getetag>');
    expect(got.get(`${base}${b.id}.ics`)).toContain('404 Not Found');
    expect(got.get(`${base}${c.id}.ics`)).toContain('404 Not Found');
    expect(got.get(`${base}new.ics`)).toContain('<D:getetag>');
    expect(got.size).toBe(4);
    const t2 = tokenIn(second.text);
    expect(t2).not.toBe(t1);
    const bad = await sync('urn:cairn:sync:00000000-0000-4000-8000-000000000000');
    expect(bad.status).toBe(403);
    expect(bad.text).toContain('<D:valid-sync-token/>');
    // limit: a truncated answer ends with 507 for the calendar; its token continues from there.
    for (const title of ['x', 'y', 'z']) await call(app, 'POST', '/v1/todos', { token: u.session, body: { title, parentId: p } });
    const part = await sync(t2, '<D:limit><D:nresults>2</D:nresults></D:limit>');
    const partGot = responses(part.text);
    expect(partGot.get(base)).toContain('507');
    expect(partGot.size).toBe(3);
    const rest = await sync(tokenIn(part.text));
    expect(responses(rest.text).size).toBe(1);
    // Tokens expire after the retention (90 days).
    app.clock.advance(91 * 86_400_000);
    expect((await sync(tokenIn(rest.text))).status).toBe(403);
  });
});

describe('recurring completions (item 6)', () => {
  const rec = async (u: DavUser) => {
    const t = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Water plants', whenDate: '2026-11-23', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } } })).body;
    const href = `/dav/${u.userId}/standalone/${t.id}.ics`;
    const g = await dav(app, 'GET', href, { auth: u.auth });
    expect(g.text).toContain('RRULE:FREQ=WEEKLY');
    return { t, href, text: g.text, etag: g.headers.get('etag')! };
  };
  const check = async (u: DavUser, id: string) => {
    const all = await todosOf(u);
    const master = all.find((x) => x.id === id)!;
    expect(master).toMatchObject({ status: 'open', whenDate: '2026-11-30' });
    const copies = all.filter((x) => x.id !== id);
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({ status: 'completed', whenDate: '2026-11-23', recurrence: null });
    // The logged copy is a resource of its own.
    const list = await dav(app, 'PROPFIND', `/dav/${u.userId}/standalone/`, { auth: u.auth, headers: { depth: '1' }, body: propfindBody('D:getetag') });
    expect([...responses(list.text).keys()]).toContain(`/dav/${u.userId}/standalone/${copies[0]!.id}.ics`);
  };

  it('STATUS:COMPLETED on the master (Apple, Tasks.org)', async () => {
    const u = await davUser(app);
    const { t, href, text, etag } = await rec(u);
    const put = text.replace('STATUS:NEEDS-ACTION', 'STATUS:COMPLETED\r\nCOMPLETED:20261123T090000Z');
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: put, headers: { 'if-match': etag } })).status).toBe(204);
    await check(u, t.id);
    // A replay with the same precondition does not complete it twice.
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: put, headers: { 'if-match': etag } })).status).toBe(412);
    expect((await todosOf(u)).length).toBe(2);
  });

  it('the master moved to exactly its next occurrence (Tasks.org, OpenTasks); another move is a reschedule', async () => {
    const u = await davUser(app);
    const { t, href, text } = await rec(u);
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: text.replace('DTSTART;VALUE=DATE:20261123', 'DTSTART;VALUE=DATE:20261130') })).status).toBe(204);
    await check(u, t.id);
    const u2 = await davUser(app);
    const r2 = await rec(u2);
    await dav(app, 'PUT', r2.href, { auth: u2.auth, body: r2.text.replace('DTSTART;VALUE=DATE:20261123', 'DTSTART;VALUE=DATE:20261125') });
    const all = await todosOf(u2);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ whenDate: '2026-11-25', status: 'open' });
  });

  it('a completed RECURRENCE-ID override in the same resource (Thunderbird)', async () => {
    const u = await davUser(app);
    const { t, href, text } = await rec(u);
    const override = ['BEGIN:VTODO', `UID:${t.id}`, 'RECURRENCE-ID;VALUE=DATE:20261123', 'SUMMARY:Water plants', 'STATUS:COMPLETED', 'COMPLETED:20261123T100000Z', 'END:VTODO'].join('\r\n');
    expect((await dav(app, 'PUT', href, { auth: u.auth, body: text.replace('END:VCALENDAR', `${override}\r\nEND:VCALENDAR`) })).status).toBe(204);
    await check(u, t.id);
  });
});

describe('subtasks (item 4)', () => {
  it('checklist items appear as child VTODOs; a client\'s subtask becomes a checklist item; edits and deletes reach the checklist', async () => {
    const u = await davUser(app);
    const t = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Pack', checklist: [{ id: 'socks', title: 'Socks' }, { id: 'hat', title: 'Hat', done: true }] } })).body;
    const base = `/dav/${u.userId}/standalone/`;
    const list = await dav(app, 'PROPFIND', base, { auth: u.auth, headers: { depth: '1' }, body: propfindBody('D:getetag') });
    expect([...responses(list.text).keys()].sort()).toEqual([base, `${base}${t.id}.ics`, `${base}${t.id}.hat.ics`, `${base}${t.id}.socks.ics`].sort());
    const syncFrom = (token: string) => dav(app, 'REPORT', base, { auth: u.auth, headers: { depth: '1' }, body: syncBody(token) });
    const t0 = tokenIn((await syncFrom('')).text);
    const socks = await dav(app, 'GET', `${base}${t.id}.socks.ics`, { auth: u.auth });
    expect(socks.text).toContain(`RELATED-TO;RELTYPE=PARENT:${t.id}`);
    expect(socks.text).toContain('SUMMARY:Socks');
    expect(socks.text).toContain('STATUS:NEEDS-ACTION');
    expect((await dav(app, 'GET', `${base}${t.id}.hat.ics`, { auth: u.auth })).text).toContain('STATUS:COMPLETED');
    // Ticking a subtask in a client ticks the item.
    const put = await dav(app, 'PUT', `${base}${t.id}.socks.ics`, { auth: u.auth, body: socks.text.replace('STATUS:NEEDS-ACTION', 'STATUS:COMPLETED'), headers: { 'if-match': socks.headers.get('etag')! } });
    expect(put.status).toBe(204);
    expect((await call(app, 'GET', `/v1/todos/${t.id}`, { token: u.session })).body.checklist).toEqual([
      { id: 'socks', title: 'Socks', done: true },
      { id: 'hat', title: 'Hat', done: true },
    ]);
    // A sync sees the ticked subtask (and its to-do) as changed.
    const t1sync = await syncFrom(t0);
    expect([...responses(t1sync.text).keys()].sort()).toEqual([`${base}${t.id}.hat.ics`, `${base}${t.id}.ics`, `${base}${t.id}.socks.ics`].sort());
    const t1 = tokenIn(t1sync.text);
    // A subtask made in a client (its own name and UID; its dates are not kept).
    const made = await dav(app, 'PUT', `${base}d1e2f3a4-1111-4222-8333-444455556666.ics`, {
      auth: u.auth,
      body: ics(['UID:d1e2f3a4-1111-4222-8333-444455556666', 'SUMMARY:Passport', `RELATED-TO;RELTYPE=PARENT:${t.id}`, 'DUE;VALUE=DATE:20261201']),
    });
    expect(made.status).toBe(201);
    const after = (await call(app, 'GET', `/v1/todos/${t.id}`, { token: u.session })).body;
    expect(after.checklist.at(-1)).toEqual({ id: 'd1e2f3a4-1111-4222-8333-444455556666', title: 'Passport', done: false });
    expect((await todosOf(u)).length).toBe(1);
    const passport = await dav(app, 'GET', `${base}d1e2f3a4-1111-4222-8333-444455556666.ics`, { auth: u.auth });
    expect(passport.status).toBe(200);
    expect(passport.text).toContain('UID:d1e2f3a4-1111-4222-8333-444455556666');
    expect((await dav(app, 'DELETE', `${base}d1e2f3a4-1111-4222-8333-444455556666.ics`, { auth: u.auth })).status).toBe(204);
    expect((await call(app, 'GET', `/v1/todos/${t.id}`, { token: u.session })).body.checklist.map((c: { id: string }) => c.id)).toEqual(['socks', 'hat']);
    expect((await dav(app, 'GET', `${base}d1e2f3a4-1111-4222-8333-444455556666.ics`, { auth: u.auth })).status).toBe(404);
    // An item removed through /v1 is a removed subtask in the next sync.
    const t2sync = await syncFrom(t1);
    expect(responses(t2sync.text).get(`${base}${t.id}.ics`)).toContain('<D:getetag>');
    await call(app, 'DELETE', `/v1/todos/${t.id}/checklist/hat`, { token: u.session });
    const t3sync = responses((await syncFrom(tokenIn(t2sync.text))).text);
    expect(t3sync.get(`${base}${t.id}.hat.ics`)).toContain('404 Not Found');
    expect(t3sync.get(`${base}${t.id}.socks.ics`)).toContain('<D:getetag>');
  });
});

describe('events (item 9)', () => {
  it('CalDAV writes record the same todo.* and container.* events as REST', async () => {
    const u = await davUser(app);
    const href = `/dav/${u.userId}/standalone/ev.ics`;
    await dav(app, 'PUT', href, { auth: u.auth, body: ics(['UID:ev@x', 'SUMMARY:E']) });
    await dav(app, 'PUT', href, { auth: u.auth, body: ics(['UID:ev@x', 'SUMMARY:E2']) });
    await dav(app, 'DELETE', href, { auth: u.auth });
    await dav(app, 'MKCALENDAR', `/dav/${u.userId}/B1B2C3D4-0000-4000-8000-00000000ABCD/`, { auth: u.auth });
    const types = (app.deps.db.$client.prepare('SELECT type FROM outbox WHERE user_id = ? ORDER BY rowid').all(u.userId) as { type: string }[]).map((r) => r.type);
    expect(types).toEqual(['todo.created', 'todo.updated', 'todo.updated', 'container.created']);
  });
});
