// Issue 33 item 2 ("an .ics export of to-dos reuses the CalDAV serialiser"): GET of a calendar is
// the whole calendar as one iCalendar file (dav/calendar-ics.ts), each to-do serialised exactly as
// GET of its own resource serves it; checklist items come as their subtasks; another user's
// calendar is 404; nothing is cached.
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { dav, davUser } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('GET of a calendar', () => {
  it("is one VCALENDAR holding the calendar's to-dos as their own GET serves them, subtasks included", async () => {
    const u = await davUser(app);
    const project = (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Garden' } })).body.id as string;
    const a = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Prune the roses', parentId: project, deadline: '2026-12-05', checklist: [{ title: 'gloves' }] } })).body;
    const b = (await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Order seeds', parentId: project, tags: ['shop'] } })).body;
    await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'Elsewhere' } });

    const r = await dav(app, 'GET', `/dav/${u.userId}/${project}/`, { auth: u.auth });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('no-store');
    const cal = new ICAL.Component(ICAL.parse(r.text));
    expect(cal.name).toBe('vcalendar');
    expect(cal.getFirstPropertyValue('x-wr-calname')).toBe('Garden');
    const todos = cal.getAllSubcomponents('vtodo');
    const summaries = todos.map((t) => t.getFirstPropertyValue('summary')).sort();
    expect(summaries).toEqual(['Order seeds', 'Prune the roses', 'gloves']);
    // The same VTODO as GET of the item serves.
    const one = await dav(app, 'GET', `/dav/${u.userId}/${project}/${a.id}.ics`, { auth: u.auth });
    const alone = new ICAL.Component(ICAL.parse(one.text)).getFirstSubcomponent('vtodo')!;
    const inCal = todos.find((t) => t.getFirstPropertyValue('uid') === a.id)!;
    expect(inCal.toString()).toBe(alone.toString());
    expect(todos.find((t) => t.getFirstPropertyValue('uid') === b.id)!.getFirstPropertyValue('categories')).toBe('shop');

    // HEAD has no body; another user's calendar is not found.
    expect((await dav(app, 'HEAD', `/dav/${u.userId}/${project}/`, { auth: u.auth })).text).toBe('');
    const other = await davUser(app);
    expect((await dav(app, 'GET', `/dav/${u.userId}/${project}/`, { auth: other.auth })).status).toBe(404);
  });
});
