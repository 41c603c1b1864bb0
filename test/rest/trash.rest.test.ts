// Spec §3 (trash column), §8.2 (30-day purge), DECISIONS §6: GET /v1/trash, POST /v1/trash/empty
// and the purge job, driven by the manual clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { JOBS, runJob } from '../../server/jobs/scheduler.js';
import { purgeTrash } from '../../server/jobs/purge-trash.js';

let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const DAY = 86_400_000;

async function user() {
  const u = await registerUser(app);
  // A year-long token: the purge test moves the clock past a session's 30-day life.
  const t = (await createPat(app, u.session, ['tasks:write'], 365)).token;
  const post = async (path: string, body?: unknown, status?: number) => {
    const r = await call(app, 'POST', path, { token: t, body });
    if (status !== undefined && r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const get = (path: string) => call(app, 'GET', path, { token: t });
  const trash = async (q = '') => (await get(`/v1/trash${q}`)).body.data as { type: string; id: string; title: string; trashedAt: string }[];
  return { ...u, t, post, get, trash };
}

describe('GET /v1/trash (DECISIONS §6)', () => {
  it('lists trashed notes, folders, to-dos and containers as {type, id, title, trashedAt}, newest first', async () => {
    const u = await user();
    const n = await u.post('/v1/notes', { body: 'note body', title: 'Note title' }, 201);
    const untitled = await u.post('/v1/notes', { body: '\n  First line  \nsecond' }, 201);
    const f = await u.post('/v1/note-folders', { name: 'Folder' }, 201);
    const td = await u.post('/v1/todos', { title: 'A to-do' }, 201);
    const c = await u.post('/v1/containers', { kind: 'project', name: 'Project' }, 200);
    const live = await u.post('/v1/notes', { body: 'still live' }, 201);
    const steps: [string, string][] = [
      [`/v1/notes/${n.id}/trash`, n.id],
      [`/v1/note-folders/${f.id}/trash`, f.id],
      [`/v1/todos/${td.id}/trash`, td.id],
      [`/v1/containers/${c.id}/trash`, c.id],
      [`/v1/notes/${untitled.id}/trash`, untitled.id],
    ];
    for (const [path] of steps) {
      app.clock.advance(1000);
      await u.post(path);
    }
    const items = await u.trash();
    expect(items.map((i) => i.id)).toEqual(steps.map(([, id]) => id).reverse());
    expect(items).toContainEqual({ type: 'note', id: n.id, title: 'Note title', trashedAt: expect.any(String) });
    expect(items).toContainEqual({ type: 'note', id: untitled.id, title: 'First line', trashedAt: expect.any(String) });
    expect(items).toContainEqual({ type: 'note_folder', id: f.id, title: 'Folder', trashedAt: expect.any(String) });
    expect(items).toContainEqual({ type: 'todo', id: td.id, title: 'A to-do', trashedAt: expect.any(String) });
    expect(items).toContainEqual({ type: 'container', id: c.id, title: 'Project', trashedAt: expect.any(String) });
    expect(items.find((i) => i.id === n.id)!.trashedAt).toBe((await u.get(`/v1/notes/${n.id}`)).body.trashedAt);
    expect(items.map((i) => i.id)).not.toContain(live.id);
    // Restoring takes an entry out of the trash.
    await u.post(`/v1/notes/${n.id}/restore`);
    expect((await u.trash()).map((i) => i.id)).not.toContain(n.id);
  });

  it('lists only the trashed folder, not its subfolders and notes; same for a container', async () => {
    const u = await user();
    const f = await u.post('/v1/note-folders', { name: 'Top' }, 201);
    const sub = await u.post('/v1/note-folders', { name: 'Sub', parentId: f.id }, 201);
    const inSub = await u.post('/v1/notes', { body: 'in sub', folderId: sub.id }, 201);
    const p = await u.post('/v1/containers', { kind: 'project', name: 'P' }, 200);
    const inP = await u.post('/v1/notes', { body: 'in p', parentId: p.id }, 201);
    const todoInP = await u.post('/v1/todos', { title: 'in p', parentId: p.id }, 201);
    await u.post(`/v1/note-folders/${f.id}/trash`);
    await u.post(`/v1/containers/${p.id}/trash`);
    const ids = (await u.trash()).map((i) => i.id);
    expect(ids.sort()).toEqual([f.id, p.id].sort());
    for (const id of [sub.id, inSub.id, inP.id, todoInP.id]) expect(ids).not.toContain(id);
  });

  it('pages with a cursor and filters on updated_since', async () => {
    const u = await user();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const n = await u.post('/v1/notes', { body: `n${i}` }, 201);
      app.clock.advance(1000);
      await u.post(`/v1/notes/${n.id}/trash`);
      made.push(n.id);
    }
    const p1 = await u.get('/v1/trash?limit=2');
    const p2 = await u.get(`/v1/trash?limit=2&cursor=${p1.body.next_cursor}`);
    const p3 = await u.get(`/v1/trash?limit=2&cursor=${p2.body.next_cursor}`);
    expect([...p1.body.data, ...p2.body.data, ...p3.body.data].map((i: { id: string }) => i.id)).toEqual([...made].reverse());
    expect(p3.body.next_cursor).toBeNull();
    expect(expectProblem(await u.get('/v1/trash?cursor=garbage'), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
    const since = (await u.get(`/v1/notes/${made[3]}`)).body.updatedAt;
    expect((await u.trash(`?updated_since=${since}`)).map((i) => i.id)).toEqual([made[4], made[3]]);
  });

  it('needs read scopes for notes, to-dos and containers; another user sees nothing', async () => {
    const u = await user();
    const n = await u.post('/v1/notes', { body: 'x' }, 201);
    await u.post(`/v1/notes/${n.id}/trash`);
    const notesOnly = (await createPat(app, u.session, ['notes:read'])).token;
    expectProblem(await call(app, 'GET', '/v1/trash', { token: notesOnly }), 403, 'forbidden_scope');
    const umbrella = (await createPat(app, u.session, ['tasks:read'])).token;
    expect((await call(app, 'GET', '/v1/trash', { token: umbrella })).body.data).toHaveLength(1);
    expectProblem(await call(app, 'POST', '/v1/trash/empty', { token: umbrella }), 403, 'forbidden_scope');
    const other = await user();
    expect(await other.trash()).toEqual([]);
  });
});

describe('POST /v1/trash/empty', () => {
  it('deletes every trash entry with its contents, leaves live items, and records the deletions', async () => {
    const u = await user();
    const n = await u.post('/v1/notes', { body: 'trashed note' }, 201);
    const keep = await u.post('/v1/notes', { body: 'kept note' }, 201);
    const f = await u.post('/v1/note-folders', { name: 'F' }, 201);
    const sub = await u.post('/v1/note-folders', { name: 'F sub', parentId: f.id }, 201);
    const inF = await u.post('/v1/notes', { body: 'in folder', folderId: sub.id }, 201);
    const p = await u.post('/v1/containers', { kind: 'project', name: 'P' }, 200);
    const todoInP = await u.post('/v1/todos', { title: 'in P', parentId: p.id }, 201);
    const trashedInP = await u.post('/v1/todos', { title: 'trashed in P', parentId: p.id }, 201);
    const td = await u.post('/v1/todos', { title: 'loose' }, 201);
    await u.post(`/v1/todos/${trashedInP.id}/trash`);
    for (const path of [`/v1/notes/${n.id}/trash`, `/v1/note-folders/${f.id}/trash`, `/v1/containers/${p.id}/trash`, `/v1/todos/${td.id}/trash`]) await u.post(path);
    const before = eventsOf(app.deps.db, u.userId).length;
    const r = await call(app, 'POST', '/v1/trash/empty', { token: u.t });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: { notes: 1, noteFolders: 1, todos: 2, containers: 1 } });
    expect(await u.trash()).toEqual([]);
    for (const path of [`/v1/notes/${n.id}`, `/v1/notes/${inF.id}`, `/v1/note-folders/${f.id}`, `/v1/note-folders/${sub.id}`, `/v1/containers/${p.id}`, `/v1/todos/${todoInP.id}`, `/v1/todos/${trashedInP.id}`, `/v1/todos/${td.id}`]) {
      expectProblem(await u.get(path), 404, 'not_found');
    }
    expect((await u.get(`/v1/notes/${keep.id}`)).status).toBe(200);
    const evs = eventsOf(app.deps.db, u.userId).slice(before);
    const deleted = (type: string) => evs.filter((e) => e.type === type).map((e) => e.data.id).sort();
    expect(deleted('note.deleted')).toEqual([n.id, inF.id].sort());
    expect(deleted('note_folder.deleted')).toEqual([f.id, sub.id].sort());
    expect(deleted('todo.deleted')).toEqual([todoInP.id, trashedInP.id, td.id].sort());
    expect(deleted('container.deleted')).toEqual([p.id]);
    // Emptying an empty trash is fine.
    expect((await call(app, 'POST', '/v1/trash/empty', { token: u.t })).body).toEqual({ deleted: { notes: 0, noteFolders: 0, todos: 0, containers: 0 } });
  });
});

describe('the 30-day purge (spec §3, §8.2)', () => {
  it('is a scheduled job', () => {
    expect(JOBS.some((j) => j.name === 'purge-trash' && j.run === purgeTrash)).toBe(true);
  });

  it('deletes entries trashed 30 days ago with their contents and keeps younger ones', async () => {
    const u = await user();
    const old = await u.post('/v1/notes', { body: 'old' }, 201);
    const f = await u.post('/v1/note-folders', { name: 'old folder' }, 201);
    const inF = await u.post('/v1/notes', { body: 'in old folder', folderId: f.id }, 201);
    const p = await u.post('/v1/containers', { kind: 'project', name: 'old project' }, 200);
    const inP = await u.post('/v1/notes', { body: 'in old project', parentId: p.id }, 201);
    const td = await u.post('/v1/todos', { title: 'old to-do' }, 201);
    const young = await u.post('/v1/notes', { body: 'young' }, 201);
    const live = await u.post('/v1/notes', { body: 'live' }, 201);
    for (const path of [`/v1/notes/${old.id}/trash`, `/v1/note-folders/${f.id}/trash`, `/v1/containers/${p.id}/trash`, `/v1/todos/${td.id}/trash`]) await u.post(path);
    app.clock.advance(2 * DAY);
    await u.post(`/v1/notes/${young.id}/trash`);

    // 29 days and change after the first trash: nothing is old enough.
    app.clock.advance(27 * DAY);
    const nothing = purgeTrash(app.deps);
    expect((await u.trash()).length).toBe(5);
    expect(nothing).toBe(0);

    // 30 days after the first trash: those four go, the young note stays.
    app.clock.advance(1 * DAY);
    const before = eventsOf(app.deps.db, u.userId).length;
    runJob(app.deps, JOBS.find((j) => j.name === 'purge-trash')!);
    expect((await u.trash()).map((i) => i.id)).toEqual([young.id]);
    for (const path of [`/v1/notes/${old.id}`, `/v1/notes/${inF.id}`, `/v1/notes/${inP.id}`, `/v1/note-folders/${f.id}`, `/v1/containers/${p.id}`, `/v1/todos/${td.id}`]) {
      expectProblem(await u.get(path), 404, 'not_found');
    }
    expect((await u.get(`/v1/notes/${live.id}`)).status).toBe(200);
    const types = eventsOf(app.deps.db, u.userId).slice(before).map((e) => e.type).sort();
    expect(types).toEqual(['container.deleted', 'note.deleted', 'note.deleted', 'note.deleted', 'note_folder.deleted', 'todo.deleted']);

    app.clock.advance(2 * DAY);
    expect(purgeTrash(app.deps)).toBeGreaterThanOrEqual(1);
    expect(await u.trash()).toEqual([]);
  });
});
