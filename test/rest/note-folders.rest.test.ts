// Spec §2.4, §3 (note-folder rows), §4.7: note folders over HTTP.
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
  token = (await createPat(app, u.session, ['notes:write'])).token;
});
afterAll(() => app.close());

const post = (path: string, body: unknown = undefined, t = token) => call(app, 'POST', path, { token: t, body });
const get = (path: string, t = token) => call(app, 'GET', path, { token: t });
const folder = async (body: Record<string, unknown>) => {
  const r = await post('/v1/note-folders', body);
  if (r.status !== 201) throw new Error(`folder create failed ${r.status} ${r.text}`);
  return r.body;
};
const note = async (body: Record<string, unknown>) => {
  const r = await post('/v1/notes', body);
  if (r.status !== 201) throw new Error(`note create failed ${r.status} ${r.text}`);
  return r.body;
};
const pointerOf = (r: Awaited<ReturnType<typeof call>>) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;
const listIds = async (query = '') => ((await get(`/v1/note-folders${query}`)).body.data as { id: string }[]).map((f) => f.id);
const noteIds = async (query = '') => ((await get(`/v1/notes${query}`)).body.data as { id: string }[]).map((n) => n.id);

describe('note folders: create and read (spec §2.4, §4.7)', () => {
  it('creates a folder with 201 and every field; a subfolder under a top-level folder', async () => {
    const r = await post('/v1/note-folders', { name: 'Journal', colorHex: '#112233', symbol: 'book.closed' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'Journal', colorHex: '#112233', symbol: 'book.closed', parentId: null, noteCount: 0, trashedAt: null });
    expect(r.body.createdAt).toBe('2026-11-21T12:00:00.000Z');
    const sub = await folder({ name: '2026', parentId: r.body.id });
    expect(sub).toMatchObject({ parentId: r.body.id, colorHex: null, symbol: null });
    expect((await get(`/v1/note-folders/${sub.id}`)).body).toEqual(sub);
  });

  it('a parent that is itself nested is refused at /parentId, as are unknown and trashed parents', async () => {
    const top = await folder({ name: 'Top' });
    const mid = await folder({ name: 'Mid', parentId: top.id });
    expect(pointerOf(await post('/v1/note-folders', { name: 'Deep', parentId: mid.id }))).toBe('/parentId');
    expect(pointerOf(await post('/v1/note-folders', { name: 'Lost', parentId: 'NOPE' }))).toBe('/parentId');
    const gone = await folder({ name: 'Gone' });
    await post(`/v1/note-folders/${gone.id}/trash`);
    expect(pointerOf(await post('/v1/note-folders', { name: 'Under trash', parentId: gone.id }))).toBe('/parentId');
  });

  it('enforces name (required, ≤512, not blank), symbol and colour rules with pointers', async () => {
    expect((await post('/v1/note-folders', { name: 'n'.repeat(512) })).status).toBe(201);
    expect(pointerOf(await post('/v1/note-folders', { name: 'n'.repeat(513) }))).toBe('/name');
    expect(pointerOf(await post('/v1/note-folders', { name: '   ' }))).toBe('/name');
    expect(pointerOf(await post('/v1/note-folders', {}))).toBe('/name');
    expect(pointerOf(await post('/v1/note-folders', { name: 'x', symbol: 'Folder' }))).toBe('/symbol');
    expect(pointerOf(await post('/v1/note-folders', { name: 'x', symbol: 'a..b' }))).toBe('/symbol');
    expect(pointerOf(await post('/v1/note-folders', { name: 'x', symbol: 's'.repeat(65) }))).toBe('/symbol');
    expect((await post('/v1/note-folders', { name: 'x', symbol: 's'.repeat(64) })).status).toBe(201);
    expect(pointerOf(await post('/v1/note-folders', { name: 'x', colorHex: 'red' }))).toBe('/colorHex');
    expect(pointerOf(await post('/v1/note-folders', { name: 'x', extra: 1 }))).toBe('/extra');
  });

  it('a client id must be new (duplicate_id) and an UPPERCASE UUID', async () => {
    const id = 'F0F0F0F0-0000-4000-8000-00000000F001';
    expect((await folder({ name: 'with id', id })).id).toBe(id);
    expectProblem(await post('/v1/note-folders', { name: 'again', id }), 409, 'duplicate_id');
    expect(pointerOf(await post('/v1/note-folders', { name: 'lower', id: id.toLowerCase() }))).toBe('/id');
  });

  it('an unknown id is not_found; another user never sees the folder', async () => {
    expectProblem(await get('/v1/note-folders/0A1B2C3D-0000-4000-8000-00000000000A'), 404, 'not_found');
    const f = await folder({ name: 'Mine' });
    const other = await registerUser(app);
    expectProblem(await get(`/v1/note-folders/${f.id}`, other.session), 404, 'not_found');
    expectProblem(await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token: other.session, body: { name: 'x' } }), 404, 'not_found');
    expect(((await get('/v1/note-folders', other.session)).body.data as unknown[]).length).toBe(0);
  });
});

describe('note folders: update (spec §4.7)', () => {
  it('changes name, colour and symbol; null clears the last two; parentId is refused', async () => {
    const f = await folder({ name: 'Old', colorHex: '#000000', symbol: 'tray' });
    const r = await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token, body: { name: 'New', colorHex: null, symbol: null } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'New', colorHex: null, symbol: null });
    const p = await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token, body: { parentId: null } });
    expect(expectProblem(p, 422, 'validation_failed').errors?.[0]).toMatchObject({ pointer: '/parentId', message: expect.stringMatching(/move/) });
    expect(pointerOf(await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token, body: { name: 'n'.repeat(513) } }))).toBe('/name');
    expect(pointerOf(await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token, body: { name: null } }))).toBe('/name');
  });
});

describe('note folders: order and move (spec §4.7)', () => {
  it('new folders go to the end of their siblings; the list is in tree order by sortKey', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const mk = async (name: string, parentId?: string) => (await post('/v1/note-folders', { name, ...(parentId ? { parentId } : {}) }, t)).body;
    const a = await mk('A');
    const b = await mk('B');
    const a2 = await mk('A2', a.id);
    const a1 = await mk('A1', a.id);
    const c = await mk('C');
    expect(a.sortKey < b.sortKey && b.sortKey < c.sortKey && a2.sortKey < a1.sortKey).toBe(true);
    const all = (await get('/v1/note-folders', t)).body.data.map((f: { name: string }) => f.name);
    expect(all).toEqual(['A', 'A2', 'A1', 'B', 'C']);
    expect((await get('/v1/note-folders?parent_id=null', t)).body.data.map((f: { name: string }) => f.name)).toEqual(['A', 'B', 'C']);
    expect((await get(`/v1/note-folders?parent_id=${a.id}`, t)).body.data.map((f: { name: string }) => f.name)).toEqual(['A2', 'A1']);
    // Paging walks the same order.
    const p1 = await get('/v1/note-folders?limit=2', t);
    expect(p1.body.data.map((f: { name: string }) => f.name)).toEqual(['A', 'A2']);
    const p2 = await get(`/v1/note-folders?limit=2&cursor=${p1.body.next_cursor}`, t);
    expect(p2.body.data.map((f: { name: string }) => f.name)).toEqual(['A1', 'B']);
    const p3 = await get(`/v1/note-folders?limit=2&cursor=${p2.body.next_cursor}`, t);
    expect(p3.body.data.map((f: { name: string }) => f.name)).toEqual(['C']);
    expect(p3.body.next_cursor).toBeNull();
  });

  it('moves after/before a sibling and to another parent; neither = end', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const mk = async (name: string, parentId?: string) => (await post('/v1/note-folders', { name, ...(parentId ? { parentId } : {}) }, t)).body;
    const a = await mk('A');
    const b = await mk('B');
    const c = await mk('C');
    const names = async (q = '?parent_id=null') => (await get(`/v1/note-folders${q}`, t)).body.data.map((f: { name: string }) => f.name);
    expect((await post(`/v1/note-folders/${c.id}/move`, { parentId: null, after: a.id }, t)).status).toBe(200);
    expect(await names()).toEqual(['A', 'C', 'B']);
    await post(`/v1/note-folders/${b.id}/move`, { parentId: null, before: a.id }, t);
    expect(await names()).toEqual(['B', 'A', 'C']);
    await post(`/v1/note-folders/${b.id}/move`, { parentId: null }, t);
    expect(await names()).toEqual(['A', 'C', 'B']);
    const moved = await post(`/v1/note-folders/${c.id}/move`, { parentId: a.id }, t);
    expect(moved.body.parentId).toBe(a.id);
    expect(await names()).toEqual(['A', 'B']);
    expect(await names(`?parent_id=${a.id}`)).toEqual(['C']);
    // A neighbour must be a sibling under the destination; after and before together are refused.
    expect(pointerOf(await post(`/v1/note-folders/${b.id}/move`, { parentId: null, after: c.id }, t))).toBe('/after');
    expect(pointerOf(await post(`/v1/note-folders/${b.id}/move`, { parentId: null, after: a.id, before: a.id }, t))).toBe('/before');
    expect(pointerOf(await post(`/v1/note-folders/${b.id}/move`, {}, t))).toBe('/parentId');
  });

  it('a folder holding folders may only sit at the top level; no third level; not inside itself', async () => {
    const top = await folder({ name: 'Holder' });
    await folder({ name: 'Child', parentId: top.id });
    const other = await folder({ name: 'Other' });
    expect(pointerOf(await post(`/v1/note-folders/${top.id}/move`, { parentId: other.id }))).toBe('/parentId');
    expect(pointerOf(await post(`/v1/note-folders/${other.id}/move`, { parentId: other.id }))).toBe('/parentId');
    const sub = await folder({ name: 'Sub', parentId: top.id });
    expect(pointerOf(await post(`/v1/note-folders/${other.id}/move`, { parentId: sub.id }))).toBe('/parentId');
    // Even a trashed child keeps its parent at the top level (a restore would make a third level).
    const lone = await folder({ name: 'Lone' });
    const kid = await folder({ name: 'Kid', parentId: lone.id });
    await post(`/v1/note-folders/${kid.id}/trash`);
    expect(pointerOf(await post(`/v1/note-folders/${lone.id}/move`, { parentId: other.id }))).toBe('/parentId');
    // A folder without children may move under a top-level folder.
    expect((await post(`/v1/note-folders/${other.id}/move`, { parentId: top.id })).body.parentId).toBe(top.id);
  });
});

describe('note folders: noteCount (spec §2.4)', () => {
  it('counts live notes directly in the folder', async () => {
    const f = await folder({ name: 'Counted' });
    const sub = await folder({ name: 'Inner', parentId: f.id });
    await note({ body: 'one', folderId: f.id });
    const two = await note({ body: 'two', folderId: f.id });
    await note({ body: 'deeper', folderId: sub.id });
    expect((await get(`/v1/note-folders/${f.id}`)).body.noteCount).toBe(2);
    await post(`/v1/notes/${two.id}/trash`);
    expect((await get(`/v1/note-folders/${f.id}`)).body.noteCount).toBe(1);
    const listed = (await get('/v1/note-folders')).body.data.find((x: { id: string }) => x.id === f.id);
    expect(listed.noteCount).toBe(1);
    expect((await get(`/v1/note-folders/${sub.id}`)).body.noteCount).toBe(1);
  });
});

describe('note folders: trash and restore (spec §3)', () => {
  it('trash marks only the folder; subfolders and their notes leave live views keeping trashedAt null', async () => {
    const f = await folder({ name: 'Trashy' });
    const sub = await folder({ name: 'Trashy sub', parentId: f.id });
    const inTop = await note({ body: 'in top', folderId: f.id });
    const inSub = await note({ body: 'in sub', folderId: sub.id });
    const r = await post(`/v1/note-folders/${f.id}/trash`);
    expect(r.status).toBe(200);
    expect(r.body.trashedAt).toBe('2026-11-21T12:00:00.000Z');
    // Only the folder got trashedAt.
    expect((await get(`/v1/note-folders/${sub.id}`)).body.trashedAt).toBeNull();
    expect((await get(`/v1/notes/${inTop.id}`)).body.trashedAt).toBeNull();
    expect((await get(`/v1/notes/${inSub.id}`)).body.trashedAt).toBeNull();
    // They left the live lists.
    const live = await listIds();
    expect(live).not.toContain(f.id);
    expect(live).not.toContain(sub.id);
    expect(await listIds(`?parent_id=${f.id}`)).toEqual([]);
    const notesLive = await noteIds();
    expect(notesLive).not.toContain(inTop.id);
    expect(notesLive).not.toContain(inSub.id);
    // include_trashed brings them back into the list.
    const all = await listIds('?include_trashed=true');
    expect(all).toEqual(expect.arrayContaining([f.id, sub.id]));
    expect(await noteIds('?include_trashed=true')).toEqual(expect.arrayContaining([inTop.id, inSub.id]));
    // A trashed folder takes no new notes or subfolders.
    expect(pointerOf(await post('/v1/notes', { body: 'x', folderId: sub.id }))).toBe('/folderId');
  });

  it('restore brings subfolders and notes back, but a note trashed on its own earlier stays trashed', async () => {
    const f = await folder({ name: 'Restorable' });
    const sub = await folder({ name: 'Restorable sub', parentId: f.id });
    const kept = await note({ body: 'kept', folderId: sub.id });
    const alone = await note({ body: 'trashed alone', folderId: f.id });
    app.clock.advance(1000);
    const t1 = (await post(`/v1/notes/${alone.id}/trash`)).body.trashedAt;
    app.clock.advance(1000);
    await post(`/v1/note-folders/${f.id}/trash`);
    app.clock.advance(1000);
    const r = await post(`/v1/note-folders/${f.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body.trashedAt).toBeNull();
    expect(await listIds()).toEqual(expect.arrayContaining([f.id, sub.id]));
    const live = await noteIds();
    expect(live).toContain(kept.id);
    expect(live).not.toContain(alone.id);
    expect((await get(`/v1/notes/${alone.id}`)).body.trashedAt).toBe(t1);
    // Repeating restore (or trash) changes nothing.
    expect((await post(`/v1/note-folders/${f.id}/restore`)).body.updatedAt).toBe(r.body.updatedAt);
  });
});

describe('note folders: delete (spec §3)', () => {
  it('a live folder is a conflict; nothing is removed', async () => {
    const f = await folder({ name: 'Live' });
    const n = await note({ body: 'stay', folderId: f.id });
    expectProblem(await call(app, 'DELETE', `/v1/note-folders/${f.id}`, { token }), 409, 'conflict');
    expect((await get(`/v1/note-folders/${f.id}`)).status).toBe(200);
    expect((await get(`/v1/notes/${n.id}`)).status).toBe(200);
  });

  it('a trashed folder goes with its subfolders and every note in them, trashed ones and their versions included', async () => {
    const f = await folder({ name: 'Doomed' });
    const sub = await folder({ name: 'Doomed sub', parentId: f.id });
    const n1 = await note({ body: 'n1', folderId: f.id });
    const n2 = await note({ body: 'n2', folderId: sub.id });
    const n3 = await note({ body: 'n3', folderId: sub.id });
    await post(`/v1/notes/${n3.id}/trash`);
    const outside = await note({ body: 'outside' });
    const versionId = (await get(`/v1/notes/${n2.id}/versions`)).body.data[0].id;
    expect((await get(`/v1/note-versions/${versionId}`)).status).toBe(200);
    await post(`/v1/note-folders/${f.id}/trash`);
    const before = eventsOf(app.deps.db, userId).length;
    const d = await call(app, 'DELETE', `/v1/note-folders/${f.id}`, { token });
    expect(d.status).toBe(200);
    expect(d.body.id).toBe(f.id);
    expect(d.body.deletedFolderIds.sort()).toEqual([f.id, sub.id].sort());
    expect(d.body.deletedNoteIds.sort()).toEqual([n1.id, n2.id, n3.id].sort());
    for (const id of [f.id, sub.id]) expectProblem(await get(`/v1/note-folders/${id}`), 404, 'not_found');
    for (const id of [n1.id, n2.id, n3.id]) expectProblem(await get(`/v1/notes/${id}`), 404, 'not_found');
    expectProblem(await get(`/v1/note-versions/${versionId}`), 404, 'not_found');
    expect((await get(`/v1/notes/${outside.id}`)).status).toBe(200);
    const evs = eventsOf(app.deps.db, userId).slice(before);
    expect(evs.filter((e) => e.type === 'note.deleted').map((e) => e.data.id).sort()).toEqual([n1.id, n2.id, n3.id].sort());
    expect(evs.filter((e) => e.type === 'note_folder.deleted').map((e) => e.data.id).sort()).toEqual([f.id, sub.id].sort());
    expectProblem(await call(app, 'DELETE', `/v1/note-folders/${f.id}`, { token }), 404, 'not_found');
  });

  it('a subfolder inside a trashed folder may be deleted on its own', async () => {
    const f = await folder({ name: 'Parent' });
    const sub = await folder({ name: 'Kid', parentId: f.id });
    expectProblem(await call(app, 'DELETE', `/v1/note-folders/${sub.id}`, { token }), 409, 'conflict');
    await post(`/v1/note-folders/${f.id}/trash`);
    expect((await call(app, 'DELETE', `/v1/note-folders/${sub.id}`, { token })).status).toBe(200);
    expect((await get(`/v1/note-folders/${f.id}`)).status).toBe(200);
  });
});

describe('note folders: events (DECISIONS §6)', () => {
  it('records note_folder.created/updated/deleted in the outbox; a refused write records nothing', async () => {
    const before = eventsOf(app.deps.db, userId).length;
    const f = await folder({ name: 'Evented' });
    await call(app, 'PATCH', `/v1/note-folders/${f.id}`, { token, body: { name: 'Evented 2' } });
    await post(`/v1/note-folders/${f.id}/move`, { parentId: null });
    await post(`/v1/note-folders/${f.id}/trash`);
    await post(`/v1/note-folders/${f.id}/restore`);
    await post(`/v1/note-folders/${f.id}/trash`);
    await call(app, 'DELETE', `/v1/note-folders/${f.id}`, { token });
    const evs = eventsOf(app.deps.db, userId).slice(before);
    expect(evs.map((e) => e.type)).toEqual([
      'note_folder.created',
      'note_folder.updated',
      'note_folder.updated',
      'note_folder.updated',
      'note_folder.updated',
      'note_folder.updated',
      'note_folder.deleted',
    ]);
    for (const e of evs) expect(e.data).toEqual({ object: 'note_folder', id: f.id, sub: userId });
    const n = eventsOf(app.deps.db, userId).length;
    await post('/v1/note-folders', { name: 'bad', parentId: 'NOPE' });
    expect(eventsOf(app.deps.db, userId).length).toBe(n);
  });
});

describe('note folders: routing and scopes', () => {
  it('/v1/note-folders and /v1/notes resolve to their own procedures', async () => {
    const f = await folder({ name: 'Routed' });
    const n = await note({ body: 'routed' });
    expectProblem(await get(`/v1/notes/${f.id}`), 404, 'not_found');
    expectProblem(await get(`/v1/note-folders/${n.id}`), 404, 'not_found');
    expect((await get(`/v1/note-folders/${f.id}`)).body.name).toBe('Routed');
    expect((await get(`/v1/NOTE-FOLDERS/${f.id}`)).body.name).toBe('Routed');
  });

  it('reads need notes:read and writes notes:write', async () => {
    const u = await registerUser(app);
    const ro = (await createPat(app, u.session, ['notes:read'])).token;
    const none = (await createPat(app, u.session, ['todos:write'])).token;
    expect((await get('/v1/note-folders', ro)).status).toBe(200);
    expectProblem(await post('/v1/note-folders', { name: 'x' }, ro), 403, 'forbidden_scope');
    expectProblem(await get('/v1/note-folders', none), 403, 'forbidden_scope');
  });

  it('Idempotency-Key on create replays the first answer', async () => {
    const headers = { 'idempotency-key': 'folder-create-1' };
    const a = await call(app, 'POST', '/v1/note-folders', { token, body: { name: 'Once' }, headers });
    const b = await call(app, 'POST', '/v1/note-folders', { token, body: { name: 'Once' }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
  });
});

describe('note folders: account_too_large (spec §4.7)', () => {
  it('a folder list decrypting past the limit is refused; a smaller page answers', async () => {
    const small = await startApp({}, { decryptRowLimit: 5 });
    try {
      const u = await registerUser(small);
      for (let i = 0; i < 8; i++) await call(small, 'POST', '/v1/note-folders', { token: u.session, body: { name: `f${i}` } });
      expectProblem(await call(small, 'GET', '/v1/note-folders', { token: u.session }), 422, 'account_too_large');
      const page = await call(small, 'GET', '/v1/note-folders?limit=4', { token: u.session });
      expect(page.body.data).toHaveLength(4);
    } finally {
      await small.close();
    }
  });
});
