// Attachments over HTTP (spec §2.6, §4.9; issue 15): url, text and note kinds, parent checks,
// events, and removal with the parent (to-do delete, container delete, trash empty, 30-day purge).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { purgeTrash } from '../../server/jobs/purge-trash.js';

let app: TestApp;
let token: string;
let userId: string;
const DAY = 86_400_000;

const count = (table: string, where = '1') => (app.deps.db.$client.prepare(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`).get() as { n: number }).n;

async function todo(title = 'a to-do', parentId?: string) {
  const r = await call(app, 'POST', '/v1/todos', { token, body: { title, ...(parentId ? { parentId } : {}) } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
async function project(name = 'p') {
  const r = await call(app, 'POST', '/v1/containers', { token, body: { kind: 'project', name } });
  expect([200, 201]).toContain(r.status);
  return r.body.id as string;
}
async function attach(body: Record<string, unknown>) {
  app.clock.advance(1); // creation order is the list order
  const r = await call(app, 'POST', '/v1/attachments', { token, body });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; kind: string };
}

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  token = u.session;
  userId = u.userId;
});
afterAll(() => app.close());

describe('attachments over HTTP', () => {
  it('creates, reads, lists, patches and deletes each kind, with events', async () => {
    const t = await todo();
    const note = await call(app, 'POST', '/v1/notes', { token, body: { body: 'note body' } });
    const u = await attach({ parentType: 'todo', parentId: t, kind: 'url', url: 'https://example.com/a', title: 'Example' });
    expect(u).toMatchObject({ parentType: 'todo', parentId: t, kind: 'url', url: 'https://example.com/a', title: 'Example', text: null, noteId: null });
    const x = await attach({ parentType: 'todo', parentId: t, kind: 'text', text: 'some words' });
    expect(x).toMatchObject({ kind: 'text', text: 'some words', url: null, title: null });
    const n = await attach({ parentType: 'todo', parentId: t, kind: 'note', noteId: note.body.id });
    expect(n).toMatchObject({ kind: 'note', noteId: note.body.id });

    expect((await call(app, 'GET', `/v1/attachments/${u.id}`, { token })).body).toEqual(u);
    const list = await call(app, 'GET', `/v1/attachments?parent_id=${t}&limit=2`, { token });
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([u.id, x.id]);
    const rest = await call(app, 'GET', `/v1/attachments?parent_id=${t}&cursor=${encodeURIComponent(list.body.next_cursor)}`, { token });
    expect(rest.body.data.map((a: { id: string }) => a.id)).toEqual([n.id]);
    expect(rest.body.next_cursor).toBeNull();

    app.clock.advance(1000);
    const since = new Date(app.clock()).toISOString();
    const p = await call(app, 'PATCH', `/v1/attachments/${u.id}`, { token, body: { title: null, url: 'https://example.org/b' } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ title: null, url: 'https://example.org/b' });
    const changed = await call(app, 'GET', `/v1/attachments?updated_since=${since}`, { token });
    expect(changed.body.data.map((a: { id: string }) => a.id)).toEqual([u.id]);
    const pt = await call(app, 'PATCH', `/v1/attachments/${x.id}`, { token, body: { text: 'other words' } });
    expect(pt.body.text).toBe('other words');

    const d = await call(app, 'DELETE', `/v1/attachments/${u.id}`, { token });
    expect(d.status).toBe(204);
    expectProblem(await call(app, 'GET', `/v1/attachments/${u.id}`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/attachments/${u.id}`, { token }), 404, 'not_found');
    const types = eventsOf(app.deps.db, userId).filter((e) => e.data.id === u.id).map((e) => e.type);
    expect(types).toEqual(['attachment.created', 'attachment.updated', 'attachment.deleted']);
  });

  it('each kind takes its own field only, with pointers', async () => {
    const t = await todo();
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: 'url' }, '/url'],
      [{ kind: 'url', url: 'https://e.test', text: 'x' }, '/text'],
      [{ kind: 'text' }, '/text'],
      [{ kind: 'text', text: 'x', url: 'https://e.test' }, '/url'],
      [{ kind: 'note' }, '/noteId'],
      [{ kind: 'text', text: 'x', noteId: 'A1B2C3D4-E5F6-4A1B-8C9D-0E1F2A3B4C5D' }, '/noteId'],
      [{ kind: 'note', noteId: 'A1B2C3D4-E5F6-4A1B-8C9D-0E1F2A3B4C5D' }, '/noteId'],
      [{ kind: 'file' }, '/kind'],
      [{ kind: 'url', url: 'javascript:alert(1)' }, '/url'],
      [{ kind: 'url', url: 'not a url' }, '/url'],
      [{ kind: 'url', url: `https://e.test/${'a'.repeat(2048)}` }, '/url'],
      [{ kind: 'text', text: 'y'.repeat(2049) }, '/text'],
      [{ kind: 'text', text: '   ' }, '/text'],
      [{ kind: 'text', text: 'x', title: 't'.repeat(513) }, '/title'],
      [{ kind: 'text', text: 'x', id: 'a1b2c3d4-e5f6-4a1b-8c9d-0e1f2a3b4c5d' }, '/id'],
    ];
    for (const [extra, pointer] of cases) {
      const r = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'todo', parentId: t, ...extra } });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer, JSON.stringify(extra)).toBe(pointer);
    }
    // The limits themselves pass.
    await attach({ parentType: 'todo', parentId: t, kind: 'text', text: 'y'.repeat(2048), title: 't'.repeat(512) });
    await attach({ parentType: 'todo', parentId: t, kind: 'url', url: `https://e.test/${'a'.repeat(2048 - 15)}` });
    expect(count('attachments', `parent_id = '${t}'`)).toBe(2);
  });

  it('PATCH changes only the fields that fit the kind', async () => {
    const t = await todo();
    const u = await attach({ parentType: 'todo', parentId: t, kind: 'url', url: 'https://e.test' });
    const x = await attach({ parentType: 'todo', parentId: t, kind: 'text', text: 'x' });
    expect(expectProblem(await call(app, 'PATCH', `/v1/attachments/${u.id}`, { token, body: { text: 'no' } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/text');
    expect(expectProblem(await call(app, 'PATCH', `/v1/attachments/${x.id}`, { token, body: { url: 'https://e.test' } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/url');
    expect(expectProblem(await call(app, 'PATCH', `/v1/attachments/${x.id}`, { token, body: { parentId: t } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    expect(expectProblem(await call(app, 'PATCH', `/v1/attachments/${x.id}`, { token, body: { title: 'z'.repeat(513) } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/title');
    expect((await call(app, 'GET', `/v1/attachments/${x.id}`, { token })).body).toMatchObject({ text: 'x', title: null });
  });

  it("the parent must exist and be the caller's, inbox items included", async () => {
    const other = await registerUser(app);
    const theirs = await call(app, 'POST', '/v1/todos', { token: other.session, body: { title: 'theirs' } });
    const theirNote = await call(app, 'POST', '/v1/notes', { token: other.session, body: { body: 'their note' } });
    const mine = await todo();
    const r = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'todo', parentId: theirs.body.id, kind: 'text', text: 'x' } });
    expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    // A to-do id given as a container is not a container.
    const c = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'container', parentId: mine, kind: 'text', text: 'x' } });
    expect(expectProblem(c, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    // A to-do id given as an inbox item is not an inbox item; the caller's inbox item is a parent, another user's is not.
    const inbox = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'inbox', parentId: mine, kind: 'text', text: 'x' } });
    expect(expectProblem(inbox, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    const myItem = (await call(app, 'POST', '/v1/inbox', { token, body: { kind: 'text', text: 'captured' } })).body.id as string;
    const theirItem = (await call(app, 'POST', '/v1/inbox', { token: other.session, body: { kind: 'text', text: 'theirs' } })).body.id as string;
    const onItem = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'inbox', parentId: myItem, kind: 'text', text: 'on the item' } });
    expect(onItem.status, onItem.text).toBe(201);
    expect(onItem.body).toMatchObject({ parentType: 'inbox', parentId: myItem });
    const onTheirs = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'inbox', parentId: theirItem, kind: 'text', text: 'x' } });
    expect(expectProblem(onTheirs, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    const n = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'todo', parentId: mine, kind: 'note', noteId: theirNote.body.id } });
    expect(expectProblem(n, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/noteId');
    // And another user's attachment is not found.
    const a = await attach({ parentType: 'todo', parentId: mine, kind: 'text', text: 'private' });
    expectProblem(await call(app, 'GET', `/v1/attachments/${a.id}`, { token: other.session }), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/attachments/${a.id}`, { token: other.session }), 404, 'not_found');
    expect((await call(app, 'GET', '/v1/attachments', { token: other.session })).body.data).toEqual([]);
  });

  it('a client id: duplicate_id on reuse; an idempotent retry replays', async () => {
    const t = await todo();
    const id = 'B1B2C3D4-E5F6-4A1B-8C9D-0E1F2A3B4C5D';
    await attach({ parentType: 'todo', parentId: t, kind: 'text', text: 'x', id });
    expectProblem(await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'y', id } }), 409, 'duplicate_id');
    const h = { 'Idempotency-Key': 'attach-once' };
    const a = await call(app, 'POST', '/v1/attachments', { token, headers: h, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'z' } });
    const b = await call(app, 'POST', '/v1/attachments', { token, headers: h, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'z' } });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(count('attachments', `parent_id = '${t}'`)).toBe(2);
  });

  it('scopes: attachments:read reads, attachments:write writes', async () => {
    const t = await todo();
    const reader = (await createPat(app, token, ['attachments:read'])).token;
    const writer = (await createPat(app, token, ['attachments:write'])).token;
    const w = await call(app, 'POST', '/v1/attachments', { token: writer, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'x' } });
    expect(w.status).toBe(201);
    expectProblem(await call(app, 'POST', '/v1/attachments', { token: reader, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'x' } }), 403, 'forbidden_scope');
    expect((await call(app, 'GET', `/v1/attachments/${w.body.id}`, { token: reader })).status).toBe(200);
  });

  it('deleting a to-do removes its attachments, recording attachment.deleted', async () => {
    const t = await todo();
    const a = await attach({ parentType: 'todo', parentId: t, kind: 'text', text: 'x' });
    const keep = await attach({ parentType: 'todo', parentId: await todo(), kind: 'text', text: 'kept' });
    expect((await call(app, 'DELETE', `/v1/todos/${t}`, { token })).status).toBe(204);
    expectProblem(await call(app, 'GET', `/v1/attachments/${a.id}`, { token }), 404, 'not_found');
    expect(eventsOf(app.deps.db, userId).some((e) => e.type === 'attachment.deleted' && e.data.id === a.id)).toBe(true);
    expect((await call(app, 'GET', `/v1/attachments/${keep.id}`, { token })).status).toBe(200);
  });

  it("deleting a container removes its, its subprojects' and its to-dos' attachments, and note attachments to its notes", async () => {
    const p = await project();
    const sub = await call(app, 'POST', '/v1/containers', { token, body: { kind: 'subproject', name: 's', parentId: p } });
    const t = await todo('inside', sub.body.id);
    const note = await call(app, 'POST', '/v1/notes', { token, body: { body: 'in the project', parentId: p } });
    const outside = await todo('outside');
    const ids = [
      (await attach({ parentType: 'container', parentId: p, kind: 'text', text: 'on project' })).id,
      (await attach({ parentType: 'container', parentId: sub.body.id, kind: 'text', text: 'on sub' })).id,
      (await attach({ parentType: 'todo', parentId: t, kind: 'url', url: 'https://e.test' })).id,
      (await attach({ parentType: 'todo', parentId: outside, kind: 'note', noteId: note.body.id })).id,
    ];
    const keep = await attach({ parentType: 'todo', parentId: outside, kind: 'text', text: 'kept' });
    await call(app, 'POST', `/v1/containers/${p}/trash`, { token });
    expect((await call(app, 'DELETE', `/v1/containers/${p}`, { token })).status).toBe(204);
    for (const id of ids) expectProblem(await call(app, 'GET', `/v1/attachments/${id}`, { token }), 404, 'not_found');
    const deleted = new Set(eventsOf(app.deps.db, userId).filter((e) => e.type === 'attachment.deleted').map((e) => e.data.id));
    for (const id of ids) expect(deleted.has(id)).toBe(true);
    expect((await call(app, 'GET', `/v1/attachments/${keep.id}`, { token })).status).toBe(200);
  });

  it('deleting a note removes the note attachments pointing at it', async () => {
    const note = await call(app, 'POST', '/v1/notes', { token, body: { body: 'soon gone' } });
    const a = await attach({ parentType: 'todo', parentId: await todo(), kind: 'note', noteId: note.body.id });
    expect((await call(app, 'DELETE', `/v1/notes/${note.body.id}`, { token })).status).toBe(204);
    expectProblem(await call(app, 'GET', `/v1/attachments/${a.id}`, { token }), 404, 'not_found');
  });

  it('emptying the trash and the 30-day purge remove the attachments of what they delete', async () => {
    const t1 = await todo('emptied');
    const a1 = await attach({ parentType: 'todo', parentId: t1, kind: 'text', text: 'x' });
    await call(app, 'POST', `/v1/todos/${t1}/trash`, { token });
    expect((await call(app, 'POST', '/v1/trash/empty', { token })).status).toBe(200);
    expectProblem(await call(app, 'GET', `/v1/attachments/${a1.id}`, { token }), 404, 'not_found');

    const p = await project('purged');
    const a2 = await attach({ parentType: 'container', parentId: p, kind: 'text', text: 'y' });
    await call(app, 'POST', `/v1/containers/${p}/trash`, { token });
    app.clock.advance(31 * DAY);
    expect(purgeTrash(app.deps)).toBeGreaterThan(0);
    expect(count('attachments', `id = '${a2.id}'`)).toBe(0);
    expect(eventsOf(app.deps.db, userId).some((e) => e.type === 'attachment.deleted' && e.data.id === a2.id)).toBe(true);
  });
});
