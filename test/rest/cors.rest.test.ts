// Issue 13 item 2: /docs "Try it out" calls the origin the page was opened from, and browser
// clients on any origin may call /v1 and /trpc with a bearer token (rest/cors.ts): preflights
// answer 204 with the allowed headers; answers expose the headers a client reads; no answer
// allows credentials.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';

let app: TestApp;
// PUBLIC_URL names another origin than the one the tests open, as in the report.
const publicUrl = 'http://localhost:18080';
beforeAll(async () => {
  app = await startApp({}, { publicUrl });
});
afterAll(() => app.close());

/** The OpenAPI document swagger-ui is initialised with on /docs. */
async function docsDocument() {
  const js = await (await fetch(`${app.url}/docs/swagger-ui-init.js`)).text();
  const start = js.indexOf('var options = ') + 'var options = '.length;
  const json = js.slice(start, js.indexOf(';\n', start));
  return JSON.parse(json).swaggerDoc;
}

describe('/docs and /openapi.json servers', () => {
  it('/docs calls the origin it was loaded from; /openapi.json keeps PUBLIC_URL; both are valid OpenAPI 3.1', async () => {
    const docs = await docsDocument();
    expect(docs.servers[0].url).toBe('/');
    // Resolved as swagger-ui does, against the page's address: the same origin as the page.
    expect(new URL(docs.servers[0].url, `${app.url}/docs/`).origin).toBe(app.url);
    const doc = (await call(app, 'GET', '/openapi.json')).body;
    expect(doc.servers[0].url).toBe(publicUrl);
    for (const d of [docs, doc]) {
      const res = await new Validator().validate(structuredClone(d));
      expect(res.errors ?? []).toEqual([]);
    }
  });
});

describe('CORS', () => {
  const origin = 'https://app.example.org';

  it('answers a preflight on /v1 and /trpc with 204, the allowed methods and headers, and no credentials', async () => {
    for (const path of ['/v1/todos', '/v1/tags/0000000000000000000000000000000A', '/trpc/tags.list']) {
      const res = await fetch(app.url + path, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
      expect(res.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('ratelimit-limit')).toMatch(/^\d+$/); // counted by the edge bucket (spec §8.1)
      expect(await res.text()).toBe('');
    }
  });

  it('an actual request, a refusal and a /trpc call carry Allow-Origin and expose the headers a client reads', async () => {
    const { session } = await registerUser(app);
    const pat = await createPat(app, session, ['tags:write']);
    const created = await call(app, 'POST', '/v1/tags', { token: pat.token, body: { name: 'cors' }, headers: { origin, 'idempotency-key': 'cors-1' } });
    expect(created.status).toBe(201);
    const refused = await call(app, 'GET', '/v1/tags', { token: 'nope', headers: { origin } });
    expect(refused.status).toBe(401);
    const trpc = await call(app, 'GET', `/trpc/tags.list?input=${encodeURIComponent(JSON.stringify({ json: {} }))}`, { token: pat.token, headers: { origin } });
    expect(trpc.status).toBe(200);
    for (const res of [created, refused, trpc]) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      const exposed = res.headers.get('access-control-expose-headers')!.split(/,\s*/);
      expect(exposed).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'Idempotent-Replayed', 'WWW-Authenticate']));
    }
    // Pages that are not the API stay same-origin only.
    const docs = await fetch(`${app.url}/docs/`, { headers: { origin } });
    expect(docs.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a browser-based OAuth client may call discovery, registration and the token endpoint; the authorize page and its wait endpoint stay same-origin', async () => {
    const pre = await fetch(`${app.url}/oauth/token`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).toMatch(/content-type/);
    const reg = await call(app, 'POST', '/oauth/register', { body: { client_name: 'SPA', redirect_uris: ['https://app.example.org/cb'] }, headers: { origin } });
    expect(reg.status).toBe(201);
    const tok = await call(app, 'POST', '/oauth/token', { rawBody: `grant_type=refresh_token&refresh_token=x&client_id=${reg.body.client_id}`, headers: { origin, 'content-type': 'application/x-www-form-urlencoded' } });
    expect(tok.status).toBe(400);
    const meta = await fetch(`${app.url}/.well-known/oauth-authorization-server`, { headers: { origin } });
    const resource = await fetch(`${app.url}/.well-known/oauth-protected-resource`, { headers: { origin } });
    for (const res of [reg, tok, meta, resource]) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const wait = await fetch(`${app.url}/oauth/authorize/wait`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect(wait.headers.get('access-control-allow-origin')).toBeNull();
    const page = await fetch(`${app.url}/oauth/authorize?client_id=x`, { headers: { origin } });
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
  });
});
