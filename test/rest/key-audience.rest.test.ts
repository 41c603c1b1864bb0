// DECISIONS §8 (one credential, one door), issue 30 item 1 and issue 31 item 2: a personal access
// token takes an `audience` at creation (`rest` by default, `dav` app passwords, `mcp`) and is
// refused at every other door; sessions are `rest`. The /dav and /mcp doors refuse `rest`
// credentials in their own tests; here the REST door (/v1, /trpc, the raw file routes) refuses
// `dav` and `mcp` tokens before their key is unwrapped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const create = (session: string, body: Record<string, unknown>) => call(app, 'POST', '/v1/keys', { token: session, body: { name: 'phone', expiresInDays: 90, ...body } });

describe('personal access tokens: audience', () => {
  it('a dav token (app password) needs no scopes, is granted the to-do and container scopes, and is listed with its audience', async () => {
    const u = await registerUser(app);
    const r = await create(u.session, { audience: 'dav' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ audience: 'dav', scopes: ['todos:read', 'todos:write', 'containers:read', 'containers:write'] });
    expect(r.headers.get('cache-control')).toBe('no-store');
    const rest = await create(u.session, { scopes: ['todos:read'] });
    expect(rest.body.audience).toBe('rest');
    const list = await call(app, 'GET', '/v1/keys', { token: u.session });
    // Both made at the same clock instant: listed by creation time, then id (random), so compared as a set.
    expect(list.body.data.map((k: { audience: string }) => k.audience).sort()).toEqual(['dav', 'rest']);
  });

  it('refuses scopes on a dav token, a missing scope list on rest and mcp tokens, and an unknown audience', async () => {
    const u = await registerUser(app);
    expect(expectProblem(await create(u.session, { audience: 'dav', scopes: ['todos:read'] }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/scopes');
    expect(expectProblem(await create(u.session, {}), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/scopes');
    expect(expectProblem(await create(u.session, { audience: 'mcp' }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/scopes');
    expect(expectProblem(await create(u.session, { audience: 'carddav', scopes: ['todos:read'] }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/audience');
    expect((await call(app, 'GET', '/v1/keys', { token: u.session })).body.data).toEqual([]);
  });

  it('dav and mcp tokens are refused at /v1, /trpc and the raw file routes with 401 and the Bearer challenge; a rest token works', async () => {
    const u = await registerUser(app);
    const dav = (await create(u.session, { audience: 'dav' })).body.token as string;
    const mcp = (await create(u.session, { audience: 'mcp', scopes: ['todos:read', 'todos:write'] })).body.token as string;
    const rest = (await create(u.session, { scopes: ['todos:read', 'todos:write'] })).body.token as string;
    expect((await call(app, 'GET', '/v1/todos', { token: rest })).status).toBe(200);
    for (const token of [dav, mcp]) {
      for (const [method, path, body] of [
        ['GET', '/v1/todos', undefined],
        ['POST', '/v1/todos', { title: 'x' }],
        ['GET', '/v1/me', undefined],
        ['GET', '/trpc/todos.list?input=%7B%22json%22%3A%7B%7D%7D', undefined],
        ['GET', '/v1/attachments/00000000-0000-4000-8000-000000000000/file', undefined],
      ] as const) {
        const r = await call(app, method, path, { token, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).toBe(401);
        expect(r.headers.get('www-authenticate'), path).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token"/);
      }
    }
    const r = await call(app, 'GET', '/v1/todos', { token: dav });
    expect(r.body.detail).toMatch(/created for \/dav/);
    // Nothing was written by the refused calls.
    expect((await call(app, 'GET', '/v1/todos', { token: rest })).body.data).toEqual([]);
  });
});
