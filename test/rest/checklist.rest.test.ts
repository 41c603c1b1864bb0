// Issue 13 item 9 over HTTP: checklist items one at a time (add, change, remove, reorder), so a
// client never resends the list; each change is one `todo.updated` in the same transaction, the
// checklist's limits hold, and the same procedures answer on /trpc.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';

let app: TestApp;
let token: string;
let userId: string;
let session: string;

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  userId = u.userId;
  session = u.session;
  token = (await createPat(app, u.session, ['todos:write'])).token;
});
afterAll(() => app.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const post = (path: string, body?: unknown, headers?: Record<string, string>) => call(app, 'POST', path, { token, body, ...(headers ? { headers } : {}) });
const items = (r: Res) => r.body.checklist.map((c: Any) => `${c.title}${c.done ? '✓' : ''}`);
const events = (since: number) => eventsOf(app.deps.db, userId).slice(since).map((e) => `${e.type} ${e.data.id}`);

async function todo(checklist: { title: string; done?: boolean; id?: string }[] = []): Promise<Any> {
  const r = await post('/v1/todos', { title: 'Pack', checklist });
  if (r.status !== 201) throw new Error(`todo create failed ${r.status} ${r.text}`);
  return r.body;
}

describe('checklist items', () => {
  it('adds at the end, after or before an item; 201 with the to-do; one todo.updated each', async () => {
    const t = await todo([{ title: 'socks', id: 'S' }]);
    const before = eventsOf(app.deps.db, userId).length;
    const a = await post(`/v1/todos/${t.id}/checklist`, { title: 'tent' });
    expect(a.status).toBe(201);
    expect(a.body.id).toBe(t.id);
    expect(items(a)).toEqual(['socks', 'tent']);
    expect(a.body.checklist[1].id).toMatch(/^[0-9A-F-]{36}$/);
    const b = await post(`/v1/todos/${t.id}/checklist`, { title: 'map', itemId: 'M', after: 'S', done: true });
    expect(items(b)).toEqual(['socks', 'map✓', 'tent']);
    const c = await post(`/v1/todos/${t.id}/checklist`, { title: 'boots', before: 'S' });
    expect(items(c)).toEqual(['boots', 'socks', 'map✓', 'tent']);
    expect(events(before)).toEqual([`todo.updated ${t.id}`, `todo.updated ${t.id}`, `todo.updated ${t.id}`]);
    // Read back: what was stored, not only what was answered.
    expect(items(await call(app, 'GET', `/v1/todos/${t.id}`, { token }))).toEqual(['boots', 'socks', 'map✓', 'tent']);
  });

  it('adding is idempotent with an Idempotency-Key; refusals name the field', async () => {
    const t = await todo([{ title: 'a', id: 'A' }]);
    const first = await post(`/v1/todos/${t.id}/checklist`, { title: 'b' }, { 'idempotency-key': 'add-b' });
    const again = await post(`/v1/todos/${t.id}/checklist`, { title: 'b' }, { 'idempotency-key': 'add-b' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.checklist).toEqual(first.body.checklist);
    expect(items(await call(app, 'GET', `/v1/todos/${t.id}`, { token }))).toEqual(['a', 'b']);
    const pointer = (r: Res) => expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer;
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: 'c', after: 'NOPE' }))).toBe('/after');
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: 'c', after: 'A', before: 'A' }))).toBe('/before');
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: 'c', itemId: 'A' }))).toBe('/itemId');
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: '' }))).toBe('/title');
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: 'x'.repeat(4097) }))).toBe('/title');
    expect(pointer(await post(`/v1/todos/${t.id}/checklist`, { title: 'c', checklist: [] }))).toBe('/checklist');
    expectProblem(await post('/v1/todos/00000000-0000-4000-8000-000000000000/checklist', { title: 'c' }), 404, 'not_found');
  });

  it('holds at most 100 items, as the checklist field does', async () => {
    const t = await todo(Array.from({ length: 100 }, (_, i) => ({ title: `item ${i}` })));
    const r = await post(`/v1/todos/${t.id}/checklist`, { title: 'one too many' });
    expectProblem(r, 409, 'conflict');
    expect((await call(app, 'GET', `/v1/todos/${t.id}`, { token })).body.checklist).toHaveLength(100);
  });

  it('PATCH changes one item and keeps the others; an unknown item is 404', async () => {
    const t = await todo([{ title: 'a', id: 'A' }, { title: 'b', id: 'B' }, { title: 'c', id: 'C' }]);
    const before = eventsOf(app.deps.db, userId).length;
    const r = await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/B`, { token, body: { done: true } });
    expect(r.status).toBe(200);
    expect(items(r)).toEqual(['a', 'b✓', 'c']);
    const r2 = await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/B`, { token, body: { title: 'bee' } });
    expect(items(r2)).toEqual(['a', 'bee✓', 'c']);
    // Sending what is already there changes nothing and records nothing.
    await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/B`, { token, body: { title: 'bee' } });
    expect(events(before)).toEqual([`todo.updated ${t.id}`, `todo.updated ${t.id}`]);
    expectProblem(await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/Z`, { token, body: { done: true } }), 404, 'not_found');
    expect(expectProblem(await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/B`, { token, body: { done: 'yes' } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/done');
  });

  it('DELETE removes one item (200 with the to-do); again is 404', async () => {
    const t = await todo([{ title: 'a', id: 'A' }, { title: 'b', id: 'B' }]);
    const r = await call(app, 'DELETE', `/v1/todos/${t.id}/checklist/A`, { token });
    expect(r.status).toBe(200);
    expect(items(r)).toEqual(['b']);
    expectProblem(await call(app, 'DELETE', `/v1/todos/${t.id}/checklist/A`, { token }), 404, 'not_found');
  });

  it('move reorders after or before an item, or to the end', async () => {
    const t = await todo([{ title: 'a', id: 'A' }, { title: 'b', id: 'B' }, { title: 'c', id: 'C' }]);
    expect(items(await post(`/v1/todos/${t.id}/checklist/A/move`, { after: 'C' }))).toEqual(['b', 'c', 'a']);
    expect(items(await post(`/v1/todos/${t.id}/checklist/A/move`, { before: 'B' }))).toEqual(['a', 'b', 'c']);
    expect(items(await post(`/v1/todos/${t.id}/checklist/B/move`, {}))).toEqual(['a', 'c', 'b']);
    expect(expectProblem(await post(`/v1/todos/${t.id}/checklist/B/move`, { after: 'B' }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/after');
    expectProblem(await post(`/v1/todos/${t.id}/checklist/Z/move`, { after: 'A' }), 404, 'not_found');
  });

  it('needs todos:write; the same procedures answer on /trpc', async () => {
    const t = await todo([{ title: 'a', id: 'A' }]);
    const reader = (await createPat(app, session, ['todos:read'])).token;
    expectProblem(await call(app, 'PATCH', `/v1/todos/${t.id}/checklist/A`, { token: reader, body: { done: true } }), 403, 'forbidden_scope');
    const r = await call(app, 'POST', '/trpc/todos.checklist.update', { token, body: { json: { id: t.id, itemId: 'A', done: true } } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.result.data.json.checklist).toEqual([{ id: 'A', title: 'a', done: true }]);
    const add = await call(app, 'POST', '/trpc/todos.checklist.add', { token, body: { json: { id: t.id, title: 'b' } } });
    expect(add.body.result.data.json.checklist.map((c: Any) => c.title)).toEqual(['a', 'b']);
  });
});
