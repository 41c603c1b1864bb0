// Spec §2.1, §4.4, DECISIONS §6: areas, projects, subprojects over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';

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

const post = (path: string, body: unknown = undefined, t = token) => call(app, 'POST', path, { token: t, body });
const create = async (body: Record<string, unknown>) => {
  const r = await post('/v1/containers', body);
  if (r.status !== 200) throw new Error(`create failed ${r.status} ${r.text}`);
  return r.body;
};
const pointerOf = (r: Awaited<ReturnType<typeof call>>) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;

describe('containers: create (spec §2.1)', () => {
  it('creates each kind with every field and answers 200', async () => {
    const area = await post('/v1/containers', {
      kind: 'area',
      name: 'Work',
      subtitle: 'Day job',
      notes: '# notes',
      symbol: 'briefcase',
      colorHex: '#a1b2c3',
      deadline: '2026-12-31',
      priority: 'high',
    });
    expect(area.status).toBe(200);
    expect(area.body).toMatchObject({
      kind: 'area',
      name: 'Work',
      parentId: null,
      subtitle: 'Day job',
      notes: '# notes',
      symbol: 'briefcase',
      colorHex: '#a1b2c3',
      deadline: '2026-12-31',
      priority: 'high',
      status: 'active',
      trashedAt: null,
    });
    expect(area.body.createdAt).toBe('2026-11-21T12:00:00.000Z');
    const project = await create({ kind: 'project', name: 'Launch', parentId: area.body.id });
    expect(project.parentId).toBe(area.body.id);
    const sub = await create({ kind: 'subproject', name: 'Phase 1', parentId: project.id });
    expect(sub).toMatchObject({ kind: 'subproject', parentId: project.id, subtitle: null, priority: null });
    const loose = await create({ kind: 'project', name: 'Standalone' });
    expect(loose.parentId).toBeNull();
  });

  it('refuses unknown properties and enforces every limit with a pointer', async () => {
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', colour: 'red' }))).toBe('/colour');
    expect(pointerOf(await post('/v1/containers', { kind: 'folder', name: 'x' }))).toBe('/kind');
    expect(pointerOf(await post('/v1/containers', { name: 'x' }))).toBe('/kind');
    expect(pointerOf(await post('/v1/containers', { kind: 'area' }))).toBe('/name');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: '' }))).toBe('/name');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'n'.repeat(257) }))).toBe('/name');
    expect((await post('/v1/containers', { kind: 'area', name: 'n'.repeat(256) })).status).toBe(200);
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', subtitle: 's'.repeat(513) }))).toBe('/subtitle');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', notes: 'n'.repeat(100_001) }))).toBe('/notes');
    expect((await post('/v1/containers', { kind: 'area', name: 'x', notes: 'n'.repeat(100_000) })).status).toBe(200);
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', symbol: 's'.repeat(65) }))).toBe('/symbol');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', colorHex: 'red' }))).toBe('/colorHex');
    expect((await post('/v1/containers', { kind: 'area', name: 'x', colorHex: 'A1B2C3' })).status).toBe(200);
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', deadline: '2026-02-30' }))).toBe('/deadline');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', priority: 'urgent' }))).toBe('/priority');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', parentId: 'p'.repeat(65) }))).toBe('/parentId');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 7 }))).toBe('/name');
  });

  it('an area holds projects only, a project holds subprojects, a subproject needs a project', async () => {
    const area = await create({ kind: 'area', name: 'A' });
    const project = await create({ kind: 'project', name: 'P', parentId: area.id });
    const sub = await create({ kind: 'subproject', name: 'S', parentId: project.id });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ kind: 'area', name: 'nested area', parentId: area.id }, /area/],
      [{ kind: 'project', name: 'p in p', parentId: project.id }, /area/],
      [{ kind: 'project', name: 'p in s', parentId: sub.id }, /area/],
      [{ kind: 'subproject', name: 's in a', parentId: area.id }, /project/],
      [{ kind: 'subproject', name: 's in s', parentId: sub.id }, /project/],
      [{ kind: 'subproject', name: 'orphan' }, /project/],
      [{ kind: 'subproject', name: 'orphan', parentId: null }, /project/],
      [{ kind: 'project', name: 'ghost parent', parentId: '00000000-0000-4000-8000-000000000000' }, /no container/],
    ];
    for (const [body, msg] of cases) {
      const p = expectProblem(await post('/v1/containers', body), 422, 'validation_failed');
      expect(p.errors?.[0]?.pointer, JSON.stringify(body)).toBe('/parentId');
      expect(p.errors?.[0]?.message).toMatch(msg);
    }
  });

  it('a parent in the trash (or inside a trashed one) is refused at /parentId', async () => {
    const area = await create({ kind: 'area', name: 'Trashy' });
    const project = await create({ kind: 'project', name: 'P', parentId: area.id });
    await post(`/v1/containers/${area.id}/trash`);
    expect(pointerOf(await post('/v1/containers', { kind: 'project', name: 'x', parentId: area.id }))).toBe('/parentId');
    expect(pointerOf(await post('/v1/containers', { kind: 'subproject', name: 'x', parentId: project.id }))).toBe('/parentId');
    await post(`/v1/containers/${area.id}/restore`);
    expect((await post('/v1/containers', { kind: 'subproject', name: 'x', parentId: project.id })).status).toBe(200);
  });

  it('a client id must be an UPPERCASE UUID; an existing one is duplicate_id', async () => {
    const id = 'C0FFEE00-0000-4000-8000-000000000001';
    const r = await post('/v1/containers', { kind: 'area', name: 'with id', id });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(id);
    expectProblem(await post('/v1/containers', { kind: 'project', name: 'again', id }), 409, 'duplicate_id');
    expect(pointerOf(await post('/v1/containers', { kind: 'area', name: 'x', id: id.toLowerCase() }))).toBe('/id');
  });

  it('an id already naming a to-do is a conflict', async () => {
    const todo = await post('/v1/todos', { title: 'taken id', id: 'C0FFEE00-0000-4000-8000-0000000000AA' });
    expect(todo.status).toBe(201);
    expectProblem(await post('/v1/containers', { kind: 'area', name: 'x', id: todo.body.id }), 409, 'conflict');
  });
});

describe('containers: read, PATCH', () => {
  it('PATCH changes content fields, null clears, and parentId/kind are refused at their pointer', async () => {
    const area = await create({ kind: 'area', name: 'Home' });
    const c = await create({ kind: 'project', name: 'Garden', parentId: area.id, subtitle: 'sub', priority: 'low', symbol: 'leaf' });
    app.clock.advance(1000);
    const r = await call(app, 'PATCH', `/v1/containers/${c.id}`, {
      token,
      body: { name: 'Backyard', subtitle: null, priority: 'medium', colorHex: '00ff00', deadline: '2027-01-01', notes: 'n' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'Backyard', subtitle: null, priority: 'medium', colorHex: '00ff00', deadline: '2027-01-01', notes: 'n', symbol: 'leaf', parentId: area.id });
    expect(r.body.updatedAt).toBe('2026-11-21T12:00:01.000Z');
    const other = await create({ kind: 'area', name: 'Other' });
    const pp = expectProblem(await call(app, 'PATCH', `/v1/containers/${c.id}`, { token, body: { parentId: other.id } }), 422, 'validation_failed');
    expect(pp.errors?.[0]).toMatchObject({ pointer: '/parentId' });
    expect(pp.errors?.[0]?.message).toMatch(/move/);
    const pk = expectProblem(await call(app, 'PATCH', `/v1/containers/${c.id}`, { token, body: { kind: 'area' } }), 422, 'validation_failed');
    expect(pk.errors?.[0]).toMatchObject({ pointer: '/kind' });
    expect(pointerOf(await call(app, 'PATCH', `/v1/containers/${c.id}`, { token, body: { name: null } }))).toBe('/name');
    expect(pointerOf(await call(app, 'PATCH', `/v1/containers/${c.id}`, { token, body: { name: 'x'.repeat(257) } }))).toBe('/name');
    const g = await call(app, 'GET', `/v1/containers/${c.id}`, { token });
    expect(g.body).toMatchObject({ kind: 'project', parentId: area.id, name: 'Backyard' });
    expectProblem(await call(app, 'PATCH', `/v1/containers/00000000-0000-4000-8000-000000000000`, { token, body: { name: 'x' } }), 404, 'not_found');
  });

  it("another user's container is not found", async () => {
    const mine = await create({ kind: 'area', name: 'Mine' });
    const other = await registerUser(app);
    const t = (await createPat(app, other.session, ['containers:write'])).token;
    expectProblem(await call(app, 'GET', `/v1/containers/${mine.id}`, { token: t }), 404, 'not_found');
    expectProblem(await call(app, 'PATCH', `/v1/containers/${mine.id}`, { token: t, body: { name: 'x' } }), 404, 'not_found');
    expectProblem(await post(`/v1/containers/${mine.id}/trash`, undefined, t), 404, 'not_found');
    expect(pointerOf(await post('/v1/containers', { kind: 'project', name: 'x', parentId: mine.id }, t))).toBe('/parentId');
    expect((await call(app, 'GET', '/v1/containers', { token: t })).body.data).toEqual([]);
  });
});

describe('containers: list filters and paging (spec §4.4)', () => {
  let t: string;
  let area: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  let projects: any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  beforeAll(async () => {
    const u = await registerUser(app);
    t = (await createPat(app, u.session, ['containers:write'])).token;
    area = (await post('/v1/containers', { kind: 'area', name: 'Area' }, t)).body;
    projects = [];
    for (let i = 0; i < 5; i++) projects.push((await post('/v1/containers', { kind: 'project', name: `P${i}`, parentId: area.id }, t)).body);
    await post('/v1/containers', { kind: 'subproject', name: 'S', parentId: projects[0].id }, t);
    await post('/v1/containers', { kind: 'project', name: 'Top' }, t);
    await post(`/v1/containers/${projects[1].id}/archive`, undefined, t);
    await post(`/v1/containers/${projects[3].id}/archive`, undefined, t);
  });
  const list = (q: string) => call(app, 'GET', `/v1/containers${q}`, { token: t });

  it('filters by kind, parent_id (and the literal null) and status', async () => {
    expect((await list('?kind=area')).body.data.map((c: any) => c.name)).toEqual(['Area']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list('?kind=subproject')).body.data.map((c: any) => c.name)).toEqual(['S']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list(`?parent_id=${area.id}`)).body.data.map((c: any) => c.name)).toEqual(['P0', 'P1', 'P2', 'P3', 'P4']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list('?parent_id=null')).body.data.map((c: any) => c.name)).toEqual(['Area', 'Top']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list(`?parent_id=${area.id}&status=archived`)).body.data.map((c: any) => c.name)).toEqual(['P1', 'P3']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list(`?parent_id=${area.id}&status=active`)).body.data.map((c: any) => c.name)).toEqual(['P0', 'P2', 'P4']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await list('?kind=project&status=archived')).body.data).toHaveLength(2);
    expect(pointerOf(await list('?status=done'))).toBe('/status');
    expect(pointerOf(await list('?kind=folder'))).toBe('/kind');
    expect(pointerOf(await list(`?parent_id=${'x'.repeat(65)}`))).toBe('/parent_id');
    expect(pointerOf(await list('?include_trashed=yes'))).toBe('/include_trashed');
  });

  it('pages with a cursor, with and without the sealed status filter', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Awaited<ReturnType<typeof list>> = await list(`?parent_id=${area.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((c: any) => c.name)); // eslint-disable-line @typescript-eslint/no-explicit-any
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['P0', 'P1', 'P2', 'P3', 'P4']);
    const p1 = await list(`?parent_id=${area.id}&status=active&limit=1`);
    expect(p1.body.data.map((c: any) => c.name)).toEqual(['P0']); // eslint-disable-line @typescript-eslint/no-explicit-any
    const p2 = await list(`?parent_id=${area.id}&status=active&limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
    expect(p2.body.data.map((c: any) => c.name)).toEqual(['P2', 'P4']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(p2.body.next_cursor).toBeNull();
    expect(pointerOf(await list('?cursor=garbage'))).toBe('/cursor');
  });

  it('updated_since filters on the server update time', async () => {
    app.clock.advance(60_000);
    const since = new Date(app.clock()).toISOString();
    await call(app, 'PATCH', `/v1/containers/${projects[2].id}`, { token: t, body: { name: 'P2 renamed' } });
    const r = await list(`?updated_since=${since}`);
    expect(r.body.data.map((c: any) => c.name)).toEqual(['P2 renamed']); // eslint-disable-line @typescript-eslint/no-explicit-any
  });
});

describe('containers: move, archive, trash, delete (DECISIONS §6)', () => {
  it('moves a project between areas and to the top level, placing it after or before a sibling', async () => {
    const a1 = await create({ kind: 'area', name: 'A1' });
    const a2 = await create({ kind: 'area', name: 'A2' });
    const x = await create({ kind: 'project', name: 'X', parentId: a2.id });
    const y = await create({ kind: 'project', name: 'Y', parentId: a2.id });
    const mover = await create({ kind: 'project', name: 'M', parentId: a1.id });
    const names = async (parent: string) => (await call(app, 'GET', `/v1/containers?parent_id=${parent}`, { token })).body.data.map((c: any) => c.name); // eslint-disable-line @typescript-eslint/no-explicit-any

    const r = await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, after: x.id });
    expect(r.status).toBe(200);
    expect(r.body.parentId).toBe(a2.id);
    expect(await names(a2.id)).toEqual(['X', 'M', 'Y']);
    expect(await names(a1.id)).toEqual([]);
    await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, before: x.id });
    expect(await names(a2.id)).toEqual(['M', 'X', 'Y']);
    await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id });
    expect(await names(a2.id)).toEqual(['X', 'Y', 'M']);
    const top = await post(`/v1/containers/${mover.id}/move`, { parentId: null });
    expect(top.body.parentId).toBeNull();
    expect(await names(a2.id)).toEqual(['X', 'Y']);
    await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, after: y.id });

    // Wrong parents and neighbours.
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { parentId: x.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/containers/${a1.id}/move`, { parentId: a2.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { parentId: a1.id, after: x.id }))).toBe('/after');
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, before: mover.id }))).toBe('/before');
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, after: x.id, before: y.id }))).toBe('/before');
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { after: x.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/containers/${mover.id}/move`, { parentId: a2.id, kind: 'area' }))).toBe('/kind');
    // Areas reorder at the top level.
    await post(`/v1/containers/${a2.id}/move`, { parentId: null, before: a1.id });
    const areas = (await call(app, 'GET', '/v1/containers?kind=area', { token })).body.data.map((c: any) => c.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(areas.indexOf(a2.id)).toBe(areas.indexOf(a1.id) - 1);

    // A subproject moves between projects; never to an area.
    const sub = await create({ kind: 'subproject', name: 'S', parentId: x.id });
    expect((await post(`/v1/containers/${sub.id}/move`, { parentId: y.id })).body.parentId).toBe(y.id);
    expect(pointerOf(await post(`/v1/containers/${sub.id}/move`, { parentId: a1.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/containers/${sub.id}/move`, { parentId: null }))).toBe('/parentId');
  });

  it('archive and unarchive switch the status', async () => {
    const c = await create({ kind: 'project', name: 'Archivable' });
    const a = await post(`/v1/containers/${c.id}/archive`);
    expect(a.status).toBe(200);
    expect(a.body.status).toBe('archived');
    expect((await call(app, 'GET', `/v1/containers/${c.id}`, { token })).body.status).toBe('archived');
    expect((await post(`/v1/containers/${c.id}/unarchive`)).body.status).toBe('active');
    expect(pointerOf(await post(`/v1/containers/${c.id}/archive`, { status: 'archived' }))).toBe('/status');
  });

  it('trash takes the container and its contents out of live views; restore brings them back', async () => {
    const area = await create({ kind: 'area', name: 'Hideaway' });
    const project = await create({ kind: 'project', name: 'Inside', parentId: area.id });
    const sub = await create({ kind: 'subproject', name: 'Deeper', parentId: project.id });
    app.clock.advance(5000);
    const tr = await post(`/v1/containers/${area.id}/trash`);
    expect(tr.status).toBe(200);
    expect(tr.body.trashedAt).toBe(new Date(app.clock()).toISOString());
    const live = (await call(app, 'GET', '/v1/containers?limit=200', { token })).body.data.map((c: any) => c.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const id of [area.id, project.id, sub.id]) expect(live).not.toContain(id);
    // Only the container itself gets trashedAt; the contents stay readable by id.
    expect((await call(app, 'GET', `/v1/containers/${project.id}`, { token })).body.trashedAt).toBeNull();
    const all = (await call(app, 'GET', '/v1/containers?limit=200&include_trashed=true', { token })).body.data.map((c: any) => c.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const id of [area.id, project.id, sub.id]) expect(all).toContain(id);
    const rs = await post(`/v1/containers/${area.id}/restore`);
    expect(rs.body.trashedAt).toBeNull();
    const back = (await call(app, 'GET', '/v1/containers?limit=200', { token })).body.data.map((c: any) => c.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const id of [area.id, project.id, sub.id]) expect(back).toContain(id);
  });

  it('DELETE is a conflict while live and removes the container and everything in it once trashed', async () => {
    const project = await create({ kind: 'project', name: 'Doomed' });
    const sub = await create({ kind: 'subproject', name: 'Doomed sub', parentId: project.id });
    const todo = (await post('/v1/todos', { title: 'doomed todo', parentId: sub.id })).body;
    const heading = (await post('/v1/headings', { projectId: project.id, name: 'doomed heading' })).body;
    expectProblem(await call(app, 'DELETE', `/v1/containers/${project.id}`, { token }), 409, 'conflict');
    // Trashing a child does not make the parent deletable.
    await post(`/v1/containers/${sub.id}/trash`);
    expectProblem(await call(app, 'DELETE', `/v1/containers/${project.id}`, { token }), 409, 'conflict');
    await post(`/v1/containers/${project.id}/trash`);
    const d = await call(app, 'DELETE', `/v1/containers/${project.id}`, { token });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    expectProblem(await call(app, 'GET', `/v1/containers/${project.id}`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'GET', `/v1/containers/${sub.id}`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'GET', `/v1/todos/${todo.id}`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'GET', `/v1/headings/${heading.id}`, { token }), 404, 'not_found');
    const types = eventsOf(app.deps.db, userId).filter((e) => [project.id, sub.id, todo.id, heading.id].includes(e.data.id) && e.type.endsWith('.deleted'));
    expect(types.map((e) => `${e.type} ${e.data.id}`).sort()).toEqual(
      [`container.deleted ${project.id}`, `container.deleted ${sub.id}`, `todo.deleted ${todo.id}`, `heading.deleted ${heading.id}`].sort(),
    );
    expectProblem(await call(app, 'DELETE', `/v1/containers/${project.id}`, { token }), 404, 'not_found');
  });
});

describe('containers: events (spec §6)', () => {
  it('create, update and delete record thin events with the user as sub', async () => {
    const before = eventsOf(app.deps.db, userId).length;
    const c = await create({ kind: 'area', name: 'SecretAreaName' });
    await call(app, 'PATCH', `/v1/containers/${c.id}`, { token, body: { notes: 'SecretNotes' } });
    await post(`/v1/containers/${c.id}/archive`);
    await post(`/v1/containers/${c.id}/trash`);
    await call(app, 'DELETE', `/v1/containers/${c.id}`, { token });
    const evs = eventsOf(app.deps.db, userId).slice(before);
    expect(evs.map((e) => e.type)).toEqual(['container.created', 'container.updated', 'container.updated', 'container.updated', 'container.deleted']);
    for (const e of evs) {
      expect(e.id).toMatch(/^evt_/);
      expect(e.data).toEqual({ object: 'container', id: c.id, sub: userId });
      expect(e.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(JSON.stringify(e)).not.toMatch(/Secret/);
    }
    // A refused write records nothing.
    const n = eventsOf(app.deps.db, userId).length;
    await post('/v1/containers', { kind: 'subproject', name: 'nope' });
    expect(eventsOf(app.deps.db, userId).length).toBe(n);
  });
});

describe('containers: account_too_large (spec §7)', () => {
  it('a status filter that would decrypt past the limit is refused; plain lists still work', async () => {
    const small = await startApp({}, { decryptRowLimit: 5 });
    try {
      const u = await registerUser(small);
      for (let i = 0; i < 8; i++) await call(small, 'POST', '/v1/containers', { token: u.session, body: { kind: 'area', name: `a${i}` } });
      await call(small, 'POST', '/v1/containers', { token: u.session, body: { kind: 'area', name: 'last' } }).then((r) =>
        call(small, 'POST', `/v1/containers/${r.body.id}/archive`, { token: u.session }),
      );
      expectProblem(await call(small, 'GET', '/v1/containers?status=archived', { token: u.session }), 422, 'account_too_large');
      const plain = await call(small, 'GET', '/v1/containers', { token: u.session });
      expect(plain.body.data).toHaveLength(9);
      // A filter satisfied within the budget still answers.
      const first = await call(small, 'GET', '/v1/containers?status=active&limit=2', { token: u.session });
      expect(first.body.data).toHaveLength(2);
    } finally {
      await small.close();
    }
  });
});
