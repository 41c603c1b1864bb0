// Issue 13.8: an id in a path that is not an UPPERCASE UUID (crypto.randomUUID() gives lowercase)
// is 422 at its pointer naming the rule, on every route with an id in its path, as create answers
// a lowercase id, never a bare 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';
import { REST_ROUTES } from '../../rest/routes.js';

let app: TestApp;
let session: string;
beforeAll(async () => {
  app = await startApp();
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

const UPPER = '0A1B2C3D-0000-4000-8000-00000000000A';

describe('path ids have the id shape (issue 13.8)', () => {
  it('every route with an id in its path answers a lowercase or malformed id with 422 at that parameter', async () => {
    const withIds = REST_ROUTES.filter((r) => r.path.includes('{'));
    expect(withIds.length).toBeGreaterThan(30);
    for (const r of withIds) {
      // Checklist item ids are the client's own strings (docs/api.md "Checklist items"), and OAuth
      // approval codes are nine digits (docs/oauth.md): not resource ids.
      const names = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).filter((n) => n !== 'itemId' && n !== 'code');
      for (const bad of [UPPER.toLowerCase(), 'not-an-id']) {
        for (const name of names) {
          const path = r.path.replace(/\{([^}]+)\}/g, (_, n: string) => (n === name ? bad : UPPER));
          const res = await call(app, r.method, path, { token: session, body: ['POST', 'PATCH'].includes(r.method) ? {} : undefined });
          const p = expectProblem(res, 422, 'validation_failed');
          expect({ route: `${r.method} ${r.path}`, error: p.errors?.find((e) => e.pointer === `/${name}`)?.message }).toEqual({
            route: `${r.method} ${r.path}`,
            // Webhook ids have the spec's own shape (spec §2.12: `wh_…`; deliveries `whd_…`, docs/webhooks.md).
            error: expect.stringContaining(r.path.startsWith('/v1/webhooks') ? 'ids look like wh' : 'ids are UPPERCASE UUIDs'),
          });
        }
      }
    }
  });

  it('an existing to-do asked for in lowercase is refused with the rule, not "not found"; uppercase finds it', async () => {
    const todo = await call(app, 'POST', '/v1/todos', { token: session, body: { title: 'Case' } });
    expect(todo.status).toBe(201);
    const lower = await call(app, 'GET', `/v1/todos/${String(todo.body.id).toLowerCase()}`, { token: session });
    expect(expectProblem(lower, 422, 'validation_failed').errors).toEqual([{ pointer: '/id', message: expect.stringContaining('UPPERCASE') }]);
    expect((await call(app, 'GET', `/v1/todos/${todo.body.id}`, { token: session })).status).toBe(200);
    // An unknown id of the right shape is still 404.
    expectProblem(await call(app, 'GET', `/v1/todos/${UPPER}`, { token: session }), 404, 'not_found');
  });
});
