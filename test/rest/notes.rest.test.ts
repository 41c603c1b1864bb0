// Spec §2.3, §3 (note rows), §4.6: notes over HTTP, their place in the item band shared with
// to-dos, trash and delete.
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
  token = (await createPat(app, u.session, ['notes:write', 'containers:write', 'todos:write'])).token;
});
afterAll(() => app.close());

const post = (path: string, body: unknown = undefined, t = token) => call(app, 'POST', path, { token: t, body });
const get = (path: string, t = token) => call(app, 'GET', path, { token: t });
const patch = (path: string, body: unknown, t = token) => call(app, 'PATCH', path, { token: t, body });
const made = async (path: string, body: Record<string, unknown>, status = 201) => {
  const r = await post(path, body);
  if (r.status !== status) throw new Error(`${path} failed ${r.status} ${r.text}`);
  return r.body;
};
const note = (body: Record<string, unknown>) => made('/v1/notes', body);
const todo = (body: Record<string, unknown>) => made('/v1/todos', body);
const container = (body: Record<string, unknown>) => made('/v1/containers', body, 200);
const pointerOf = (r: Awaited<ReturnType<typeof call>>) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;
const noteIds = async (query = '', t = token) => ((await get(`/v1/notes${query}`, t)).body.data as { id: string }[]).map((n) => n.id);

/** The band of a container as the apps show it: to-dos and notes merged by sort key. */
async function band(parentId: string) {
  const ns = (await get(`/v1/notes?parent_id=${parentId}`)).body.data as { id: string; sortKey: string }[];
  const ts = ((await get(`/v1/todos?parent_id=${parentId}`)).body.data as { id: string; sortKey: string; headingId: string | null }[]).filter((t) => t.headingId === null);
  return [...ns, ...ts].sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0)).map((x) => x.id);
}

describe('notes: create and read (spec §2.3, §4.6)', () => {
  it('creates a note with 201 and reads it back', async () => {
    const r = await post('/v1/notes', { body: '# Shopping\n- milk', title: 'Shopping' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ title: 'Shopping', body: '# Shopping\n- milk', parentId: null, folderId: null, trashedAt: null });
    expect(r.body.createdAt).toBe('2026-11-21T12:00:00.000Z');
    expect(typeof r.body.sortKey).toBe('string');
    expect((await get(`/v1/notes/${r.body.id}`)).body).toEqual(r.body);
    expect((await note({ body: 'untitled' })).title).toBeNull();
  });

  it('body is required, 1..100000 and never blank; title at most 512', async () => {
    expect(pointerOf(await post('/v1/notes', { title: 'no body' }))).toBe('/body');
    expect(pointerOf(await post('/v1/notes', { body: '' }))).toBe('/body');
    expect(pointerOf(await post('/v1/notes', { body: ' \n\t ' }))).toBe('/body');
    expect(pointerOf(await post('/v1/notes', { body: 'b'.repeat(100_001) }))).toBe('/body');
    expect((await post('/v1/notes', { body: 'b'.repeat(100_000) })).status).toBe(201);
    expect(pointerOf(await post('/v1/notes', { body: 'x', title: 't'.repeat(513) }))).toBe('/title');
    expect((await post('/v1/notes', { body: 'x', title: 't'.repeat(512) })).status).toBe(201);
    expect(pointerOf(await post('/v1/notes', { body: 'x', checkbox: true }))).toBe('/checkbox');
    expect(pointerOf(await post('/v1/notes', { body: 42 }))).toBe('/body');
  });

  it('parentId is a live project or subproject or null; areas, to-dos and unknown ids are refused at /parentId', async () => {
    const area = await container({ kind: 'area', name: 'Area' });
    const project = await container({ kind: 'project', name: 'P', parentId: area.id });
    const sub = await container({ kind: 'subproject', name: 'S', parentId: project.id });
    expect((await note({ body: 'in project', parentId: project.id })).parentId).toBe(project.id);
    expect((await note({ body: 'in sub', parentId: sub.id })).parentId).toBe(sub.id);
    expect((await note({ body: 'standalone', parentId: null })).parentId).toBeNull();
    const areaNote = await post('/v1/notes', { body: 'x', parentId: area.id });
    expect(expectProblem(areaNote, 422, 'validation_failed').errors?.[0]).toMatchObject({ pointer: '/parentId', message: expect.stringMatching(/area/) });
    const t = await todo({ title: 'a to-do' });
    const todoNote = await post('/v1/notes', { body: 'x', parentId: t.id });
    expect(expectProblem(todoNote, 422, 'validation_failed').errors?.[0]).toMatchObject({ pointer: '/parentId', message: expect.stringMatching(/to-do/) });
    expect(pointerOf(await post('/v1/notes', { body: 'x', parentId: 'NOPE' }))).toBe('/parentId');
    const trashed = await container({ kind: 'project', name: 'Trashed' });
    await post(`/v1/containers/${trashed.id}/trash`);
    expect(pointerOf(await post('/v1/notes', { body: 'x', parentId: trashed.id }))).toBe('/parentId');
  });

  it('a client id must be new: a note id is duplicate_id, a to-do or container id is conflict', async () => {
    const id = 'AAAA0000-0000-4000-8000-00000000A001';
    expect((await note({ body: 'x', id })).id).toBe(id);
    expectProblem(await post('/v1/notes', { body: 'y', id }), 409, 'duplicate_id');
    const t = await todo({ title: 'owns an id' });
    expectProblem(await post('/v1/notes', { body: 'y', id: t.id }), 409, 'conflict');
    const c = await container({ kind: 'project', name: 'owns an id too' });
    expectProblem(await post('/v1/notes', { body: 'y', id: c.id }), 409, 'conflict');
    expect(pointerOf(await post('/v1/notes', { body: 'y', id: 'not-a-uuid' }))).toBe('/id');
  });

  it('an unknown id is not_found; another user never sees the note', async () => {
    expectProblem(await get('/v1/notes/0A1B2C3D-0000-4000-8000-00000000000A'), 404, 'not_found');
    const n = await note({ body: 'private' });
    const other = await registerUser(app);
    expectProblem(await get(`/v1/notes/${n.id}`, other.session), 404, 'not_found');
    expectProblem(await patch(`/v1/notes/${n.id}`, { body: 'mine now' }, other.session), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/notes/${n.id}`, { token: other.session }), 404, 'not_found');
    expectProblem(await post(`/v1/notes/${n.id}/trash`, undefined, other.session), 404, 'not_found');
    expect(await noteIds('', other.session)).toEqual([]);
    expect((await get(`/v1/notes/${n.id}`)).body.body).toBe('private');
  });
});

describe('notes: update (spec §4.6)', () => {
  it('changes title and body; null clears the title; blank body and parentId are refused', async () => {
    const n = await note({ body: 'v1', title: 'T' });
    const r = await patch(`/v1/notes/${n.id}`, { body: 'v2' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'T', body: 'v2' });
    expect((await patch(`/v1/notes/${n.id}`, { title: null })).body).toMatchObject({ title: null, body: 'v2' });
    expect(pointerOf(await patch(`/v1/notes/${n.id}`, { body: '   ' }))).toBe('/body');
    expect(pointerOf(await patch(`/v1/notes/${n.id}`, { body: null }))).toBe('/body');
    expect(pointerOf(await patch(`/v1/notes/${n.id}`, { title: 't'.repeat(513) }))).toBe('/title');
    const p = await patch(`/v1/notes/${n.id}`, { parentId: null });
    expect(expectProblem(p, 422, 'validation_failed').errors?.[0]).toMatchObject({ pointer: '/parentId', message: expect.stringMatching(/move/) });
    expect((await get(`/v1/notes/${n.id}`)).body).toMatchObject({ title: null, body: 'v2' });
  });
});

describe('notes: the item band shared with to-dos (spec §2.3, §4.6)', () => {
  it('created notes go to the end of the band, after the to-dos already there', async () => {
    const p = await container({ kind: 'project', name: 'Band' });
    const t1 = await todo({ title: 't1', parentId: p.id });
    const n1 = await note({ body: 'n1', parentId: p.id });
    const t2 = await todo({ title: 't2', parentId: p.id });
    const n2 = await note({ body: 'n2', parentId: p.id });
    expect(await band(p.id)).toEqual([t1.id, n1.id, t2.id, n2.id]);
  });

  it('move with after/before names a to-do or a note of the destination band; neither = end', async () => {
    const p = await container({ kind: 'project', name: 'Moves' });
    const t1 = await todo({ title: 't1', parentId: p.id });
    const t2 = await todo({ title: 't2', parentId: p.id });
    const n1 = await note({ body: 'n1', parentId: p.id });
    const loose = await note({ body: 'loose' });
    const r = await post(`/v1/notes/${loose.id}/move`, { parentId: p.id, after: t1.id });
    expect(r.status).toBe(200);
    expect(r.body.parentId).toBe(p.id);
    expect(await band(p.id)).toEqual([t1.id, loose.id, t2.id, n1.id]);
    await post(`/v1/notes/${loose.id}/move`, { parentId: p.id, before: t1.id });
    expect(await band(p.id)).toEqual([loose.id, t1.id, t2.id, n1.id]);
    await post(`/v1/notes/${n1.id}/move`, { parentId: p.id, before: loose.id });
    expect(await band(p.id)).toEqual([n1.id, loose.id, t1.id, t2.id]);
    await post(`/v1/notes/${n1.id}/move`, { parentId: p.id, after: t2.id });
    expect(await band(p.id)).toEqual([loose.id, t1.id, t2.id, n1.id]);
    await post(`/v1/notes/${loose.id}/move`, { parentId: p.id });
    expect(await band(p.id)).toEqual([t1.id, t2.id, n1.id, loose.id]);
    // Out to standalone.
    expect((await post(`/v1/notes/${loose.id}/move`, { parentId: null })).body.parentId).toBeNull();
    expect(await band(p.id)).toEqual([t1.id, t2.id, n1.id]);
  });

  it('refuses neighbours outside the destination band, under a heading, in the trash, or itself', async () => {
    const p = await container({ kind: 'project', name: 'Strict' });
    const q = await container({ kind: 'project', name: 'Elsewhere' });
    const n = await note({ body: 'mover', parentId: p.id });
    const there = await todo({ title: 'there', parentId: q.id });
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, after: there.id }))).toBe('/after');
    const h = await made('/v1/headings', { projectId: p.id, name: 'Heading' });
    const under = await todo({ title: 'under heading', parentId: p.id, headingId: h.id });
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, before: under.id }))).toBe('/before');
    const gone = await todo({ title: 'gone', parentId: p.id });
    await post(`/v1/todos/${gone.id}/trash`);
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, after: gone.id }))).toBe('/after');
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, after: n.id }))).toBe('/after');
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, after: 'NOPE' }))).toBe('/after');
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: p.id, after: there.id, before: there.id }))).toBe('/before');
    // parentId is required, and the parent rules of create hold.
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, {}))).toBe('/parentId');
    const area = await container({ kind: 'area', name: 'No notes here' });
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: area.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/notes/${n.id}/move`, { parentId: there.id }))).toBe('/parentId');
    expect((await get(`/v1/notes/${n.id}`)).body.parentId).toBe(p.id);
  });
});

describe('notes: folders (docs/api.md "Notes")', () => {
  it('a standalone note is filed in a folder on create or move; a note in a container cannot be', async () => {
    const f = (await post('/v1/note-folders', { name: 'Inbox notes' })).body;
    const g = (await post('/v1/note-folders', { name: 'Other' })).body;
    const p = await container({ kind: 'project', name: 'Proj' });
    const a = await note({ body: 'a', folderId: f.id });
    expect(a.folderId).toBe(f.id);
    const b = await note({ body: 'b', folderId: f.id });
    expect(pointerOf(await post('/v1/notes', { body: 'x', parentId: p.id, folderId: f.id }))).toBe('/folderId');
    expect(pointerOf(await post('/v1/notes', { body: 'x', folderId: 'NOPE' }))).toBe('/folderId');
    expect(await noteIds(`?folder_id=${f.id}`)).toEqual([a.id, b.id]);
    // Omitted folderId keeps the folder; order inside the folder by after/before.
    const moved = await post(`/v1/notes/${b.id}/move`, { parentId: null, before: a.id });
    expect(moved.body.folderId).toBe(f.id);
    expect(await noteIds(`?folder_id=${f.id}`)).toEqual([b.id, a.id]);
    // A neighbour in another folder is refused.
    const c = await note({ body: 'c', folderId: g.id });
    expect(pointerOf(await post(`/v1/notes/${b.id}/move`, { parentId: null, after: c.id }))).toBe('/after');
    // Into another folder, then out of folders, then into a container (the folder is dropped).
    expect((await post(`/v1/notes/${b.id}/move`, { parentId: null, folderId: g.id, after: c.id })).body.folderId).toBe(g.id);
    expect(await noteIds(`?folder_id=${g.id}`)).toEqual([c.id, b.id]);
    expect((await post(`/v1/notes/${b.id}/move`, { parentId: null, folderId: null })).body.folderId).toBeNull();
    expect((await post(`/v1/notes/${a.id}/move`, { parentId: p.id })).body).toMatchObject({ parentId: p.id, folderId: null });
    expect(pointerOf(await post(`/v1/notes/${c.id}/move`, { parentId: p.id, folderId: g.id }))).toBe('/folderId');
  });
});

describe('notes: list (spec §4.6)', () => {
  it('parent_id=null lists standalone notes, an id its band; include_trashed; paging', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const p = (await call(app, 'POST', '/v1/containers', { token: t, body: { kind: 'project', name: 'P' } })).body;
    const mk = async (body: Record<string, unknown>) => (await call(app, 'POST', '/v1/notes', { token: t, body })).body;
    const s1 = await mk({ body: 's1' });
    const s2 = await mk({ body: 's2' });
    const p1 = await mk({ body: 'p1', parentId: p.id });
    expect(await noteIds('?parent_id=null', t)).toEqual([s1.id, s2.id]);
    expect(await noteIds(`?parent_id=${p.id}`, t)).toEqual([p1.id]);
    expect((await noteIds('', t)).sort()).toEqual([s1.id, s2.id, p1.id].sort());
    await call(app, 'POST', `/v1/notes/${s1.id}/trash`, { token: t });
    expect(await noteIds('?parent_id=null', t)).toEqual([s2.id]);
    expect(await noteIds('?parent_id=null&include_trashed=true', t)).toEqual([s1.id, s2.id]);
    expect(await noteIds('?parent_id=null&include_trashed=false', t)).toEqual([s2.id]);
    expect(pointerOf(await get('/v1/notes?include_trashed=yes', t))).toBe('/include_trashed');
    const page1 = await get('/v1/notes?include_trashed=true&limit=2', t);
    expect(page1.body.data).toHaveLength(2);
    const page2 = await get(`/v1/notes?include_trashed=true&limit=2&cursor=${page1.body.next_cursor}`, t);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
    expect(new Set([...page1.body.data, ...page2.body.data].map((n: { id: string }) => n.id)).size).toBe(3);
  });

  it('updated_since filters on the server update time', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const old = (await call(app, 'POST', '/v1/notes', { token: t, body: { body: 'old' } })).body;
    app.clock.advance(60_000);
    const since = new Date(app.clock()).toISOString();
    const fresh = (await call(app, 'POST', '/v1/notes', { token: t, body: { body: 'fresh' } })).body;
    expect(await noteIds(`?updated_since=${since}`, t)).toEqual([fresh.id]);
    app.clock.advance(1000);
    await call(app, 'PATCH', `/v1/notes/${old.id}`, { token: t, body: { body: 'old, edited' } });
    // App order (sort key): the older note first.
    expect(await noteIds(`?updated_since=${since}`, t)).toEqual([old.id, fresh.id]);
  });

  it('notes in a trashed container leave the live list and return with it', async () => {
    const p = await container({ kind: 'project', name: 'Shelved' });
    const n = await note({ body: 'inside', parentId: p.id });
    await post(`/v1/containers/${p.id}/trash`);
    expect(await noteIds()).not.toContain(n.id);
    expect((await get(`/v1/notes/${n.id}`)).body.trashedAt).toBeNull();
    expect(await noteIds('?include_trashed=true')).toContain(n.id);
    await post(`/v1/containers/${p.id}/restore`);
    expect(await noteIds()).toContain(n.id);
  });
});

describe('notes: trash, restore, delete (spec §3)', () => {
  it('trash sets trashedAt and removes the note from lists; restore clears it', async () => {
    const n = await note({ body: 'to trash' });
    app.clock.advance(5000);
    const r = await post(`/v1/notes/${n.id}/trash`);
    expect(r.status).toBe(200);
    expect(r.body.trashedAt).toBe(new Date(app.clock()).toISOString());
    expect(await noteIds()).not.toContain(n.id);
    expect((await get(`/v1/notes/${n.id}`)).body.trashedAt).toBe(r.body.trashedAt);
    // Trashing again keeps the first time.
    app.clock.advance(5000);
    expect((await post(`/v1/notes/${n.id}/trash`)).body.trashedAt).toBe(r.body.trashedAt);
    const back = await post(`/v1/notes/${n.id}/restore`);
    expect(back.status).toBe(200);
    expect(back.body.trashedAt).toBeNull();
    expect(await noteIds()).toContain(n.id);
  });

  it('DELETE answers 204 with no body in any state, is irreversible and removes nothing else', async () => {
    const p = await container({ kind: 'project', name: 'Keep' });
    const t = await todo({ title: 'neighbour', parentId: p.id });
    const live = await note({ body: 'live', parentId: p.id });
    const other = await note({ body: 'other', parentId: p.id });
    const d = await call(app, 'DELETE', `/v1/notes/${live.id}`, { token });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    expect(d.headers.get('content-type')).toBeNull();
    expectProblem(await get(`/v1/notes/${live.id}`), 404, 'not_found');
    expectProblem(await post(`/v1/notes/${live.id}/restore`), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/notes/${live.id}`, { token }), 404, 'not_found');
    expect(await band(p.id)).toEqual([t.id, other.id]);
    const trashed = await note({ body: 'trashed' });
    await post(`/v1/notes/${trashed.id}/trash`);
    expect((await call(app, 'DELETE', `/v1/notes/${trashed.id}`, { token })).status).toBe(204);
    expectProblem(await get(`/v1/notes/${trashed.id}`), 404, 'not_found');
  });

  it('deleting a trashed container removes its notes with note.deleted events', async () => {
    const p = await container({ kind: 'project', name: 'Doomed' });
    const n = await note({ body: 'doomed', parentId: p.id });
    await post(`/v1/containers/${p.id}/trash`);
    const before = eventsOf(app.deps.db, userId).length;
    expect((await call(app, 'DELETE', `/v1/containers/${p.id}`, { token })).status).toBe(204);
    expectProblem(await get(`/v1/notes/${n.id}`), 404, 'not_found');
    const evs = eventsOf(app.deps.db, userId).slice(before);
    expect(evs.some((e) => e.type === 'note.deleted' && e.data.id === n.id)).toBe(true);
  });
});

describe('notes: events (DECISIONS §6)', () => {
  it('note.created/updated/deleted and note_version.created go to the outbox with the change', async () => {
    const before = eventsOf(app.deps.db, userId).length;
    const n = await note({ body: 'evented' });
    app.clock.advance(120_000);
    await patch(`/v1/notes/${n.id}`, { body: 'evented 2' });
    await post(`/v1/notes/${n.id}/move`, { parentId: null });
    await post(`/v1/notes/${n.id}/trash`);
    await post(`/v1/notes/${n.id}/restore`);
    await call(app, 'DELETE', `/v1/notes/${n.id}`, { token });
    const evs = eventsOf(app.deps.db, userId).slice(before);
    expect(evs.map((e) => e.type)).toEqual([
      'note.created',
      'note_version.created',
      'note.updated',
      'note_version.created',
      'note.updated',
      'note.updated',
      'note.updated',
      'note.deleted',
    ]);
    for (const e of evs.filter((x) => x.type.startsWith('note.'))) expect(e.data).toEqual({ object: 'note', id: n.id, sub: userId });
    for (const e of evs.filter((x) => x.type.startsWith('note_version.'))) expect(e.data.object).toBe('note_version');
    // A PATCH that changes nothing and a refused write record nothing.
    const m = await note({ body: 'same' });
    const k = eventsOf(app.deps.db, userId).length;
    expect((await patch(`/v1/notes/${m.id}`, { body: 'same' })).status).toBe(200);
    await post('/v1/notes', { body: '  ' });
    expect(eventsOf(app.deps.db, userId).length).toBe(k);
  });
});

describe('notes: scopes and idempotency', () => {
  it('reads need notes:read and writes notes:write', async () => {
    const u = await registerUser(app);
    const ro = (await createPat(app, u.session, ['notes:read'])).token;
    const todosOnly = (await createPat(app, u.session, ['todos:write'])).token;
    expect((await get('/v1/notes', ro)).status).toBe(200);
    expectProblem(await post('/v1/notes', { body: 'x' }, ro), 403, 'forbidden_scope');
    expectProblem(await get('/v1/notes', todosOnly), 403, 'forbidden_scope');
  });

  it('Idempotency-Key on create replays the first answer and writes once', async () => {
    const headers = { 'idempotency-key': 'note-create-1' };
    const a = await call(app, 'POST', '/v1/notes', { token, body: { body: 'once' }, headers });
    const b = await call(app, 'POST', '/v1/notes', { token, body: { body: 'once' }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect((await get('/v1/notes?parent_id=null')).body.data.filter((n: { body: string }) => n.body === 'once')).toHaveLength(1);
  });
});

describe('notes: sealed under the data key (DECISIONS §3)', () => {
  it('notes, folders and versions are re-sealed on key rotation and still read back', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const f = (await call(app, 'POST', '/v1/note-folders', { token: t, body: { name: 'Rotated folder' } })).body;
    const n = (await call(app, 'POST', '/v1/notes', { token: t, body: { body: 'rotated body', title: 'rotated', folderId: f.id } })).body;
    const v = (await call(app, 'GET', `/v1/notes/${n.id}/versions`, { token: t })).body.data[0];
    const rot = await call(app, 'POST', '/v1/auth/rotate-key', { token: t, body: { password: u.password } });
    expect(rot.status).toBe(200);
    const t2 = rot.body.token as string;
    expect((await call(app, 'GET', `/v1/notes/${n.id}`, { token: t2 })).body).toMatchObject({ body: 'rotated body', title: 'rotated' });
    expect((await call(app, 'GET', `/v1/note-folders/${f.id}`, { token: t2 })).body.name).toBe('Rotated folder');
    expect((await call(app, 'GET', `/v1/notes/${n.id}/versions/${v.id}`, { token: t2 })).body.body).toBe('rotated body');
  });
});
