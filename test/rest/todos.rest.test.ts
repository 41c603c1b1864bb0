// DECISIONS §5 (to-dos) over HTTP: fields, placement in the item band, actions, lists, events,
// sealed-field filters and recurring completion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';

let app: TestApp;
let token: string;
let userId: string;

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  userId = u.userId;
  token = (await createPat(app, u.session, ['todos:write', 'containers:write', 'tags:read'])).token;
});
afterAll(() => app.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const post = (path: string, body?: unknown, t = token) => call(app, 'POST', path, { token: t, body });
const patch = (path: string, body: unknown) => call(app, 'PATCH', path, { token, body });
const get = (path: string, t = token) => call(app, 'GET', path, { token: t });
const pointerOf = (r: Res) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;
async function todo(body: Record<string, unknown>): Promise<Any> {
  const r = await post('/v1/todos', body);
  if (r.status !== 201) throw new Error(`todo create failed ${r.status} ${r.text}`);
  return r.body;
}
async function container(body: Record<string, unknown>): Promise<Any> {
  const r = await post('/v1/containers', body);
  if (r.status !== 200) throw new Error(`container create failed ${r.status} ${r.text}`);
  return r.body;
}
async function heading(projectId: string, name: string, after?: string | null): Promise<Any> {
  const r = await post('/v1/headings', { projectId, name, ...(after !== undefined ? { after } : {}) });
  if (r.status !== 201) throw new Error(`heading create failed ${r.status} ${r.text}`);
  return r.body;
}
const titles = (r: Res) => r.body.data.map((t: Any) => t.title);

describe('to-dos: create and fields (DECISIONS §5)', () => {
  it('creates with defaults and answers 201', async () => {
    const r = await post('/v1/todos', { title: 'Buy milk' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9A-F-]{36}$/),
      title: 'Buy milk',
      notes: null,
      status: 'open',
      completedAt: null,
      whenDate: null,
      evening: false,
      someday: false,
      deadline: null,
      priority: null,
      tags: [],
      checklist: [],
      recurrence: null,
      parentId: null,
      headingId: null,
      sortKey: expect.any(String),
      trashedAt: null,
      createdAt: '2026-11-21T12:00:00.000Z',
      updatedAt: '2026-11-21T12:00:00.000Z',
    });
  });

  it('stores every field and reads it back', async () => {
    const p = await container({ kind: 'project', name: 'Home' });
    const t = await todo({
      title: 'Paint fence',
      notes: '**white**',
      whenDate: '2026-12-01',
      evening: true,
      someday: false,
      deadline: '2026-12-10',
      priority: 'high',
      tags: ['Outdoor', 'weekend'],
      checklist: [{ title: 'buy paint' }, { title: 'sand', done: true, id: 'step-2' }],
      recurrence: { rule: 'rrule:freq=weekly;byday=sa', basis: 'schedule' },
      parentId: p.id,
    });
    const g = await get(`/v1/todos/${t.id}`);
    expect(g.body).toMatchObject({
      title: 'Paint fence',
      notes: '**white**',
      whenDate: '2026-12-01',
      evening: true,
      deadline: '2026-12-10',
      priority: 'high',
      tags: ['Outdoor', 'weekend'],
      checklist: [{ id: expect.any(String), title: 'buy paint', done: false }, { id: 'step-2', title: 'sand', done: true }],
      recurrence: { rule: 'FREQ=WEEKLY;BYDAY=SA', basis: 'schedule' },
      parentId: p.id,
      headingId: null,
    });
  });

  it('refuses unknown properties and enforces the field limits with pointers', async () => {
    expect(pointerOf(await post('/v1/todos', {}))).toBe('/title');
    expect(pointerOf(await post('/v1/todos', { title: '' }))).toBe('/title');
    expect(pointerOf(await post('/v1/todos', { title: 't'.repeat(4097) }))).toBe('/title');
    expect((await post('/v1/todos', { title: 't'.repeat(4096) })).status).toBe(201);
    expect(pointerOf(await post('/v1/todos', { title: 'x', status: 'completed' }))).toBe('/status');
    expect(pointerOf(await post('/v1/todos', { title: 'x', colour: 1 }))).toBe('/colour');
    expect(pointerOf(await post('/v1/todos', { title: 'x', notes: 'n'.repeat(100_001) }))).toBe('/notes');
    expect(pointerOf(await post('/v1/todos', { title: 'x', whenDate: '2026-02-29' }))).toBe('/whenDate');
    expect(pointerOf(await post('/v1/todos', { title: 'x', deadline: 'tomorrow' }))).toBe('/deadline');
    expect(pointerOf(await post('/v1/todos', { title: 'x', evening: 'yes' }))).toBe('/evening');
    expect(pointerOf(await post('/v1/todos', { title: 'x', someday: 1 }))).toBe('/someday');
    expect(pointerOf(await post('/v1/todos', { title: 'x', priority: 'urgent' }))).toBe('/priority');
    expect(pointerOf(await post('/v1/todos', { title: 'x', tags: 'home' }))).toBe('/tags');
    expect(pointerOf(await post('/v1/todos', { title: 'x', tags: ['t'.repeat(65)] }))).toBe('/tags/0');
    expect(pointerOf(await post('/v1/todos', { title: 'x', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }))).toBe('/tags');
    expect(pointerOf(await post('/v1/todos', { title: 'x', checklist: Array.from({ length: 101 }, () => ({ title: 's' })) }))).toBe('/checklist');
    expect(pointerOf(await post('/v1/todos', { title: 'x', checklist: [{ title: 's', extra: 1 }] }))).toBe('/checklist/0/extra');
    expect(pointerOf(await post('/v1/todos', { title: 'x', checklist: [{ title: '' }] }))).toBe('/checklist/0/title');
    expect(pointerOf(await post('/v1/todos', { title: 'x', checklist: [{ id: 'a', title: 's' }, { id: 'a', title: 't' }] }))).toBe('/checklist/1/id');
    expect(pointerOf(await post('/v1/todos', { title: 'x', recurrence: { rule: 'FREQ=HOURLY', basis: 'schedule' } }))).toBe('/recurrence/rule');
    expect(pointerOf(await post('/v1/todos', { title: 'x', recurrence: { rule: 'FREQ=DAILY', basis: 'whenever' } }))).toBe('/recurrence/basis');
    expect(pointerOf(await post('/v1/todos', { title: 'x', recurrence: { rule: 'FREQ=DAILY' } }))).toBe('/recurrence/basis');
  });

  it('an unknown tag name creates the tag; a known one (any case) is reused', async () => {
    const before = (await get('/v1/tags?limit=200')).body.data.length;
    const a = await todo({ title: 'a', tags: ['Errands', 'errands', 'Shop'] });
    expect(a.tags).toEqual(['Errands', 'Shop']);
    const b = await todo({ title: 'b', tags: ['SHOP'] });
    expect(b.tags).toEqual(['Shop']);
    const tags = (await get('/v1/tags?limit=200')).body.data.map((t: Any) => t.name);
    expect(tags.length).toBe(before + 2);
    expect(tags).toEqual(expect.arrayContaining(['Errands', 'Shop']));
  });

  it('client ids: UPPERCASE UUID, duplicate_id on a to-do id, conflict on another resource id', async () => {
    const id = 'ABCDEF00-0000-4000-8000-000000000001';
    expect((await todo({ title: 'with id', id })).id).toBe(id);
    expectProblem(await post('/v1/todos', { title: 'again', id }), 409, 'duplicate_id');
    expect(pointerOf(await post('/v1/todos', { title: 'x', id: 'not-a-uuid' }))).toBe('/id');
    const c = await container({ kind: 'area', name: 'id holder', id: 'ABCDEF00-0000-4000-8000-000000000002' });
    expectProblem(await post('/v1/todos', { title: 'clash', id: c.id }), 409, 'conflict');
  });
});

describe('to-dos: where they sit', () => {
  let area: Any;
  let project: Any;
  let sub: Any;
  beforeAll(async () => {
    area = await container({ kind: 'area', name: 'Area' });
    project = await container({ kind: 'project', name: 'Project', parentId: area.id });
    sub = await container({ kind: 'subproject', name: 'Sub', parentId: project.id });
  });

  it('a to-do sits in a live project or subproject, never in an area', async () => {
    expect((await todo({ title: 'in project', parentId: project.id })).parentId).toBe(project.id);
    expect((await todo({ title: 'in sub', parentId: sub.id })).parentId).toBe(sub.id);
    expect(pointerOf(await post('/v1/todos', { title: 'in area', parentId: area.id }))).toBe('/parentId');
    expect(pointerOf(await post('/v1/todos', { title: 'ghost', parentId: '00000000-0000-4000-8000-000000000000' }))).toBe('/parentId');
    const trashed = await container({ kind: 'project', name: 'Trashed' });
    await post(`/v1/containers/${trashed.id}/trash`);
    expect(pointerOf(await post('/v1/todos', { title: 'into trash', parentId: trashed.id }))).toBe('/parentId');
  });

  it('a to-do under a heading has parentId = its project; a mismatch is refused at /headingId', async () => {
    const h = await heading(project.id, 'Next');
    const a = await todo({ title: 'under heading', headingId: h.id });
    expect(a).toMatchObject({ parentId: project.id, headingId: h.id });
    const b = await todo({ title: 'explicit', parentId: project.id, headingId: h.id });
    expect(b.headingId).toBe(h.id);
    expect(pointerOf(await post('/v1/todos', { title: 'wrong', parentId: sub.id, headingId: h.id }))).toBe('/headingId');
    expect(pointerOf(await post('/v1/todos', { title: 'standalone', parentId: null, headingId: h.id }))).toBe('/headingId');
    expect(pointerOf(await post('/v1/todos', { title: 'ghost', headingId: '00000000-0000-4000-8000-000000000000' }))).toBe('/headingId');
  });

  it('lists a container in app order: heading-less to-dos first, then each heading in heading order', async () => {
    const p = await container({ kind: 'project', name: 'Ordered' });
    const h2 = await heading(p.id, 'H2');
    const h1 = await heading(p.id, 'H1', null);
    await todo({ title: 'h2-a', headingId: h2.id });
    await todo({ title: 'root-a', parentId: p.id });
    await todo({ title: 'h1-a', headingId: h1.id });
    await todo({ title: 'h2-b', headingId: h2.id });
    await todo({ title: 'root-b', parentId: p.id });
    expect(titles(await get(`/v1/todos?parent_id=${p.id}`))).toEqual(['root-a', 'root-b', 'h1-a', 'h2-a', 'h2-b']);
    expect(titles(await get(`/v1/todos?parent_id=${p.id}&heading_id=null`))).toEqual(['root-a', 'root-b']);
    expect(titles(await get(`/v1/todos?heading_id=${h2.id}`))).toEqual(['h2-a', 'h2-b']);
    // Paging walks the same order across bands.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Res = await get(`/v1/todos?parent_id=${p.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...titles(r));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['root-a', 'root-b', 'h1-a', 'h2-a', 'h2-b']);
  });

  it('move changes container and heading, and after/before place it within the band', async () => {
    const p = await container({ kind: 'project', name: 'Mover' });
    const s2 = await container({ kind: 'subproject', name: 'Mover sub', parentId: p.id });
    const h = await heading(p.id, 'H');
    const a = await todo({ title: 'a', parentId: p.id });
    const b = await todo({ title: 'b', parentId: p.id });
    const c = await todo({ title: 'c', parentId: p.id });
    const m = await todo({ title: 'm' });
    const band = async () => titles(await get(`/v1/todos?parent_id=${p.id}&heading_id=null`));

    const r = await post(`/v1/todos/${m.id}/move`, { parentId: p.id, after: a.id });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ parentId: p.id, headingId: null });
    expect(await band()).toEqual(['a', 'm', 'b', 'c']);
    await post(`/v1/todos/${m.id}/move`, { parentId: p.id, before: a.id });
    expect(await band()).toEqual(['m', 'a', 'b', 'c']);
    await post(`/v1/todos/${m.id}/move`, { parentId: p.id, after: c.id });
    expect(await band()).toEqual(['a', 'b', 'c', 'm']);
    await post(`/v1/todos/${m.id}/move`, { parentId: p.id, before: c.id });
    expect(await band()).toEqual(['a', 'b', 'm', 'c']);
    // Into a heading (parentId must be the heading's project), then a subproject, then standalone.
    const inH = await post(`/v1/todos/${m.id}/move`, { parentId: p.id, headingId: h.id });
    expect(inH.body).toMatchObject({ parentId: p.id, headingId: h.id });
    expect(titles(await get(`/v1/todos?heading_id=${h.id}`))).toEqual(['m']);
    expect((await post(`/v1/todos/${m.id}/move`, { parentId: s2.id })).body).toMatchObject({ parentId: s2.id, headingId: null });
    expect((await post(`/v1/todos/${m.id}/move`, { parentId: null })).body).toMatchObject({ parentId: null, headingId: null });

    // Neighbours must be live items of the destination band.
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: s2.id, after: a.id }))).toBe('/after');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: p.id, before: m.id }))).toBe('/before');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: p.id, after: a.id, before: b.id }))).toBe('/before');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: p.id, after: '00000000-0000-4000-8000-000000000000' }))).toBe('/after');
    await post(`/v1/todos/${b.id}/trash`);
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: p.id, after: b.id }))).toBe('/after');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: s2.id, headingId: h.id }))).toBe('/headingId');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { parentId: area.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/todos/${m.id}/move`, { headingId: h.id }))).toBe('/parentId');
  });
});

describe('to-dos: PATCH', () => {
  it('changes fields one by one; null clears; tags and checklist are replaced', async () => {
    const t = await todo({ title: 'Orig', notes: 'n', deadline: '2026-12-01', tags: ['one', 'two'], checklist: [{ id: 'c1', title: 'first' }] });
    app.clock.advance(1000);
    const r = await patch(`/v1/todos/${t.id}`, {
      title: 'New',
      notes: null,
      deadline: null,
      whenDate: '2026-11-30',
      someday: true,
      priority: 'low',
      tags: ['two', 'three'],
      checklist: [{ id: 'c1', title: 'first', done: true }, { title: 'second' }],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'New', notes: null, deadline: null, whenDate: '2026-11-30', someday: true, priority: 'low', tags: ['two', 'three'] });
    expect(r.body.checklist).toEqual([{ id: 'c1', title: 'first', done: true }, { id: expect.any(String), title: 'second', done: false }]);
    expect(r.body.updatedAt).toBe(new Date(app.clock()).toISOString());
    const again = await patch(`/v1/todos/${t.id}`, { recurrence: { rule: 'FREQ=DAILY', basis: 'completion' } });
    expect(again.body.recurrence).toEqual({ rule: 'FREQ=DAILY', basis: 'completion' });
    expect((await patch(`/v1/todos/${t.id}`, { recurrence: null })).body.recurrence).toBeNull();
    expect((await patch(`/v1/todos/${t.id}`, { tags: [] })).body.tags).toEqual([]);
  });

  it('refuses parentId, headingId and status with a pointer, and bad values', async () => {
    const t = await todo({ title: 'x' });
    const pp = expectProblem(await patch(`/v1/todos/${t.id}`, { parentId: null }), 422, 'validation_failed');
    expect(pp.errors?.[0]).toMatchObject({ pointer: '/parentId', message: expect.stringMatching(/move/) });
    expect(pointerOf(await patch(`/v1/todos/${t.id}`, { headingId: null }))).toBe('/headingId');
    const ps = expectProblem(await patch(`/v1/todos/${t.id}`, { status: 'completed' }), 422, 'validation_failed');
    expect(ps.errors?.[0]).toMatchObject({ pointer: '/status', message: expect.stringMatching(/complete/) });
    expect(pointerOf(await patch(`/v1/todos/${t.id}`, { title: null }))).toBe('/title');
    expect(pointerOf(await patch(`/v1/todos/${t.id}`, { whenDate: '2026-1-1' }))).toBe('/whenDate');
    expectProblem(await patch('/v1/todos/00000000-0000-4000-8000-000000000000', { title: 'x' }), 404, 'not_found');
  });
});

describe('to-dos: complete, cancel, reopen, trash, delete', () => {
  it('complete sets completedAt, reopen clears it, cancel is its own status', async () => {
    const t = await todo({ title: 'finish me' });
    app.clock.advance(60_000);
    const c = await post(`/v1/todos/${t.id}/complete`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ status: 'completed', completedAt: new Date(app.clock()).toISOString(), loggedCopyId: null });
    const at = c.body.completedAt;
    app.clock.advance(60_000);
    // Completing again changes nothing.
    expect((await post(`/v1/todos/${t.id}/complete`)).body.completedAt).toBe(at);
    const r = await post(`/v1/todos/${t.id}/reopen`);
    expect(r.body).toMatchObject({ status: 'open', completedAt: null });
    const x = await post(`/v1/todos/${t.id}/cancel`);
    expect(x.body).toMatchObject({ status: 'canceled', completedAt: new Date(app.clock()).toISOString() });
    expect((await post(`/v1/todos/${t.id}/complete`)).body.status).toBe('completed');
    expectProblem(await post('/v1/todos/00000000-0000-4000-8000-000000000000/complete'), 404, 'not_found');
    expect(pointerOf(await post(`/v1/todos/${t.id}/complete?today=2026-13-01`))).toBe('/today');
    expect(pointerOf(await post(`/v1/todos/${t.id}/reopen`, { force: true }))).toBe('/force');
  });

  it('`today` is a query parameter of the POST actions (also accepted in the body; the body wins)', async () => {
    const doc = (await call(app, 'GET', '/openapi.json')).body;
    for (const path of ['/v1/todos/{id}/complete', '/v1/todos/{id}/cancel', '/v1/headings/{id}/complete']) {
      expect(doc.paths[path].post.parameters.map((p: Any) => `${p.in}:${p.name}`), path).toContain('query:today');
    }
    const t = await todo({ title: 'body today', whenDate: '2026-11-01', recurrence: { rule: 'FREQ=DAILY', basis: 'completion' } });
    expect((await post(`/v1/todos/${t.id}/complete?today=2026-11-10`, { today: '2026-11-20' })).body.whenDate).toBe('2026-11-21');
    expect((await post(`/v1/todos/${t.id}/complete?today=2026-11-10`)).body.whenDate).toBe('2026-11-11');
  });

  it('the status filter decrypts in the request and pages', async () => {
    const p = await container({ kind: 'project', name: 'Statuses' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await todo({ title: `s${i}`, parentId: p.id })).id);
    await post(`/v1/todos/${ids[1]}/complete`);
    await post(`/v1/todos/${ids[3]}/complete`);
    await post(`/v1/todos/${ids[4]}/cancel`);
    expect(titles(await get(`/v1/todos?parent_id=${p.id}&status=completed`))).toEqual(['s1', 's3']);
    expect(titles(await get(`/v1/todos?parent_id=${p.id}&status=canceled`))).toEqual(['s4']);
    const first = await get(`/v1/todos?parent_id=${p.id}&status=open&limit=2`);
    expect(titles(first)).toEqual(['s0', 's2']);
    const second = await get(`/v1/todos?parent_id=${p.id}&status=open&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(titles(second)).toEqual(['s5']);
    expect(second.body.next_cursor).toBeNull();
    expect(pointerOf(await get('/v1/todos?status=done'))).toBe('/status');
    expect(pointerOf(await get('/v1/todos?include_trashed=1'))).toBe('/include_trashed');
  });

  it('trash takes a to-do out of lists; restore brings it back; include_trashed shows it', async () => {
    const p = await container({ kind: 'project', name: 'Trash test' });
    const t = await todo({ title: 'bin me', parentId: p.id });
    const tr = await post(`/v1/todos/${t.id}/trash`);
    expect(tr.body.trashedAt).toBe(new Date(app.clock()).toISOString());
    expect(titles(await get(`/v1/todos?parent_id=${p.id}`))).toEqual([]);
    expect(titles(await get(`/v1/todos?parent_id=${p.id}&include_trashed=true`))).toEqual(['bin me']);
    expect((await post(`/v1/todos/${t.id}/restore`)).body.trashedAt).toBeNull();
    expect(titles(await get(`/v1/todos?parent_id=${p.id}`))).toEqual(['bin me']);
  });

  it("a trashed container's to-dos leave live lists and come back with it", async () => {
    const area = await container({ kind: 'area', name: 'Box' });
    const p = await container({ kind: 'project', name: 'In box', parentId: area.id });
    const s = await container({ kind: 'subproject', name: 'Deeper', parentId: p.id });
    const a = await todo({ title: 'in project', parentId: p.id });
    const b = await todo({ title: 'in sub', parentId: s.id });
    const loose = await todo({ title: 'standalone survivor' });
    await post(`/v1/containers/${area.id}/trash`);
    const live = (await get('/v1/todos?limit=200')).body.data.map((t: Any) => t.id);
    expect(live).not.toContain(a.id);
    expect(live).not.toContain(b.id);
    expect(live).toContain(loose.id);
    // The to-dos themselves keep trashedAt null and stay readable.
    expect((await get(`/v1/todos/${b.id}`)).body.trashedAt).toBeNull();
    const all = (await get('/v1/todos?limit=200&include_trashed=true')).body.data.map((t: Any) => t.id);
    expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
    await post(`/v1/containers/${area.id}/restore`);
    const back = (await get('/v1/todos?limit=200')).body.data.map((t: Any) => t.id);
    expect(back).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it('DELETE answers 204 and the to-do is gone', async () => {
    const t = await todo({ title: 'delete me', tags: ['gone'] });
    const d = await call(app, 'DELETE', `/v1/todos/${t.id}`, { token });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    expectProblem(await get(`/v1/todos/${t.id}`), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/todos/${t.id}`, { token }), 404, 'not_found');
  });

  it('updated_since returns what changed since the instant', async () => {
    const t = await todo({ title: 'old news' });
    app.clock.advance(3_600_000);
    const since = new Date(app.clock()).toISOString();
    await patch(`/v1/todos/${t.id}`, { title: 'fresh' });
    expect(titles(await get(`/v1/todos?updated_since=${since}`))).toEqual(['fresh']);
  });

  it("another user's to-dos are invisible", async () => {
    const t = await todo({ title: 'private' });
    const other = await registerUser(app);
    const ot = (await createPat(app, other.session, ['todos:write'])).token;
    expectProblem(await get(`/v1/todos/${t.id}`, ot), 404, 'not_found');
    expectProblem(await post(`/v1/todos/${t.id}/complete`, undefined, ot), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/todos/${t.id}`, { token: ot }), 404, 'not_found');
    expect((await get('/v1/todos', ot)).body.data).toEqual([]);
    expectProblem(await post(`/v1/todos/${t.id}/move`, { parentId: null }, ot), 404, 'not_found');
    expectProblem(await call(app, 'PATCH', `/v1/todos/${t.id}`, { token: ot, body: { title: 'mine now' } }), 404, 'not_found');
    // Nor can they be used as a neighbour or a parent.
    const theirs = (await post('/v1/todos', { title: 'theirs' }, ot)).body;
    expect(pointerOf(await post(`/v1/todos/${theirs.id}/move`, { parentId: null, after: t.id }, ot))).toBe('/after');
  });
});

describe('to-dos: events (spec §6.2)', () => {
  it('every write records todo.created/updated/deleted with no content', async () => {
    const before = eventsOf(app.deps.db, userId).length;
    const t = await todo({ title: 'SecretTitle', notes: 'SecretNotes', tags: ['SecretTag'] });
    await patch(`/v1/todos/${t.id}`, { title: 'SecretTitle2' });
    await post(`/v1/todos/${t.id}/complete`);
    await post(`/v1/todos/${t.id}/reopen`);
    await post(`/v1/todos/${t.id}/move`, { parentId: null });
    await post(`/v1/todos/${t.id}/trash`);
    await post(`/v1/todos/${t.id}/restore`);
    await call(app, 'DELETE', `/v1/todos/${t.id}`, { token });
    const evs = eventsOf(app.deps.db, userId).slice(before);
    const mine = evs.filter((e) => e.data.object === 'todo');
    expect(mine.map((e) => e.type)).toEqual([
      'todo.created',
      'todo.updated',
      'todo.updated',
      'todo.updated',
      'todo.updated',
      'todo.updated',
      'todo.updated',
      'todo.deleted',
    ]);
    for (const e of mine) expect(e.data).toEqual({ object: 'todo', id: t.id, sub: userId });
    // The new tag was announced too; nothing carries content.
    expect(evs.filter((e) => e.type === 'tag.created')).toHaveLength(1);
    expect(JSON.stringify(evs)).not.toMatch(/Secret/);
    // A no-op (completing twice) and a refused write record nothing.
    const t2 = await todo({ title: 'once' });
    await post(`/v1/todos/${t2.id}/complete`);
    const n = eventsOf(app.deps.db, userId).length;
    await post(`/v1/todos/${t2.id}/complete`);
    await patch(`/v1/todos/${t2.id}`, { title: '' });
    expect(eventsOf(app.deps.db, userId).length).toBe(n);
  });
});

describe('to-dos: account_too_large (spec §7)', () => {
  it('a status filter past CAIRN_MAX_ACCOUNT_ITEMS is refused', async () => {
    const small = await startApp({ CAIRN_MAX_ACCOUNT_ITEMS: '5' });
    try {
      const u = await registerUser(small);
      for (let i = 0; i < 5; i++) await call(small, 'POST', '/v1/todos', { token: u.session, body: { title: `t${i}` } });
      expect((await call(small, 'GET', '/v1/todos?status=completed', { token: u.session })).status).toBe(200);
      await call(small, 'POST', '/v1/todos', { token: u.session, body: { title: 't5' } });
      expectProblem(await call(small, 'GET', '/v1/todos?status=completed', { token: u.session }), 422, 'account_too_large');
      expect((await call(small, 'GET', '/v1/todos', { token: u.session })).body.data).toHaveLength(6);
    } finally {
      await small.close();
    }
  });
});

describe('to-dos: recurrence (DECISIONS §5)', () => {
  it('completing logs a completed copy and rolls the original, moving the deadline by the same offset', async () => {
    const p = await container({ kind: 'project', name: 'Chores' });
    const t = await todo({
      title: 'Water plants',
      parentId: p.id,
      whenDate: '2026-11-23',
      deadline: '2026-11-25',
      tags: ['home'],
      checklist: [{ id: 'k1', title: 'ferns', done: true }],
      recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' },
    });
    app.clock.advance(1000);
    const c = await post(`/v1/todos/${t.id}/complete?today=2026-11-21`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ id: t.id, status: 'open', completedAt: null, whenDate: '2026-11-30', deadline: '2026-12-02', loggedCopyId: expect.any(String) });
    expect(c.body.checklist).toEqual([{ id: 'k1', title: 'ferns', done: false }]);
    const copyId = c.body.loggedCopyId;
    expect(copyId).not.toBe(t.id);
    const copy = await get(`/v1/todos/${copyId}`);
    expect(copy.body).toMatchObject({
      title: 'Water plants',
      status: 'completed',
      completedAt: new Date(app.clock()).toISOString(),
      whenDate: '2026-11-23',
      deadline: '2026-11-25',
      recurrence: null,
      tags: ['home'],
      parentId: p.id,
    });
    expect(copy.body.checklist).toEqual([{ id: 'k1', title: 'ferns', done: true }]);
    // The logbook (completed to-dos) shows the copy; the original stays open.
    expect((await get(`/v1/todos?parent_id=${p.id}&status=completed`)).body.data.map((x: Any) => x.id)).toEqual([copyId]);
    expect((await get(`/v1/todos?parent_id=${p.id}&status=open`)).body.data.map((x: Any) => x.id)).toEqual([t.id]);
    const evs = eventsOf(app.deps.db, userId).slice(-2);
    expect(evs.map((e) => `${e.type} ${e.data.id}`)).toEqual([`todo.created ${copyId}`, `todo.updated ${t.id}`]);
  });

  it('COUNT exhausted: the last occurrence completes for good', async () => {
    const t = await todo({ title: 'Three times', whenDate: '2026-11-21', recurrence: { rule: 'FREQ=DAILY;COUNT=3', basis: 'schedule' } });
    const one = await post(`/v1/todos/${t.id}/complete`);
    expect(one.body).toMatchObject({ status: 'open', whenDate: '2026-11-22' });
    const two = await post(`/v1/todos/${t.id}/complete`);
    expect(two.body).toMatchObject({ status: 'open', whenDate: '2026-11-23' });
    const three = await post(`/v1/todos/${t.id}/complete`);
    expect(three.body).toMatchObject({ status: 'completed', whenDate: '2026-11-23', loggedCopyId: null });
    expect(three.body.completedAt).not.toBeNull();
    // Reopened and completed again it does not roll past the end of the series.
    await post(`/v1/todos/${t.id}/reopen`);
    expect((await post(`/v1/todos/${t.id}/complete`)).body.status).toBe('completed');
  });

  it('UNTIL passed: completes for good', async () => {
    const t = await todo({ title: 'Until', whenDate: '2026-11-30', recurrence: { rule: 'FREQ=WEEKLY;UNTIL=20261205', basis: 'schedule' } });
    expect((await post(`/v1/todos/${t.id}/complete`)).body).toMatchObject({ status: 'completed', loggedCopyId: null });
  });

  it('schedule basis counts from whenDate whether today is before or after it', async () => {
    const late = await todo({ title: 'overdue daily', whenDate: '2026-11-10', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } });
    expect((await post(`/v1/todos/${late.id}/complete?today=2026-11-21`)).body.whenDate).toBe('2026-11-11');
    const early = await todo({ title: 'early weekly', whenDate: '2026-12-07', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    expect((await post(`/v1/todos/${early.id}/complete?today=2026-11-21`)).body.whenDate).toBe('2026-12-14');
  });

  it('completion basis counts from the today of the completing request (before or after whenDate)', async () => {
    const a = await todo({ title: 'after', whenDate: '2026-11-10', deadline: '2026-11-12', recurrence: { rule: 'FREQ=DAILY;INTERVAL=3', basis: 'completion' } });
    const ra = await post(`/v1/todos/${a.id}/complete?today=2026-11-21`);
    expect(ra.body).toMatchObject({ whenDate: '2026-11-24', deadline: '2026-11-26' });
    const b = await todo({ title: 'before', whenDate: '2026-12-01', recurrence: { rule: 'FREQ=WEEKLY', basis: 'completion' } });
    expect((await post(`/v1/todos/${b.id}/complete?today=2026-11-21`)).body.whenDate).toBe('2026-11-28');
    // Without ?today the server's UTC date (from the clock) is used.
    app.clock.set(Date.parse('2026-11-25T23:59:00Z'));
    const c = await todo({ title: 'clock', whenDate: '2026-11-01', recurrence: { rule: 'FREQ=DAILY', basis: 'completion' } });
    expect((await post(`/v1/todos/${c.id}/complete`)).body.whenDate).toBe('2026-11-26');
  });

  it('month end: Jan 31 monthly falls on the last day of shorter months', async () => {
    const t = await todo({ title: 'rent', whenDate: '2027-01-31', recurrence: { rule: 'FREQ=MONTHLY', basis: 'schedule' } });
    const dates: string[] = [];
    for (let i = 0; i < 3; i++) dates.push((await post(`/v1/todos/${t.id}/complete`)).body.whenDate);
    expect(dates).toEqual(['2027-02-28', '2027-03-31', '2027-04-30']);
  });

  it('leap day: a yearly Feb 29 to-do lands on Feb 28 in common years and Feb 29 in leap years', async () => {
    const t = await todo({ title: 'leap', whenDate: '2028-02-29', recurrence: { rule: 'FREQ=YEARLY', basis: 'schedule' } });
    const dates: string[] = [];
    for (let i = 0; i < 4; i++) dates.push((await post(`/v1/todos/${t.id}/complete`)).body.whenDate);
    expect(dates).toEqual(['2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29']);
  });

  it('BYDAY sets step through the listed weekdays', async () => {
    // 2026-11-25 is a Wednesday.
    const t = await todo({ title: 'gym', whenDate: '2026-11-25', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO,WE,FR', basis: 'schedule' } });
    const dates: string[] = [];
    for (let i = 0; i < 4; i++) dates.push((await post(`/v1/todos/${t.id}/complete`)).body.whenDate);
    expect(dates).toEqual(['2026-11-27', '2026-11-30', '2026-12-02', '2026-12-04']);
    const last = await todo({ title: 'last friday', whenDate: '2026-11-27', recurrence: { rule: 'FREQ=MONTHLY;BYDAY=-1FR', basis: 'schedule' } });
    expect((await post(`/v1/todos/${last.id}/complete`)).body.whenDate).toBe('2026-12-25');
  });

  it('moving the date by hand restarts the series there; changing the rule restarts COUNT', async () => {
    // 2026-11-23 is a Monday: a bare weekly rule repeats on Mondays until the date moves.
    const t = await todo({ title: 'weekly', whenDate: '2026-11-23', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    expect((await post(`/v1/todos/${t.id}/complete`)).body.whenDate).toBe('2026-11-30');
    await patch(`/v1/todos/${t.id}`, { whenDate: '2026-12-02' });
    expect((await post(`/v1/todos/${t.id}/complete`)).body.whenDate).toBe('2026-12-09');
    // A deadline-only series restarts when its deadline is moved.
    const d = await todo({ title: 'timesheet', deadline: '2027-01-29', recurrence: { rule: 'FREQ=MONTHLY', basis: 'schedule' } });
    expect((await post(`/v1/todos/${d.id}/complete`)).body).toMatchObject({ whenDate: null, deadline: '2027-02-28' });
    await patch(`/v1/todos/${d.id}`, { deadline: '2027-03-15' });
    expect((await post(`/v1/todos/${d.id}/complete`)).body.deadline).toBe('2027-04-15');
    // COUNT=2: one completion left; a new rule starts counting again.
    const c = await todo({ title: 'twice', whenDate: '2026-11-21', recurrence: { rule: 'FREQ=DAILY;COUNT=2', basis: 'schedule' } });
    expect((await post(`/v1/todos/${c.id}/complete`)).body.status).toBe('open');
    await patch(`/v1/todos/${c.id}`, { recurrence: { rule: 'FREQ=DAILY;COUNT=3', basis: 'schedule' } });
    expect((await post(`/v1/todos/${c.id}/complete`)).body.status).toBe('open');
    expect((await post(`/v1/todos/${c.id}/complete`)).body.status).toBe('open');
    expect((await post(`/v1/todos/${c.id}/complete`)).body.status).toBe('completed');
  });

  it('cancel of a recurring to-do logs a canceled copy and rolls on', async () => {
    const t = await todo({ title: 'skip one', whenDate: '2026-11-23', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    const c = await post(`/v1/todos/${t.id}/cancel`);
    expect(c.body).toMatchObject({ status: 'open', whenDate: '2026-11-30' });
    expect((await get(`/v1/todos/${c.body.loggedCopyId}`)).body).toMatchObject({ status: 'canceled', whenDate: '2026-11-23' });
  });
});
