// Spec §5.3: table-driven over every REST route. For each route, a token holding everything but
// one required scope is refused with forbidden_scope, and a token holding exactly the required
// scopes gets past the scope check. Rules 1-3 (write implies read, umbrellas) are checked too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { REST_ROUTES } from '../../rest/routes.js';
import { SCOPES, expandScopes } from '../../core/scopes.js';

let app: TestApp;
let session: string;
beforeAll(async () => {
  app = await startApp();
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';
const pathOf = (p: string) => p.replace(/\{[^}]+\}/g, PLACEHOLDER_ID);

/** A fresh user per token batch keeps the 10-per-day token limit out of the way. */
async function tokenWith(scopes: string[]): Promise<string> {
  const local = await startUser();
  return (await createPat(app, local, scopes)).token;
}
let userTokens = 0;
let currentSession = '';
async function startUser(): Promise<string> {
  if (userTokens % 9 === 0) currentSession = (await registerUser(app)).session;
  userTokens++;
  return currentSession;
}

describe('scope rules (spec §5.3)', () => {
  it('write implies read; umbrellas cover content scopes but never sessions or webhooks', () => {
    expect(expandScopes(['todos:write']).has('todos:read')).toBe(true);
    expect(expandScopes(['todos:read']).has('todos:write')).toBe(false);
    const umbrella = expandScopes(['tasks:write']);
    for (const s of ['todos:write', 'containers:read', 'notes:write', 'inbox:write', 'tags:write', 'attachments:read', 'filters:write', 'settings:write']) {
      expect(umbrella.has(s as never)).toBe(true);
    }
    for (const s of ['sessions:read', 'sessions:write', 'webhooks:write']) expect(umbrella.has(s as never)).toBe(false);
    expect(expandScopes(['tasks:read']).has('todos:write')).toBe(false);
  });

  it('every scope route refuses a token missing one required scope and admits one holding them', async () => {
    const scoped = REST_ROUTES.filter((r) => r.meta.scopes?.length && !r.meta.firstPartyOnly);
    expect(scoped.length).toBeGreaterThan(5);
    for (const route of scoped) {
      for (const missing of route.meta.scopes!) {
        // Every scope except the missing one and anything implying it.
        const rest = SCOPES.filter((s) => !expandScopes([s]).has(missing));
        const token = await tokenWith(rest);
        const r = await call(app, route.method, pathOf(route.path), { token, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
        expectProblem(r, 403, 'forbidden_scope');
        expect(r.body.detail).toContain(missing);
      }
      const exact = await tokenWith(route.meta.scopes!);
      const ok = await call(app, route.method, pathOf(route.path), { token: exact, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect([200, 201, 204, 404, 409, 422]).toContain(ok.status);
    }
  });

  it('umbrella tokens pass content routes and are refused on sessions routes', async () => {
    const t = await tokenWith(['tasks:write']);
    expect((await call(app, 'GET', '/v1/tags', { token: t })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/settings', { token: t })).status).toBe(200);
    expectProblem(await call(app, 'GET', '/v1/keys', { token: t }), 403, 'forbidden_scope');
  });

  it('first-party-only routes refuse every personal token, whatever its scopes', async () => {
    const all = await tokenWith([...SCOPES]);
    const fp = REST_ROUTES.filter((r) => r.meta.firstPartyOnly);
    expect(fp.length).toBeGreaterThan(0);
    for (const route of fp) {
      expectProblem(await call(app, route.method, pathOf(route.path), { token: all, ...(route.method === 'GET' ? {} : { body: {} }) }), 403, 'forbidden_scope');
    }
  });

  it('a first-party session passes every scope check', async () => {
    expect((await call(app, 'GET', '/v1/keys', { token: session })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/tags', { token: session })).status).toBe(200);
  });
});
