import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  token = (await createPat(app, u.session, ['tags:write'])).token;
});
afterAll(() => app.close());

describe('tags over HTTP (spec §2.9, §4.13)', () => {
  it('creates a tag with 201, and the same name (any case) returns the existing one with 200', async () => {
    const a = await call(app, 'POST', '/v1/tags', { token, body: { name: 'Errands', colorHex: '#00ff00' } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ name: 'Errands', colorHex: '#00ff00' });
    const b = await call(app, 'POST', '/v1/tags', { token, body: { name: 'errands' } });
    expect(b.status).toBe(200);
    expect(b.body.id).toBe(a.body.id);
    expect(b.body.name).toBe('Errands');
  });

  it('refuses renaming with a pointer at /name and keeps the name', async () => {
    const a = await call(app, 'POST', '/v1/tags', { token, body: { name: 'Home' } });
    const r = await call(app, 'PATCH', `/v1/tags/${a.body.id}`, { token, body: { name: 'House', colorHex: '123456' } });
    const p = expectProblem(r, 422, 'validation_failed');
    expect(p.errors?.[0]).toMatchObject({ pointer: '/name' });
    expect(p.errors?.[0]?.message).toMatch(/renamed/);
    const g = await call(app, 'GET', `/v1/tags/${a.body.id}`, { token });
    expect(g.body.name).toBe('Home');
  });

  it('PATCH changes colorHex only, and colorHex is required there', async () => {
    const a = await call(app, 'POST', '/v1/tags', { token, body: { name: 'Colour' } });
    const r = await call(app, 'PATCH', `/v1/tags/${a.body.id}`, { token, body: { colorHex: 'abcdef' } });
    expect(r.status).toBe(200);
    expect(r.body.colorHex).toBe('abcdef');
    const missing = await call(app, 'PATCH', `/v1/tags/${a.body.id}`, { token, body: {} });
    expect(expectProblem(missing, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/colorHex');
  });

  it('enforces the name and colour limits with pointers', async () => {
    const long = await call(app, 'POST', '/v1/tags', { token, body: { name: 'x'.repeat(65) } });
    expect(expectProblem(long, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/name');
    const ok = await call(app, 'POST', '/v1/tags', { token, body: { name: 'y'.repeat(64) } });
    expect(ok.status).toBe(201);
    const empty = await call(app, 'POST', '/v1/tags', { token, body: { name: '' } });
    expect(expectProblem(empty, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/name');
    const color = await call(app, 'POST', '/v1/tags', { token, body: { name: 'c1', colorHex: '#12345' } });
    expect(expectProblem(color, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/colorHex');
  });

  it('DELETE answers 204 with no body and the tag is gone', async () => {
    const a = await call(app, 'POST', '/v1/tags', { token, body: { name: 'Temp' } });
    const d = await call(app, 'DELETE', `/v1/tags/${a.body.id}`, { token });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    expect(d.headers.get('content-type')).toBeNull();
    expectProblem(await call(app, 'GET', `/v1/tags/${a.body.id}`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/tags/${a.body.id}`, { token }), 404, 'not_found');
  });

  it('a client id must be an UPPERCASE UUID and may not clash', async () => {
    const id = 'A1B2C3D4-E5F6-4A1B-8C9D-0E1F2A3B4C5D';
    const ok = await call(app, 'POST', '/v1/tags', { token, body: { name: 'withid', id } });
    expect(ok.status).toBe(201);
    expect(ok.body.id).toBe(id);
    expectProblem(await call(app, 'POST', '/v1/tags', { token, body: { name: 'other', id } }), 409, 'duplicate_id');
    const lower = await call(app, 'POST', '/v1/tags', { token, body: { name: 'lower', id: id.toLowerCase() } });
    expect(expectProblem(lower, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/id');
  });

  it("a user never sees another user's tags", async () => {
    const other = await registerUser(app);
    const otherToken = (await createPat(app, other.session, ['tags:write'])).token;
    const mine = await call(app, 'POST', '/v1/tags', { token, body: { name: 'Private' } });
    expectProblem(await call(app, 'GET', `/v1/tags/${mine.body.id}`, { token: otherToken }), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/tags/${mine.body.id}`, { token: otherToken }), 404, 'not_found');
    const list = await call(app, 'GET', '/v1/tags', { token: otherToken });
    expect(list.body.data).toEqual([]);
    // The same name is free for the other user.
    expect((await call(app, 'POST', '/v1/tags', { token: otherToken, body: { name: 'Private' } })).status).toBe(201);
  });
  it('DELETE removes the tag from every to-do, which records todo.updated', async () => {
    const u = await registerUser(app);
    const t = u.session;
    const a = await call(app, 'POST', '/v1/todos', { token: t, body: { title: 'a', tags: ['Keep', 'Drop'] } });
    const b = await call(app, 'POST', '/v1/todos', { token: t, body: { title: 'b', tags: ['Drop'] } });
    const c = await call(app, 'POST', '/v1/todos', { token: t, body: { title: 'c', tags: ['Keep'] } });
    const drop = (await call(app, 'GET', '/v1/tags', { token: t })).body.data.find((x: { name: string }) => x.name === 'Drop');
    app.clock.advance(1000);
    expect((await call(app, 'DELETE', `/v1/tags/${drop.id}`, { token: t })).status).toBe(204);
    expect((await call(app, 'GET', `/v1/todos/${a.body.id}`, { token: t })).body.tags).toEqual(['Keep']);
    const bb = await call(app, 'GET', `/v1/todos/${b.body.id}`, { token: t });
    expect(bb.body.tags).toEqual([]);
    expect(bb.body.updatedAt).toBe(new Date(app.clock()).toISOString());
    expect((await call(app, 'GET', `/v1/todos/${c.body.id}`, { token: t })).body.updatedAt).not.toBe(new Date(app.clock()).toISOString());
    const evs = eventsOf(app.deps.db, u.userId).slice(-3).map((e) => `${e.type} ${e.data.id}`);
    expect(evs.sort()).toEqual([`tag.deleted ${drop.id}`, `todo.updated ${a.body.id}`, `todo.updated ${b.body.id}`].sort());
    // The same name can be used again and starts empty.
    const again = await call(app, 'POST', '/v1/todos', { token: t, body: { title: 'd', tags: ['drop'] } });
    expect(again.body.tags).toEqual(['drop']);
  });

  it('create, update and delete record tag events without content', async () => {
    const u = await registerUser(app);
    const a = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'SecretTagName' } });
    await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'secrettagname' } });
    await call(app, 'PATCH', `/v1/tags/${a.body.id}`, { token: u.session, body: { colorHex: '#ffffff' } });
    await call(app, 'DELETE', `/v1/tags/${a.body.id}`, { token: u.session });
    const evs = eventsOf(app.deps.db, u.userId);
    expect(evs.map((e) => e.type)).toEqual(['tag.created', 'tag.updated', 'tag.deleted']);
    for (const e of evs) expect(e.data).toEqual({ object: 'tag', id: a.body.id, sub: u.userId });
    expect(JSON.stringify(evs)).not.toMatch(/secret/i);
  });
});
