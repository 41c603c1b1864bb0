// Issue 30 "Done means": tsdav (npm) as an independent CalDAV client against the real app over
// loopback: discovery from the server's origin (/.well-known/caldav), listing calendars and to-dos,
// a create, an edit, a completion, a delete and an incremental sync (sync-collection).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DAVClient, calendarMultiGet, type DAVCalendar, type DAVCalendarObject } from 'tsdav';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { davUser, ics } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const VTODO_FILTER = [{ 'comp-filter': { _attributes: { name: 'VCALENDAR' }, 'comp-filter': { _attributes: { name: 'VTODO' } } } }];

it('tsdav discovers, lists, creates, edits, completes, deletes and syncs incrementally', async () => {
  const u = await davUser(app);
  const projectId = (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Garden' } })).body.id as string;
  const seeded = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Seeded over REST', parentId: projectId } })).body;

  const client = new DAVClient({ serverUrl: app.url, credentials: { username: u.email, password: u.token }, authMethod: 'Basic', defaultAccountType: 'caldav' });
  await client.login();
  expect(client.account?.principalUrl).toBe(`${app.url}/dav/${u.userId}/`);
  expect(client.account?.homeUrl).toBe(`${app.url}/dav/${u.userId}/`);

  const calendars = await client.fetchCalendars();
  const garden = calendars.find((c) => c.displayName === 'Garden')!;
  expect(garden).toBeDefined();
  expect(garden.components).toEqual(['VTODO']);
  expect(garden.reports).toEqual(expect.arrayContaining(['calendarQuery', 'calendarMultiget', 'syncCollection']));
  expect(calendars.map((c) => c.displayName)).toContain('To-dos');

  const listed = await client.fetchCalendarObjects({ calendar: garden, filters: VTODO_FILTER });
  expect(listed).toHaveLength(1);
  expect(listed[0]!.data).toContain('SUMMARY:Seeded over REST');
  expect(listed[0]!.url).toBe(`${app.url}/dav/${u.userId}/${projectId}/${seeded.id}.ics`);

  // Remember the state for the incremental sync.
  const before: DAVCalendar = { ...garden, objects: listed };
  const syncToken = garden.syncToken;
  expect(syncToken).toBeTruthy();

  // Create (tsdav's own file name and UID).
  const uid = 'c6a1e3b0-1d2f-4c3a-9b8e-7f6d5c4b3a21';
  const created = await client.createCalendarObject({ calendar: garden, filename: `${uid}.ics`, iCalString: ics([`UID:${uid}`, 'SUMMARY:Plant tulips', 'DUE;VALUE=DATE:20261201']) });
  expect(created.status).toBe(201);
  const todos = (await call(app, 'GET', `/v1/todos?parent_id=${projectId}`, { token: u.session })).body.data as { id: string; title: string; deadline: string | null; status: string }[];
  const tulips = todos.find((t) => t.title === 'Plant tulips')!;
  expect(tulips.deadline).toBe('2026-12-01');

  // Edit it (with its ETag), then complete it.
  const [obj] = await client.fetchCalendarObjects({ calendar: garden, objectUrls: [`${garden.url}${uid}.ics`] });
  expect(obj!.data).toContain(`UID:${uid}`);
  const edited = await client.updateCalendarObject({ calendarObject: { ...obj!, data: obj!.data.replace('SUMMARY:Plant tulips', 'SUMMARY:Plant tulips and crocus') } });
  expect(edited.status).toBe(204);
  expect((await call(app, 'GET', `/v1/todos/${tulips.id}`, { token: u.session })).body.title).toBe('Plant tulips and crocus');
  const [obj2] = await client.fetchCalendarObjects({ calendar: garden, objectUrls: [`${garden.url}${uid}.ics`] });
  expect(obj2!.etag).not.toBe(obj!.etag);
  const stale = await client.updateCalendarObject({ calendarObject: { ...obj! } });
  expect(stale.status).toBe(412);
  const done = await client.updateCalendarObject({ calendarObject: { ...obj2!, data: obj2!.data.replace('STATUS:NEEDS-ACTION', 'STATUS:COMPLETED') } });
  expect(done.status).toBe(204);
  expect((await call(app, 'GET', `/v1/todos/${tulips.id}`, { token: u.session })).body.status).toBe('completed');

  // Delete the seeded one.
  const deleted = await client.deleteCalendarObject({ calendarObject: listed[0] as DAVCalendarObject });
  expect(deleted.status).toBe(204);
  expect((await call(app, 'GET', `/v1/todos/${seeded.id}`, { token: u.session })).body.trashedAt).not.toBeNull();

  // A change through /v1 and an incremental sync from the remembered token.
  await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Added over REST', parentId: projectId } });
  const synced = await client.smartCollectionSync({
    collection: { ...before, syncToken, objectMultiGet: calendarMultiGet },
    method: 'webdav',
    detailedResult: true,
  });
  const objects = synced.objects as unknown as { created: DAVCalendarObject[]; updated: DAVCalendarObject[]; deleted: DAVCalendarObject[] };
  expect(objects.created.map((o) => /SUMMARY:([^\r\n]+)/.exec(o.data)![1]).sort()).toEqual(['Added over REST', 'Plant tulips and crocus']);
  expect(objects.deleted.map((o) => o.url)).toEqual([listed[0]!.url]);
  expect(synced.syncToken).not.toBe(syncToken);
});
