// Spec §2.2, §3 (heading rows and rules), §4.5 over HTTP, including convert's id-derivation and
// retry rules with a simulated partial failure.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { convertSteps, derivedSubprojectId } from '../../routers/headings/model.js';

let app: TestApp;
let token: string;
let userId: string;

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  userId = u.userId;
  token = (await createPat(app, u.session, ['containers:write', 'todos:write'])).token;
});
afterAll(() => app.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const post = (path: string, body?: unknown, headers?: Record<string, string>) => call(app, 'POST', path, { token, body, ...(headers ? { headers } : {}) });
const get = (path: string) => call(app, 'GET', path, { token });
const pointerOf = (r: Res) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;
async function container(body: Record<string, unknown>): Promise<Any> {
  const r = await post('/v1/containers', body);
  if (r.status !== 200) throw new Error(`container create failed ${r.status} ${r.text}`);
  return r.body;
}
async function heading(projectId: string, name: string, extra: Record<string, unknown> = {}): Promise<Any> {
  const r = await post('/v1/headings', { projectId, name, ...extra });
  if (r.status !== 201) throw new Error(`heading create failed ${r.status} ${r.text}`);
  return r.body;
}
async function todo(body: Record<string, unknown>): Promise<Any> {
  const r = await post('/v1/todos', body);
  if (r.status !== 201) throw new Error(`todo create failed ${r.status} ${r.text}`);
  return r.body;
}
const names = (r: Res) => r.body.data.map((h: Any) => h.name);

describe('headings: create and order (spec §2.2)', () => {
  it('creates a heading in a project with 201 and openCount 0', async () => {
    const p = await container({ kind: 'project', name: 'P' });
    const r = await post('/v1/headings', { projectId: p.id, name: 'Planning' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      projectId: p.id,
      name: 'Planning',
      sortKey: expect.any(String),
      openCount: 0,
      createdAt: '2026-11-21T12:00:00.000Z',
      updatedAt: '2026-11-21T12:00:00.000Z',
    });
    expect((await get(`/v1/headings/${r.body.id}`)).body.name).toBe('Planning');
  });

  it('validates projectId and name; an area or a trashed project is refused', async () => {
    const area = await container({ kind: 'area', name: 'A' });
    const p = await container({ kind: 'project', name: 'P', parentId: area.id });
    const sub = await container({ kind: 'subproject', name: 'S', parentId: p.id });
    expect(pointerOf(await post('/v1/headings', { name: 'x' }))).toBe('/projectId');
    expect(pointerOf(await post('/v1/headings', { projectId: '', name: 'x' }))).toBe('/projectId');
    expect(pointerOf(await post('/v1/headings', { projectId: 'p'.repeat(65), name: 'x' }))).toBe('/projectId');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id }))).toBe('/name');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'n'.repeat(513) }))).toBe('/name');
    expect((await post('/v1/headings', { projectId: p.id, name: 'n'.repeat(512) })).status).toBe(201);
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'x', colour: 'red' }))).toBe('/colour');
    const a = expectProblem(await post('/v1/headings', { projectId: area.id, name: 'x' }), 422, 'validation_failed');
    expect(a.errors?.[0]).toMatchObject({ pointer: '/projectId', message: expect.stringMatching(/area/) });
    expect(pointerOf(await post('/v1/headings', { projectId: '00000000-0000-4000-8000-000000000000', name: 'x' }))).toBe('/projectId');
    // A subproject may hold headings (spec §2.2 projectId: "a live project or subproject").
    expect((await post('/v1/headings', { projectId: sub.id, name: 'in sub' })).status).toBe(201);
    await post(`/v1/containers/${area.id}/trash`);
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'x' }))).toBe('/projectId');
    await post(`/v1/containers/${area.id}/restore`);
  });

  it('client ids: duplicate_id on a heading id, conflict on another resource id', async () => {
    const p = await container({ kind: 'project', name: 'Ids' });
    const id = 'BEEF0000-0000-4000-8000-000000000001';
    expect((await heading(p.id, 'one', { id })).id).toBe(id);
    expectProblem(await post('/v1/headings', { projectId: p.id, name: 'two', id }), 409, 'duplicate_id');
    expectProblem(await post('/v1/headings', { projectId: p.id, name: 'three', id: p.id }), 409, 'conflict');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'four', id: 'lower-case' }))).toBe('/id');
  });

  it('after: omitted = last, null = first, an id = right after it', async () => {
    const p = await container({ kind: 'project', name: 'Order' });
    const a = await heading(p.id, 'A');
    await heading(p.id, 'B');
    await heading(p.id, 'First', { after: null });
    await heading(p.id, 'AfterA', { after: a.id });
    await heading(p.id, 'Last');
    expect(names(await get(`/v1/headings?project_id=${p.id}`))).toEqual(['First', 'A', 'AfterA', 'B', 'Last']);
    const other = await container({ kind: 'project', name: 'Other' });
    const o = await heading(other.id, 'O');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'x', after: o.id }))).toBe('/after');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'x', after: 'nope' }))).toBe('/after');
  });

  it('openCount counts open, untrashed to-dos under the heading', async () => {
    const p = await container({ kind: 'project', name: 'Counts' });
    const h = await heading(p.id, 'H');
    const ts = [];
    for (let i = 0; i < 4; i++) ts.push(await todo({ title: `t${i}`, headingId: h.id }));
    await todo({ title: 'not under', parentId: p.id });
    await post(`/v1/todos/${ts[0].id}/complete`);
    await post(`/v1/todos/${ts[1].id}/trash`);
    expect((await get(`/v1/headings/${h.id}`)).body.openCount).toBe(2);
    expect((await get(`/v1/headings?project_id=${p.id}`)).body.data[0].openCount).toBe(2);
  });
});

describe('headings: list (spec §4.5)', () => {
  let t: string;
  beforeAll(async () => {
    const u = await registerUser(app);
    t = u.session;
  });

  it("with a project: its headings in order; without: all grouped by project; trashed projects' left out", async () => {
    const mk = async (path: string, body: unknown) => (await call(app, 'POST', path, { token: t, body })).body;
    const area = await mk('/v1/containers', { kind: 'area', name: 'Area' });
    const p1 = await mk('/v1/containers', { kind: 'project', name: 'P1' });
    const p2 = await mk('/v1/containers', { kind: 'project', name: 'P2', parentId: area.id });
    const p3 = await mk('/v1/containers', { kind: 'project', name: 'P3' });
    for (const [p, n] of [[p1, 'a1'], [p2, 'b1'], [p1, 'a2'], [p3, 'c1'], [p2, 'b2'], [p1, 'a3']] as const) {
      await mk('/v1/headings', { projectId: p.id, name: n });
    }
    const list = (q: string) => call(app, 'GET', `/v1/headings${q}`, { token: t });
    expect(names(await list(`?project_id=${p1.id}`))).toEqual(['a1', 'a2', 'a3']);
    expect(names(await list(`?projectId=${p2.id}`))).toEqual(['b1', 'b2']);
    const all = (await list('')).body.data as Any[];
    expect(all).toHaveLength(8 - 2);
    // Grouped: each project's headings are contiguous and in order.
    const groups = all.map((h) => h.projectId).filter((id, i, arr) => i === 0 || arr[i - 1] !== id);
    expect(new Set(groups).size).toBe(groups.length);
    for (const [p, want] of [[p1, ['a1', 'a2', 'a3']], [p2, ['b1', 'b2']], [p3, ['c1']]] as const) {
      expect(all.filter((h) => h.projectId === p.id).map((h) => h.name)).toEqual(want);
    }
    // Paging walks the same grouped order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Res = await list(`?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...names(r));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((h) => h.name));
    // Trashed projects (and projects inside a trashed area) drop out of every list.
    await call(app, 'POST', `/v1/containers/${p1.id}/trash`, { token: t });
    await call(app, 'POST', `/v1/containers/${area.id}/trash`, { token: t });
    expect(names(await list(''))).toEqual(['c1']);
    expect(names(await list(`?project_id=${p1.id}`))).toEqual([]);
    await call(app, 'POST', `/v1/containers/${area.id}/restore`, { token: t });
    expect(names(await list(`?project_id=${p2.id}`))).toEqual(['b1', 'b2']);
    expect(pointerOf(await list(`?project_id=${p2.id}&projectId=${p3.id}`))).toBe('/projectId');
    expect(pointerOf(await list(`?project_id=${'x'.repeat(65)}`))).toBe('/project_id');
    expect(pointerOf(await list('?project=1'))).toBe('/project');
  });
});

describe('headings: a trashed project (spec §3 rule 1)', () => {
  it('its heading is readable by id but every write is validation_failed until restore', async () => {
    const p = await container({ kind: 'project', name: 'Binned' });
    const h = await heading(p.id, 'Frozen');
    const t = await todo({ title: 'under frozen', headingId: h.id });
    await post(`/v1/containers/${p.id}/trash`);
    expect((await get(`/v1/headings/${h.id}`)).body).toMatchObject({ id: h.id, name: 'Frozen', openCount: 1 });
    expectProblem(await call(app, 'PATCH', `/v1/headings/${h.id}`, { token, body: { name: 'x' } }), 422, 'validation_failed');
    expectProblem(await call(app, 'DELETE', `/v1/headings/${h.id}`, { token }), 422, 'validation_failed');
    expectProblem(await post(`/v1/headings/${h.id}/convert`), 422, 'validation_failed');
    expectProblem(await post(`/v1/headings/${h.id}/complete`), 422, 'validation_failed');
    expect((await get(`/v1/todos/${t.id}`)).body.status).toBe('open');
    // A project inside a trashed area counts as trashed too.
    const area = await container({ kind: 'area', name: 'Binned area' });
    const p2 = await container({ kind: 'project', name: 'Inner', parentId: area.id });
    const h2 = await heading(p2.id, 'Inner heading');
    await post(`/v1/containers/${area.id}/trash`);
    expectProblem(await call(app, 'PATCH', `/v1/headings/${h2.id}`, { token, body: { name: 'x' } }), 422, 'validation_failed');
    await post(`/v1/containers/${area.id}/restore`);
    expect((await call(app, 'PATCH', `/v1/headings/${h2.id}`, { token, body: { name: 'x' } })).status).toBe(200);
    await post(`/v1/containers/${p.id}/restore`);
    expect((await call(app, 'PATCH', `/v1/headings/${h.id}`, { token, body: { name: 'Thawed' } })).body.name).toBe('Thawed');
  });
});

describe('headings: PATCH', () => {
  it('renames and reorders; a heading never changes project', async () => {
    const p = await container({ kind: 'project', name: 'Patch' });
    const a = await heading(p.id, 'A');
    const b = await heading(p.id, 'B');
    const c = await heading(p.id, 'C');
    app.clock.advance(1000);
    const r = await call(app, 'PATCH', `/v1/headings/${c.id}`, { token, body: { name: 'C2', after: a.id } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'C2', projectId: p.id, updatedAt: new Date(app.clock()).toISOString() });
    expect(names(await get(`/v1/headings?project_id=${p.id}`))).toEqual(['A', 'C2', 'B']);
    await call(app, 'PATCH', `/v1/headings/${b.id}`, { token, body: { after: null } });
    expect(names(await get(`/v1/headings?project_id=${p.id}`))).toEqual(['B', 'A', 'C2']);
    await call(app, 'PATCH', `/v1/headings/${b.id}`, { token, body: { after: c.id } });
    expect(names(await get(`/v1/headings?project_id=${p.id}`))).toEqual(['A', 'C2', 'B']);
    const other = await container({ kind: 'project', name: 'Elsewhere' });
    const pp = expectProblem(await call(app, 'PATCH', `/v1/headings/${a.id}`, { token, body: { projectId: other.id } }), 422, 'validation_failed');
    expect(pp.errors?.[0]).toMatchObject({ pointer: '/projectId', message: expect.stringMatching(/never changes project/) });
    expect(pointerOf(await call(app, 'PATCH', `/v1/headings/${a.id}`, { token, body: { after: a.id } }))).toBe('/after');
    expect(pointerOf(await call(app, 'PATCH', `/v1/headings/${a.id}`, { token, body: { name: '' } }))).toBe('/name');
    expect(pointerOf(await call(app, 'PATCH', `/v1/headings/${a.id}`, { token, body: { name: 'n'.repeat(513) } }))).toBe('/name');
    expectProblem(await call(app, 'PATCH', '/v1/headings/00000000-0000-4000-8000-000000000000', { token, body: { name: 'x' } }), 404, 'not_found');
  });
});

describe('headings: the to-do list follows heading order (docs/api.md "List order")', () => {
  it('moving a heading moves its to-dos in GET /v1/todos, on every page', async () => {
    const p = await container({ kind: 'project', name: 'P' });
    const h1 = await heading(p.id, 'one');
    const h2 = await heading(p.id, 'two');
    await todo({ title: 'loose', parentId: p.id });
    await todo({ title: 'a', headingId: h1.id });
    await todo({ title: 'b', headingId: h2.id });
    const titles = async (limit: number) => {
      const out: string[] = [];
      let cursor: string | null = null;
      do {
        const r = await get(`/v1/todos?parent_id=${p.id}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(r.status).toBe(200);
        out.push(...r.body.data.map((t: Any) => t.title));
        cursor = r.body.next_cursor;
      } while (cursor);
      return out;
    };
    expect(await titles(50)).toEqual(['loose', 'a', 'b']);
    expect((await call(app, 'PATCH', `/v1/headings/${h2.id}`, { token, body: { after: null } })).status).toBe(200);
    expect(await titles(50)).toEqual(['loose', 'b', 'a']);
    expect(await titles(1)).toEqual(['loose', 'b', 'a']);
  });
});

describe('headings: DELETE (spec §3)', () => {
  it("clears headingId of its to-dos, keeps them in the project in order, and emits heading.deleted plus todo.updated each", async () => {
    const p = await container({ kind: 'project', name: 'Del' });
    const h = await heading(p.id, 'Gone');
    const keep = await heading(p.id, 'Kept');
    const r1 = await todo({ title: 'root1', parentId: p.id });
    const x = await todo({ title: 'x', headingId: h.id });
    const y = await todo({ title: 'y', headingId: h.id });
    const z = await todo({ title: 'z', headingId: h.id });
    await post(`/v1/todos/${y.id}/move`, { parentId: p.id, headingId: h.id, before: x.id });
    const k = await todo({ title: 'kept1', headingId: keep.id });
    const before = eventsOf(app.deps.db, userId).length;
    const d = await call(app, 'DELETE', `/v1/headings/${h.id}`, { token });
    expect(d.status).toBe(200);
    expect(d.body).toEqual({ id: h.id, projectId: p.id, clearedTodoIds: [y.id, x.id, z.id] });
    expectProblem(await get(`/v1/headings/${h.id}`), 404, 'not_found');
    for (const t of [x, y, z]) expect((await get(`/v1/todos/${t.id}`)).body).toMatchObject({ parentId: p.id, headingId: null });
    expect((await get(`/v1/todos?parent_id=${p.id}`)).body.data.map((t: Any) => t.id)).toEqual([r1.id, y.id, x.id, z.id, k.id]);
    const evs = eventsOf(app.deps.db, userId).slice(before).map((e) => `${e.type} ${e.data.id}`);
    expect(evs).toEqual([`heading.deleted ${h.id}`, `todo.updated ${y.id}`, `todo.updated ${x.id}`, `todo.updated ${z.id}`]);
    expectProblem(await call(app, 'DELETE', `/v1/headings/${h.id}`, { token }), 404, 'not_found');
  });
});

describe('headings: convert (spec §3, §4.5)', () => {
  it('creates a subproject with the heading name and moves its to-dos in order with headingId cleared', async () => {
    const p = await container({ kind: 'project', name: 'Big' });
    const h = await heading(p.id, 'Phase 2');
    const a = await todo({ title: 'a', headingId: h.id });
    const b = await todo({ title: 'b', headingId: h.id });
    const c = await todo({ title: 'c', headingId: h.id });
    await post(`/v1/todos/${c.id}/move`, { parentId: p.id, headingId: h.id, after: a.id });
    const before = eventsOf(app.deps.db, userId).length;
    const r = await post(`/v1/headings/${h.id}/convert`);
    expect(r.status).toBe(201);
    expect(r.body.headingId).toBe(h.id);
    expect(r.body.subproject).toMatchObject({ kind: 'subproject', name: 'Phase 2', parentId: p.id, status: 'active', trashedAt: null });
    expect(r.body.subproject.id).toBe(derivedSubprojectId(userId, h.id));
    expect(r.body.todos.map((t: Any) => t.id)).toEqual([a.id, c.id, b.id]);
    for (const t of r.body.todos) expect(t).toMatchObject({ parentId: r.body.subproject.id, headingId: null });
    expect((await get(`/v1/todos?parent_id=${r.body.subproject.id}`)).body.data.map((t: Any) => t.id)).toEqual([a.id, c.id, b.id]);
    expectProblem(await get(`/v1/headings/${h.id}`), 404, 'not_found');
    const evs = eventsOf(app.deps.db, userId).slice(before).map((e) => e.type);
    expect(evs).toEqual(['container.created', 'todo.updated', 'todo.updated', 'todo.updated', 'heading.deleted']);
    // Converting again: the heading is gone.
    expectProblem(await post(`/v1/headings/${h.id}/convert`), 404, 'not_found');
  });

  it('a caller-supplied id names the subproject; an existing id is duplicate_id', async () => {
    const p = await container({ kind: 'project', name: 'With id' });
    const h = await heading(p.id, 'H');
    expectProblem(await post(`/v1/headings/${h.id}/convert`, { id: p.id }), 409, 'duplicate_id');
    const t = await todo({ title: 't', headingId: h.id });
    expectProblem(await post(`/v1/headings/${h.id}/convert`, { id: t.id }), 409, 'duplicate_id');
    expect(pointerOf(await post(`/v1/headings/${h.id}/convert`, { id: 'nope' }))).toBe('/id');
    expect(pointerOf(await post(`/v1/headings/${h.id}/convert`, { name: 'x' }))).toBe('/name');
    const id = 'CAFE0000-0000-4000-8000-000000000001';
    const r = await post(`/v1/headings/${h.id}/convert`, { id });
    expect(r.status).toBe(201);
    expect(r.body.subproject.id).toBe(id);
    expect(r.body.todos.map((x: Any) => x.id)).toEqual([t.id]);
  });

  it('a heading inside a subproject is validation_failed', async () => {
    const p = await container({ kind: 'project', name: 'Outer' });
    const s = await container({ kind: 'subproject', name: 'Inner', parentId: p.id });
    const h = await heading(s.id, 'Nested');
    const r = expectProblem(await post(`/v1/headings/${h.id}/convert`), 422, 'validation_failed');
    expect(r.detail).toMatch(/subproject/);
    expect((await get(`/v1/headings/${h.id}`)).status).toBe(200);
  });
});

describe('headings: convert is one transaction; the id rules of spec §4.5', () => {
  /** Makes step 2 (move the to-dos, remove the heading) fail once, as a crash between steps would. */
  const failStepTwoOnce = () =>
    vi.spyOn(convertSteps, 'moveAndFinish').mockImplementationOnce(() => {
      throw new Error('simulated crash between convert steps');
    });
  const subprojectsOf = async (projectId: string) =>
    (await get(`/v1/containers?parent_id=${projectId}&kind=subproject`)).body.data.map((c: Any) => c.id);
  const eventCount = () => (app.deps.db.$client.prepare('SELECT count(*) AS n FROM outbox WHERE user_id = ?').get(userId) as { n: number }).n;

  it('a failure after the subproject was made leaves nothing behind; the retry converts fully', async () => {
    const p = await container({ kind: 'project', name: 'Retry' });
    const h = await heading(p.id, 'Half done');
    const a = await todo({ title: 'a', headingId: h.id });
    const b = await todo({ title: 'b', headingId: h.id });
    const events = eventCount();
    const spy = failStepTwoOnce();
    const first = await post(`/v1/headings/${h.id}/convert`, undefined, { 'Idempotency-Key': 'convert-retry-1' });
    expectProblem(first, 500, 'internal');
    spy.mockRestore();
    // No partial state: no subproject, the heading and its to-dos untouched, no event.
    const derived = derivedSubprojectId(userId, h.id);
    expectProblem(await get(`/v1/containers/${derived}`), 404, 'not_found');
    expect(await subprojectsOf(p.id)).toEqual([]);
    expect((await get(`/v1/headings/${h.id}`)).body.openCount).toBe(2);
    expect((await get(`/v1/todos/${a.id}`)).body.headingId).toBe(h.id);
    expect(eventCount()).toBe(events);

    const retry = await post(`/v1/headings/${h.id}/convert`, undefined, { 'Idempotency-Key': 'convert-retry-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body.subproject.id).toBe(derived);
    expect(retry.body.todos.map((t: Any) => t.id)).toEqual([a.id, b.id]);
    expect(await subprojectsOf(p.id)).toEqual([derived]);
    expectProblem(await get(`/v1/headings/${h.id}`), 404, 'not_found');
    // container.created, 2 × todo.updated, heading.deleted: once each.
    expect(eventCount()).toBe(events + 4);
  });

  it('a failure with a caller-supplied id leaves the id free: the retry with it succeeds', async () => {
    const p = await container({ kind: 'project', name: 'Supplied' });
    const h = await heading(p.id, 'H');
    await todo({ title: 't', headingId: h.id });
    const id = 'CAFE0000-0000-4000-8000-0000000000AB';
    const spy = failStepTwoOnce();
    expectProblem(await post(`/v1/headings/${h.id}/convert`, { id }), 500, 'internal');
    spy.mockRestore();
    expectProblem(await get(`/v1/containers/${id}`), 404, 'not_found');
    const done = await post(`/v1/headings/${h.id}/convert`, { id });
    expect(done.status).toBe(201);
    expect(done.body.subproject.id).toBe(id);
  });

  it('a container already holding the derived id is reused when it is a live subproject of the project', async () => {
    const p = await container({ kind: 'project', name: 'Prepared' });
    const h = await heading(p.id, 'H');
    const t = await todo({ title: 't', headingId: h.id });
    const derived = derivedSubprojectId(userId, h.id);
    await container({ kind: 'subproject', name: 'Made by a client', parentId: p.id, id: derived });
    const done = await post(`/v1/headings/${h.id}/convert`);
    expect(done.status).toBe(201);
    expect(done.body.subproject).toMatchObject({ id: derived, name: 'Made by a client' });
    expect(done.body.todos.map((x: Any) => x.id)).toEqual([t.id]);
  });

  it('a derived subproject trashed gives conflict (and works again once restored)', async () => {
    const p = await container({ kind: 'project', name: 'Trashed since' });
    const h = await heading(p.id, 'H');
    await todo({ title: 't', headingId: h.id });
    const derived = derivedSubprojectId(userId, h.id);
    await container({ kind: 'subproject', name: 'H', parentId: p.id, id: derived });
    await post(`/v1/containers/${derived}/trash`);
    expectProblem(await post(`/v1/headings/${h.id}/convert`), 409, 'conflict');
    expect((await get(`/v1/headings/${h.id}`)).status).toBe(200);
    await post(`/v1/containers/${derived}/restore`);
    expect((await post(`/v1/headings/${h.id}/convert`)).status).toBe(201);
  });

  it('a derived subproject moved elsewhere gives conflict', async () => {
    const p = await container({ kind: 'project', name: 'Moved since' });
    const elsewhere = await container({ kind: 'project', name: 'Elsewhere' });
    const h = await heading(p.id, 'H');
    await todo({ title: 't', headingId: h.id });
    const derived = derivedSubprojectId(userId, h.id);
    await container({ kind: 'subproject', name: 'H', parentId: elsewhere.id, id: derived });
    const r = expectProblem(await post(`/v1/headings/${h.id}/convert`), 409, 'conflict');
    expect(r.detail).toMatch(/trashed or moved/);
  });

  it('a supplied id that exists is duplicate_id, and nothing changes', async () => {
    const p = await container({ kind: 'project', name: 'Taken' });
    const h = await heading(p.id, 'H');
    await todo({ title: 't', headingId: h.id });
    const other = await container({ kind: 'project', name: 'Holder', id: 'CAFE0000-0000-4000-8000-0000000000AC' });
    expectProblem(await post(`/v1/headings/${h.id}/convert`, { id: other.id }), 409, 'duplicate_id');
    expect((await get(`/v1/headings/${h.id}`)).body.openCount).toBe(1);
  });
});

describe('headings: complete (spec §3, §4.5)', () => {
  it('completes each open live to-do, rolls recurring ones, and a second run completes what is open by then', async () => {
    const p = await container({ kind: 'project', name: 'Done' });
    const h = await heading(p.id, 'This week');
    const a = await todo({ title: 'a', headingId: h.id });
    const rec = await todo({ title: 'weekly', headingId: h.id, whenDate: '2026-11-23', deadline: '2026-11-24', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    const done = await todo({ title: 'already', headingId: h.id });
    await post(`/v1/todos/${done.id}/complete`);
    const binned = await todo({ title: 'binned', headingId: h.id });
    await post(`/v1/todos/${binned.id}/trash`);
    const elsewhere = await todo({ title: 'elsewhere', parentId: p.id });
    app.clock.advance(1000);
    const doneAt = (await get(`/v1/todos/${done.id}`)).body.completedAt;

    const r = await post(`/v1/headings/${h.id}/complete?today=2026-11-21`);
    expect(r.status).toBe(200);
    expect(r.body.heading).toMatchObject({ id: h.id, openCount: 1 });
    expect(r.body.completed.map((t: Any) => t.title)).toEqual(['a', 'weekly']);
    const copy = r.body.completed[1];
    expect(copy.id).not.toBe(rec.id);
    expect(copy).toMatchObject({ status: 'completed', whenDate: '2026-11-23', recurrence: null, completedAt: new Date(app.clock()).toISOString() });
    expect(r.body.rolled).toEqual([expect.objectContaining({ id: rec.id, status: 'open', whenDate: '2026-11-30', deadline: '2026-12-01' })]);
    expect((await get(`/v1/todos/${a.id}`)).body.status).toBe('completed');
    expect((await get(`/v1/todos/${done.id}`)).body.completedAt).toBe(doneAt);
    expect((await get(`/v1/todos/${binned.id}`)).body.status).toBe('open');
    expect((await get(`/v1/todos/${elsewhere.id}`)).body.status).toBe('open');

    // Again: only the next occurrence is open, and it rolls once more.
    const again = await post(`/v1/headings/${h.id}/complete`);
    expect(again.body.completed.map((t: Any) => t.title)).toEqual(['weekly']);
    expect(again.body.rolled[0]).toMatchObject({ id: rec.id, whenDate: '2026-12-07' });
    expect(pointerOf(await post(`/v1/headings/${h.id}/complete?today=21-11-2026`))).toBe('/today');
    expectProblem(await post('/v1/headings/00000000-0000-4000-8000-000000000000/complete'), 404, 'not_found');
  });

  it('a retry with the same Idempotency-Key replays the first answer instead of completing again', async () => {
    const p = await container({ kind: 'project', name: 'Idem' });
    const h = await heading(p.id, 'H');
    const rec = await todo({ title: 'daily', headingId: h.id, whenDate: '2026-11-21', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } });
    const first = await post(`/v1/headings/${h.id}/complete`, undefined, { 'Idempotency-Key': 'complete-1' });
    const second = await post(`/v1/headings/${h.id}/complete`, undefined, { 'Idempotency-Key': 'complete-1' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect((await get(`/v1/todos/${rec.id}`)).body.whenDate).toBe('2026-11-22');
  });

  it('account_too_large past CAIRN_MAX_ACCOUNT_ITEMS', async () => {
    const small = await startApp({ CAIRN_MAX_ACCOUNT_ITEMS: '5' });
    try {
      const u = await registerUser(small);
      const s = u.session;
      const p = (await call(small, 'POST', '/v1/containers', { token: s, body: { kind: 'project', name: 'P' } })).body;
      const h = (await call(small, 'POST', '/v1/headings', { token: s, body: { projectId: p.id, name: 'H' } })).body;
      for (let i = 0; i < 3; i++) await call(small, 'POST', '/v1/todos', { token: s, body: { title: `t${i}`, headingId: h.id } });
      // Five items (a project, a heading, three to-dos): at the limit, still served.
      expect((await call(small, 'GET', `/v1/headings/${h.id}`, { token: s })).body.openCount).toBe(3);
      await call(small, 'POST', '/v1/todos', { token: s, body: { title: 't3', headingId: h.id } });
      expectProblem(await call(small, 'POST', `/v1/headings/${h.id}/complete`, { token: s }), 422, 'account_too_large');
      expectProblem(await call(small, 'GET', `/v1/headings/${h.id}`, { token: s }), 422, 'account_too_large');
      expectProblem(await call(small, 'GET', '/v1/headings', { token: s }), 422, 'account_too_large');
      // Nothing was completed by the refused request.
      expect((await call(small, 'GET', `/v1/todos?heading_id=${h.id}`, { token: s })).body.data.every((t: Any) => t.status === 'open')).toBe(true);
    } finally {
      await small.close();
    }
  });
});

describe('headings: scopes and isolation', () => {
  it('DELETE and convert need containers:write and todos:write; complete needs todos:write', async () => {
    const u = await registerUser(app);
    const p = (await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Scoped' } })).body;
    const h = (await call(app, 'POST', '/v1/headings', { token: u.session, body: { projectId: p.id, name: 'H' } })).body;
    const cOnly = (await createPat(app, u.session, ['containers:write'])).token;
    const tOnly = (await createPat(app, u.session, ['todos:write'])).token;
    expectProblem(await call(app, 'DELETE', `/v1/headings/${h.id}`, { token: cOnly }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'POST', `/v1/headings/${h.id}/convert`, { token: cOnly }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'POST', `/v1/headings/${h.id}/complete`, { token: cOnly }), 403, 'forbidden_scope');
    expect((await call(app, 'POST', `/v1/headings/${h.id}/complete`, { token: tOnly })).status).toBe(200);
    expectProblem(await call(app, 'GET', `/v1/headings/${h.id}`, { token: tOnly }), 403, 'forbidden_scope');
    // Another user sees nothing.
    expectProblem(await get(`/v1/headings/${h.id}`), 404, 'not_found');
    expect(pointerOf(await post('/v1/headings', { projectId: p.id, name: 'intrude' }))).toBe('/projectId');
  });
});
