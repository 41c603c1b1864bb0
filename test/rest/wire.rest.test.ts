// Spec §4.1, §7, DECISIONS §4: the wire conventions every route shares.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  token = (await createPat(app, u.session, ['tags:write', 'settings:write'])).token;
});
afterAll(() => app.close());

describe('problems for every error (spec §7)', () => {
  it('unknown paths are 404 problems, also outside /v1', async () => {
    const p = expectProblem(await call(app, 'GET', '/v1/nope', { token }), 404, 'not_found');
    expect(p.type).toBe(`${app.deps.config.publicUrl}/errors/not_found`);
    expect(p.title).toBe('Not found');
    expect(p.status).toBe(404);
    expectProblem(await call(app, 'GET', '/elsewhere'), 404, 'not_found');
  });

  it('a known path with another method is 405 with Allow', async () => {
    const r = await call(app, 'PUT', '/v1/tags', { token, body: {} });
    expectProblem(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, POST');
  });

  it('a body over 1 MiB is 413', async () => {
    const r = await call(app, 'POST', '/v1/tags', { token, rawBody: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }), headers: { 'content-type': 'application/json' } });
    expectProblem(r, 413, 'payload_too_large');
  });

  it('a non-JSON body is 415, form posts included; JSON with a charset is fine', async () => {
    expectProblem(await call(app, 'POST', '/v1/tags', { token, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectProblem(await call(app, 'POST', '/v1/tags', { token, rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectProblem(await call(app, 'POST', '/v1/tags', { token, rawBody: '{"name":"x"}' }), 415, 'unsupported_media_type');
    const ok = await call(app, 'POST', '/v1/tags', { token, rawBody: '{"name":"charset"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.status).toBe(201);
  });

  it('malformed JSON and non-object bodies are validation problems at the root pointer', async () => {
    const r = await call(app, 'POST', '/v1/tags', { token, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(expectProblem(r, 422, 'validation_failed').errors).toEqual([{ pointer: '', message: expect.any(String) }]);
    const arr = await call(app, 'POST', '/v1/tags', { token, rawBody: '[1,2]', headers: { 'content-type': 'application/json' } });
    expect(expectProblem(arr, 422, 'validation_failed').errors?.[0]?.pointer).toBe('');
  });

  it('unknown body properties are refused, one pointer per key', async () => {
    const r = await call(app, 'POST', '/v1/tags', { token, body: { name: 'k', extra: 1, 'we/ird~': true } });
    const p = expectProblem(r, 422, 'validation_failed');
    expect(p.errors?.map((e) => e.pointer).sort()).toEqual(['/extra', '/we~1ird~0']);
  });

  it('a missing or bad credential is 401 with WWW-Authenticate carrying resource_metadata', async () => {
    const meta = `${app.deps.config.publicUrl}/.well-known/oauth-protected-resource`;
    const none = await call(app, 'GET', '/v1/tags');
    expectProblem(none, 401, 'unauthorized');
    expect(none.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${meta}"`);
    for (const bad of ['cairn_pat_' + 'A'.repeat(43), 'eyJhbGciOiJIUzI1NiJ9.e30.x', 'garbage']) {
      const r = await call(app, 'GET', '/v1/tags', { token: bad });
      expectProblem(r, 401, 'unauthorized');
      expect(r.headers.get('www-authenticate')).toContain(`resource_metadata="${meta}"`);
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const basic = await call(app, 'GET', '/v1/tags', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expectProblem(basic, 401, 'unauthorized');
  });

  it('serves the protected resource metadata (RFC 9728)', async () => {
    const r = await call(app, 'GET', '/.well-known/oauth-protected-resource');
    expect(r.status).toBe(200);
    expect(r.body.resource).toBe(app.deps.config.publicUrl);
    expect(r.body.authorization_servers).toEqual([app.deps.config.publicUrl]);
  });

  it('every answer carries X-Request-Id, and problems carry the same request_id', async () => {
    const ok = await call(app, 'GET', '/v1/tags', { token });
    expect(ok.headers.get('x-request-id')).toMatch(/^req_/);
    const bad = await call(app, 'GET', '/v1/tags/none', { token });
    expect(bad.body.request_id).toBe(bad.headers.get('x-request-id'));
    expect((await call(app, 'GET', '/healthz')).headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('serves a page per problem type at the problem type URL', async () => {
    const r = await fetch(`${app.url}/errors/validation_failed`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(await r.text()).toContain('Validation failed');
    expectProblem(await call(app, 'GET', '/errors/no_such_code'), 404, 'not_found');
  });

  it('a bad token with a bad body gets the body problem first (checked before the credential)', async () => {
    expectProblem(await call(app, 'POST', '/v1/tags', { token: 'garbage', rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectProblem(await call(app, 'POST', '/v1/tags', { token: 'garbage', body: { name: 'ok' } }), 401, 'unauthorized');
  });
});

describe('strict body typing (REST-FACADE: no coercion)', () => {
  it('does not coerce strings, nulls or booleans into numbers in bodies, over REST or tRPC', async () => {
    const u = await registerUser(app);
    for (const v of ['30', null, true, [30]]) {
      const r = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: v } });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/expiresInDays');
    }
    // A REST call must not leave the schema coerced for later tRPC calls either.
    await expect(app.caller(u.session).keys.create({ name: 'x', scopes: ['tags:read'], expiresInDays: '30' as never })).rejects.toThrow();
  });

  it('does not coerce a string into a boolean or null into an enum', async () => {
    const r = await call(app, 'PATCH', '/v1/settings', { token, body: { weekStart: null } });
    expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/weekStart');
    const r2 = await call(app, 'PATCH', '/v1/settings', { token, body: { weekStart: 'Funday' } });
    expect(expectProblem(r2, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/weekStart');
  });
});

describe('paging (spec §4.1)', () => {
  let pager: string;
  beforeAll(async () => {
    const u = await registerUser(app);
    pager = (await createPat(app, u.session, ['tags:write'])).token;
    for (let i = 0; i < 55; i++) {
      await call(app, 'POST', '/v1/tags', { token: pager, body: { name: `t${String(i).padStart(2, '0')}` } });
      app.clock.advance(1000);
    }
  });

  it('defaults to 50, follows next_cursor to the end in app order, null at the end', async () => {
    const first = await call(app, 'GET', '/v1/tags', { token: pager });
    expect(first.body.data).toHaveLength(50);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await call(app, 'GET', `/v1/tags?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: pager });
    expect(second.body.data).toHaveLength(5);
    expect(second.body.next_cursor).toBeNull();
    const names = [...first.body.data, ...second.body.data].map((t: { name: string }) => t.name);
    expect(names).toEqual(Array.from({ length: 55 }, (_, i) => `t${String(i).padStart(2, '0')}`));
    const keys = [...first.body.data, ...second.body.data].map((t: { sortKey: string }) => t.sortKey);
    expect([...keys].sort()).toEqual(keys);
  });

  it('limit must be an integer 1..200', async () => {
    expect((await call(app, 'GET', '/v1/tags?limit=1', { token: pager })).body.data).toHaveLength(1);
    expect((await call(app, 'GET', '/v1/tags?limit=200', { token: pager })).body.data).toHaveLength(55);
    for (const bad of ['0', '201', 'abc', '1.5', '-1']) {
      const r = await call(app, 'GET', `/v1/tags?limit=${bad}`, { token: pager });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/limit');
    }
  });

  it('a tampered, foreign or oversized cursor is 422 at /cursor', async () => {
    const first = await call(app, 'GET', '/v1/tags?limit=2', { token: pager });
    const c: string = first.body.next_cursor;
    const [body, mac] = c.split('.');
    const forged = Buffer.from(JSON.stringify(['zzzz', 'X'])).toString('base64url') + '.' + mac;
    for (const bad of [forged, body + '.AAAA', 'garbage', c + 'x']) {
      const r = await call(app, 'GET', `/v1/tags?cursor=${encodeURIComponent(bad)}`, { token: pager });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
    }
    // Another user's cursor does not work here.
    expectProblem(await call(app, 'GET', `/v1/tags?cursor=${encodeURIComponent(c)}`, { token }), 422, 'validation_failed');
    const long = await call(app, 'GET', `/v1/tags?cursor=${'a'.repeat(4097)}`, { token: pager });
    expect(expectProblem(long, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
  });

  it('updated_since is inclusive, RFC 3339, at most 24 characters', async () => {
    const all = (await call(app, 'GET', '/v1/tags?limit=200', { token: pager })).body.data as { updatedAt: string; name: string }[];
    const pivot = all[40]!.updatedAt;
    const r = await call(app, 'GET', `/v1/tags?limit=200&updated_since=${encodeURIComponent(pivot)}`, { token: pager });
    expect(r.body.data.map((t: { name: string }) => t.name)).toEqual(all.slice(40).map((t) => t.name));
    for (const bad of ['yesterday', '2026-11-21', '2026-11-21T12:00:00.000+01:00', '2026-13-01T00:00:00Z']) {
      const b = await call(app, 'GET', `/v1/tags?updated_since=${encodeURIComponent(bad)}`, { token: pager });
      expect(expectProblem(b, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/updated_since');
    }
  });

  it('unknown query parameters are refused with a pointer', async () => {
    const r = await call(app, 'GET', '/v1/tags?colour=red', { token: pager });
    expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/colour');
  });
});
