// Issue 17: every OAuth rule over real HTTP against a real SQLite file, with the manual clock.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { REDIRECT, authorizeAndApprove, authorizeUrl, exchange, openAuthorize, pkce, register, token, waitPoll } from './helpers.js';

let app: TestApp;
let session: string;
beforeAll(async () => {
  app = await startApp();
});
// A fresh first-party session for each test: some tests move the clock by a year.
beforeEach(async () => {
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

function oauthError(r: { status: number; headers: Headers; body: { error?: string } }, status: number, error: string) {
  expect({ status: r.status, error: r.body?.error, type: r.headers.get('content-type')?.split(';')[0] }).toEqual({ status, error, type: 'application/json' });
}

function authParams(client_id: string, extra: Record<string, string | undefined> = {}) {
  return { response_type: 'code', client_id, redirect_uri: REDIRECT, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 'xyz', ...extra };
}

describe('discovery', () => {
  it('RFC 8414 metadata: issuer is PUBLIC_URL exactly, S256 only, iss parameter supported', async () => {
    const r = await call(app, 'GET', '/.well-known/oauth-authorization-server');
    const base = app.deps.config.publicUrl;
    expect(r.body).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(r.body.scopes_supported).toContain('todos:read');
  });

  it('RFC 9728 metadata names PUBLIC_URL exactly, and the 401 challenge points at it', async () => {
    const r = await call(app, 'GET', '/.well-known/oauth-protected-resource');
    expect(r.body.resource).toBe(app.deps.config.publicUrl);
    const u = await call(app, 'GET', '/v1/me');
    expect(u.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.deps.config.publicUrl}/.well-known/oauth-protected-resource"`);
  });
});

describe('registration (RFC 7591)', () => {
  it('201 with client_id and the registered metadata; a confidential client gets its secret once', async () => {
    const r = await call(app, 'POST', '/oauth/register', { body: { client_name: '<b>Evil</b>', redirect_uris: ['https://app.example/cb', 'com.example.app:/cb', 'http://[::1]/cb', 'http://localhost:8000/x'], token_endpoint_auth_method: 'client_secret_basic' } });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({ client_name: '<b>Evil</b>', token_endpoint_auth_method: 'client_secret_basic', redirect_uris: ['https://app.example/cb', 'com.example.app:/cb', 'http://[::1]/cb', 'http://localhost:8000/x'] });
    expect(r.body.client_id).toMatch(/^cl_/);
    expect(r.body.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pub = await register(app);
    expect(pub.client_secret).toBeUndefined();
    // The secret is stored hashed only.
    const row = app.deps.db.$client.prepare('SELECT * FROM oauth_clients WHERE id = ?').get(r.body.client_id) as Record<string, unknown>;
    expect(JSON.stringify(row)).not.toContain(r.body.client_secret);
  });

  it.each([
    ['http on a public host', 'http://app.example/cb'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,hi'],
    ['file:', 'file:///etc/passwd'],
    ['a fragment', 'https://app.example/cb#x'],
    ['a scheme not in reverse-domain form', 'myapp:/cb'],
    ['a relative URI', '/cb'],
  ])('refuses %s with invalid_redirect_uri', async (_what, uri) => {
    oauthError(await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: [uri] } }), 400, 'invalid_redirect_uri');
  });

  it('at most 10 redirect URIs; bad metadata is invalid_client_metadata', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`);
    oauthError(await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: eleven } }), 400, 'invalid_redirect_uri');
    expect((await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: eleven.slice(0, 10) } })).status).toBe(201);
    oauthError(await call(app, 'POST', '/oauth/register', { body: { redirect_uris: [REDIRECT] } }), 400, 'invalid_client_metadata');
    oauthError(await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' } }), 400, 'invalid_client_metadata');
    oauthError(await call(app, 'POST', '/oauth/register', { rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
  });
});

describe('authorize', () => {
  it('unknown client or unregistered redirect: an HTML error page, never a redirect', async () => {
    const client = await register(app);
    for (const url of [authorizeUrl(app, authParams('cl_nope')), authorizeUrl(app, authParams(client.client_id, { redirect_uri: 'https://evil.example/cb' }))]) {
      const p = await openAuthorize(url);
      expect(p.status).toBe(400);
      expect(p.location).toBeNull();
      expect(p.headers.get('content-type')).toMatch(/^text\/html/);
      expect(p.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it.each([
    ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no resource', { resource: undefined }, 'invalid_target'],
    ['another resource', { resource: 'https://elsewhere.example' }, 'invalid_target'],
    ['the old /v1 resource', { resource: 'RESOURCE/v1' }, 'invalid_target'],
    ['an unknown scope', { scope: 'todos:read everything' }, 'invalid_scope'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
  ])('%s: redirects with error, state and iss', async (_what, extra, error) => {
    const client = await register(app);
    const fixed = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v?.replace('RESOURCE', app.deps.config.publicUrl)]));
    const p = await openAuthorize(authorizeUrl(app, authParams(client.client_id, fixed)));
    expect(p.status).toBe(303);
    const loc = new URL(p.location!);
    expect(loc.origin + loc.pathname).toBe(REDIRECT);
    expect(loc.searchParams.get('error')).toBe(error);
    expect(loc.searchParams.get('state')).toBe('xyz');
    expect(loc.searchParams.get('iss')).toBe(app.deps.config.publicUrl);
  });

  it('the page: callback first, app name as an unverified subtitle, scopes in words, a nine-digit code, no password, strict CSP', async () => {
    const client = await register(app, { client_name: 'Planner <script>' });
    const p = await openAuthorize(authorizeUrl(app, authParams(client.client_id, { scope: 'todos:write notes:read' })));
    expect(p.status).toBe(200);
    expect(p.userCode).toMatch(/^\d{9}$/);
    const csp = p.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(p.headers.get('cache-control')).toBe('no-store');
    expect(p.html.indexOf(REDIRECT)).toBeLessThan(p.html.indexOf('Planner'));
    expect(p.html).toContain('Planner &lt;script&gt;');
    expect(p.html).toMatch(/unverified/);
    expect(p.html).toContain('Read and change your to-dos');
    expect(p.html).toContain('Read your notes');
    expect(p.html).not.toMatch(/type="password"/);
    expect(p.html).not.toMatch(/<script>(?!<)/);
    expect(p.html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"<\s]+\.(js|css)/);
  });

  it('a repeated parameter is invalid_request; a page left waiting past 5 minutes redirects with access_denied', async () => {
    const client = await register(app);
    const dup = await openAuthorize(authorizeUrl(app, authParams(client.client_id)) + '&scope=todos:write');
    expect(new URL(dup.location!).searchParams.get('error')).toBe('invalid_request');
    const p = await openAuthorize(authorizeUrl(app, authParams(client.client_id)));
    expect((await waitPoll(app, p.handle!)).status).toBe('pending');
    app.clock.advance(5 * 60_000);
    const loc = new URL((await waitPoll(app, p.handle!)).redirect!);
    expect([loc.searchParams.get('error'), loc.searchParams.get('state')]).toEqual(['access_denied', 'xyz']);
    expect((await waitPoll(app, 'A'.repeat(43))).status).toBe('gone');
  });

  it('/app (the web app, with the console in its Settings) is served with the same strict CSP and a same-origin script', async () => {
    const r = await fetch(`${app.url}/app`);
    const html = await r.text();
    expect(r.headers.get('content-security-policy')).toBe((await fetch(authorizeUrl(app, authParams((await register(app)).client_id)))).headers.get('content-security-policy'));
    // The entry as an ES module (app/serve.ts: code splitting), from this origin only.
    const src = /<script type="module" src="(\/app\/assets\/app\.[0-9A-Za-z]+\.js)"><\/script>/.exec(html)?.[1];
    expect(src).toBeTruthy();
    expect(html).not.toMatch(/<script>|\son\w+="/);
    const js = await fetch(`${app.url}${src}`);
    expect(js.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(1000);
  });

  it('a loopback redirect URI may use another port (RFC 8252)', async () => {
    const client = await register(app);
    const p = await openAuthorize(authorizeUrl(app, authParams(client.client_id, { redirect_uri: 'http://127.0.0.1:51234/callback' })));
    expect(p.status).toBe(200);
    expect(p.html).toContain('http://127.0.0.1:51234/callback');
    const other = await openAuthorize(authorizeUrl(app, authParams(client.client_id, { redirect_uri: 'http://127.0.0.1:51234/other' })));
    expect(other.status).toBe(400);
  });
});

describe('approvals (first-party sessions only)', () => {
  async function pending(scope = 'todos:read todos:write') {
    const client = await register(app);
    const p = await openAuthorize(authorizeUrl(app, authParams(client.client_id, { scope })));
    return { client, code: p.userCode!, handle: p.handle! };
  }

  it('lookup shows client, redirect URI and scopes; other credentials get forbidden_scope', async () => {
    const { code } = await pending();
    const r = await call(app, 'GET', `/v1/approvals/${code.slice(0, 3)}-${code.slice(3, 6)}-${code.slice(6)}`, { token: session });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ code, redirectUri: REDIRECT, client: { name: 'Test App', verified: false }, scopes: ['todos:read', 'todos:write'] });
    const pat = await createPat(app, session, ['sessions:write', 'tasks:write']);
    expectProblem(await call(app, 'GET', `/v1/approvals/${code}`, { token: pat.token }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'POST', `/v1/approvals/${code}/approve`, { token: pat.token, body: { scopes: ['todos:read'] } }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'GET', `/v1/approvals/${code}`), 401, 'unauthorized');
  });

  it('a subset may be granted, never more than requested; the code is single use', async () => {
    const { code, handle, client } = await pending();
    expectProblem(await call(app, 'POST', `/v1/approvals/${code}/approve`, { token: session, body: { scopes: ['notes:read'] } }), 422, 'validation_failed');
    const ok = await call(app, 'POST', `/v1/approvals/${code}/approve`, { token: session, body: { scopes: ['todos:read'] } });
    expect(ok.body).toMatchObject({ decision: 'approved', scopes: ['todos:read'] });
    expectProblem(await call(app, 'POST', `/v1/approvals/${code}/approve`, { token: session, body: { scopes: ['todos:read'] } }), 404, 'not_found');
    expectProblem(await call(app, 'GET', `/v1/approvals/${code}`, { token: session }), 404, 'not_found');
    const w = await waitPoll(app, handle);
    const loc = new URL(w.redirect!);
    expect(loc.searchParams.get('state')).toBe('xyz');
    expect(loc.searchParams.get('iss')).toBe(app.deps.config.publicUrl);
    expect(loc.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The code is handed over once.
    expect((await waitPoll(app, handle)).status).toBe('gone');
    void client;
  });

  it('deny: the page redirects with access_denied, state and iss', async () => {
    const { code, handle } = await pending();
    expect((await waitPoll(app, handle)).status).toBe('pending');
    expect((await call(app, 'POST', `/v1/approvals/${code}/deny`, { token: session })).body.decision).toBe('denied');
    const loc = new URL((await waitPoll(app, handle)).redirect!);
    expect([loc.searchParams.get('error'), loc.searchParams.get('state'), loc.searchParams.get('iss')]).toEqual(['access_denied', 'xyz', app.deps.config.publicUrl]);
  });

  it('codes expire after 5 minutes (issue 28 item 1)', async () => {
    const { code } = await pending();
    app.clock.advance(5 * 60_000 - 1_000);
    expect((await call(app, 'GET', `/v1/approvals/${code}`, { token: session })).status).toBe(200);
    app.clock.advance(1_000);
    expectProblem(await call(app, 'GET', `/v1/approvals/${code}`, { token: session }), 404, 'not_found');
  });
});

describe('token endpoint', () => {
  it('exchanges a code: Bearer, granted scope, 1 h, refresh token, no-store; form-encoded only', async () => {
    const a = await authorizeAndApprove(app, session, { scopes: ['todos:read', 'todos:write'], grant: ['todos:read'] });
    const r = await exchange(app, a);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({ token_type: 'Bearer', scope: 'todos:read', expires_in: 3600 });
    expect(r.body.access_token).toMatch(/^cairn_oat_/);
    expect(r.body.refresh_token).toMatch(/^cairn_ort_/);
    const me = await call(app, 'GET', '/v1/me', { token: r.body.access_token });
    expect(me.body.scopes).toEqual(['todos:read']);
    expect(me.body.credential.kind).toBe('oauth_token');
    oauthError(await call(app, 'POST', '/oauth/token', { body: { grant_type: 'refresh_token', refresh_token: r.body.refresh_token, client_id: a.client.client_id } }), 400, 'invalid_request');
    const unsupported = await token(app, { grant_type: 'password', client_id: a.client.client_id });
    oauthError(unsupported, 400, 'unsupported_grant_type');
    expect(unsupported.headers.get('cache-control')).toBe('no-store');
    const dup = await call(app, 'POST', '/oauth/token', { rawBody: `grant_type=refresh_token&grant_type=refresh_token&client_id=${a.client.client_id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    oauthError(dup, 400, 'invalid_request');
  });

  it('a second redemption is invalid_grant and revokes what the first minted', async () => {
    const a = await authorizeAndApprove(app, session);
    const first = await exchange(app, a);
    expect(first.status).toBe(200);
    oauthError(await exchange(app, a), 400, 'invalid_grant');
    expectProblem(await call(app, 'GET', '/v1/me', { token: first.body.access_token }), 401, 'grant_revoked');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: a.client.client_id }), 400, 'invalid_grant');
  });

  it('codes live 60 s; the verifier, the client, the redirect URI and the resource must match', async () => {
    const a = await authorizeAndApprove(app, session);
    app.clock.advance(60_001);
    oauthError(await exchange(app, a), 400, 'invalid_grant');
    const b = await authorizeAndApprove(app, session);
    oauthError(await exchange(app, { ...b, verifier: pkce().verifier }), 400, 'invalid_grant');
    const other = await register(app);
    oauthError(await exchange(app, { ...b, client: other }), 400, 'invalid_grant');
    oauthError(await token(app, { grant_type: 'authorization_code', code: b.code, code_verifier: b.verifier, client_id: b.client.client_id, redirect_uri: REDIRECT, resource: 'https://elsewhere.example' }), 400, 'invalid_target');
    oauthError(await token(app, { grant_type: 'authorization_code', code: b.code, code_verifier: b.verifier, client_id: b.client.client_id, redirect_uri: 'http://127.0.0.1:9/other' }), 400, 'invalid_grant');
    expect((await exchange(app, b)).status).toBe(200);
  });

  it('client authentication per the registered method; secrets compared by hash', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
      const client = await register(app, { token_endpoint_auth_method: method });
      const a = await authorizeAndApprove(app, session, { client });
      const base = { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT };
      const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}` });
      // Wrong secret, missing secret, the other method: 401 invalid_client.
      oauthError(method === 'client_secret_basic' ? await token(app, base, basic('wrong')) : await token(app, { ...base, client_id: client.client_id, client_secret: 'wrong' }), 401, 'invalid_client');
      oauthError(await token(app, { ...base, client_id: client.client_id }), 401, 'invalid_client');
      oauthError(method === 'client_secret_basic' ? await token(app, { ...base, client_id: client.client_id, client_secret: client.client_secret! }) : await token(app, base, basic(client.client_secret!)), 401, 'invalid_client');
      const ok = method === 'client_secret_basic' ? await token(app, base, basic(client.client_secret!)) : await token(app, { ...base, client_id: client.client_id, client_secret: client.client_secret! });
      expect(ok.status).toBe(200);
    }
    const pub = await register(app);
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub.client_id, client_secret: 'anything' }), 401, 'invalid_client');
  });

  it('access tokens live 1 hour and are refused at another audience', async () => {
    const a = await authorizeAndApprove(app, session);
    const t = (await exchange(app, a)).body;
    await expect(authenticate(app.deps, `Bearer ${t.access_token}`, undefined, `${app.deps.config.publicUrl}/mcp`)).rejects.toMatchObject({ problemCode: 'unauthorized' });
    expect((await authenticate(app.deps, `Bearer ${t.access_token}`)).kind).toBe('oauth');
    app.clock.advance(3_600_000);
    expectProblem(await call(app, 'GET', '/v1/me', { token: t.access_token }), 401, 'unauthorized');
  });

  it('refresh tokens are bound to client, scopes and resource', async () => {
    const a = await authorizeAndApprove(app, session, { scopes: ['todos:read'] });
    const t = (await exchange(app, a)).body;
    const other = await register(app);
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: other.client_id }), 400, 'invalid_grant');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id, scope: 'todos:write' }), 400, 'invalid_scope');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id, scope: 'todos:read todos:write' }), 400, 'invalid_scope');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id, resource: 'https://elsewhere.example' }), 400, 'invalid_target');
    const ok = await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id, scope: 'todos:read' });
    expect(ok.body.scope).toBe('todos:read');
  });

  it('a grant needs re-approval after 365 days (grant_expired)', async () => {
    const a = await authorizeAndApprove(app, session);
    const t = (await exchange(app, a)).body;
    app.clock.advance(365 * 86_400_000 - 30 * 60_000);
    const late = await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id });
    expect(late.body.expires_in).toBe(1800);
    app.clock.advance(30 * 60_000);
    expectProblem(await call(app, 'GET', '/v1/me', { token: late.body.access_token }), 401, 'grant_expired');
    const r = await token(app, { grant_type: 'refresh_token', refresh_token: late.body.refresh_token, client_id: a.client.client_id });
    oauthError(r, 400, 'invalid_grant');
    expect(r.body.error_description).toMatch(/^grant_expired/);
  });

  it('rotation: the old token is refused after 30 s and its reuse revokes the grant', async () => {
    const a = await authorizeAndApprove(app, session);
    const t0 = (await exchange(app, a)).body;
    const t1 = (await token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id })).body;
    const t2 = (await token(app, { grant_type: 'refresh_token', refresh_token: t1.refresh_token, client_id: a.client.client_id })).body;
    // t0 is not the immediate predecessor of the newest (t2): reuse, even within 30 s.
    const reuse = await token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id });
    oauthError(reuse, 400, 'invalid_grant');
    expectProblem(await call(app, 'GET', '/v1/me', { token: t2.access_token }), 401, 'grant_revoked');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t2.refresh_token, client_id: a.client.client_id }), 400, 'invalid_grant');
  });

  it('parallel uses of one refresh token leave exactly one live successor (the chain never forks)', async () => {
    const a = await authorizeAndApprove(app, session);
    const t0 = (await exchange(app, a)).body;
    const results = await Promise.all(Array.from({ length: 8 }, () => token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const hash = (t: string) => createHash('sha256').update(Buffer.from(t.slice('cairn_ort_'.length), 'base64url')).digest();
    const grantId = (app.deps.db.$client.prepare('SELECT grant_id AS g FROM oauth_tokens WHERE secret_hash = ?').get(hash(t0.refresh_token)) as { g: string }).g;
    const live = app.deps.db.$client.prepare('SELECT secret_hash AS h FROM oauth_tokens WHERE grant_id = ? AND kind = ? AND rotated_at IS NULL AND wrapped_key IS NOT NULL').all(grantId, 'refresh') as { h: Buffer }[];
    expect(live).toHaveLength(1);
    // Exactly one of the answers continues the chain: the one the server handled last, found by
    // its hash (the eight race on their own connections: the last in array order need not be it).
    const continuing = results.map((r) => r.body.refresh_token as string).filter((t) => hash(t).equals(live[0]!.h));
    expect(continuing).toHaveLength(1);
    expect((await token(app, { grant_type: 'refresh_token', refresh_token: continuing[0]!, client_id: a.client.client_id })).status).toBe(200);
  });
});

describe('grants', () => {
  it('GET /v1/grants lists connected apps (sessions:read); DELETE revokes one (sessions:write) and its tokens get grant_revoked', async () => {
    const u = await registerUser(app);
    const a = await authorizeAndApprove(app, u.session, { scopes: ['todos:read'] });
    const t = (await exchange(app, a)).body;
    await call(app, 'GET', '/v1/me', { token: t.access_token });
    const list = await call(app, 'GET', '/v1/grants', { token: u.session });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ client: { id: a.client.client_id, name: 'Test App', verified: false }, scopes: ['todos:read'] });
    expect(list.body.data[0].createdAt).toBeTruthy();
    expect(list.body.data[0].lastUsedAt).toBeTruthy();
    const reader = await createPat(app, u.session, ['todos:read']);
    expectProblem(await call(app, 'GET', '/v1/grants', { token: reader.token }), 403, 'forbidden_scope');
    const sessionsRead = await createPat(app, u.session, ['sessions:read']);
    expect((await call(app, 'GET', '/v1/grants', { token: sessionsRead.token })).status).toBe(200);
    expectProblem(await call(app, 'DELETE', `/v1/grants/${list.body.data[0].id}`, { token: sessionsRead.token }), 403, 'forbidden_scope');
    // Another user's grant is not found.
    expectProblem(await call(app, 'DELETE', `/v1/grants/${list.body.data[0].id}`, { token: session }), 404, 'not_found');
    const wrap = (app.deps.db.$client.prepare("SELECT wrapped_key AS w FROM oauth_tokens WHERE grant_id = ? AND kind = 'access'").get(list.body.data[0].id) as { w: Buffer }).w;
    expect((await call(app, 'DELETE', `/v1/grants/${list.body.data[0].id}`, { token: u.session })).status).toBe(204);
    expectProblem(await call(app, 'GET', '/v1/me', { token: t.access_token }), 401, 'grant_revoked');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id }), 400, 'invalid_grant');
    expect((await call(app, 'GET', '/v1/grants', { token: u.session })).body.data).toHaveLength(0);
    // The revoked wrap is not readable on disk (secure_delete + WAL truncation).
    const { readFileSync, existsSync } = await import('node:fs');
    const disk = Buffer.concat(['cairn.db', 'cairn.db-wal'].filter((f) => existsSync(`${app.dataDir}/${f}`)).map((f) => readFileSync(`${app.dataDir}/${f}`)));
    expect(disk.includes(wrap)).toBe(false);
  });

  it('a redeemed code and a grant ended by reuse detection leave no wrap on disk', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const disk = () => Buffer.concat(['cairn.db', 'cairn.db-wal'].filter((f) => existsSync(`${app.dataDir}/${f}`)).map((f) => readFileSync(`${app.dataDir}/${f}`)));
    const a = await authorizeAndApprove(app, session);
    const codeWrap = (app.deps.db.$client.prepare('SELECT wrapped_key AS w FROM oauth_requests WHERE code_hash = ?').get(createHash('sha256').update(Buffer.from(a.code, 'base64url')).digest()) as { w: Buffer }).w;
    expect(disk().includes(codeWrap)).toBe(true); // the scan finds what is there
    const t0 = (await exchange(app, a)).body;
    expect(disk().includes(codeWrap)).toBe(false);
    const hash = (t: string) => createHash('sha256').update(Buffer.from(t.slice(10), 'base64url')).digest();
    const wrapOf = (t: string) => (app.deps.db.$client.prepare('SELECT wrapped_key AS w FROM oauth_tokens WHERE secret_hash = ?').get(hash(t)) as { w: Buffer }).w;
    const t1 = (await token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id })).body;
    const wraps = [wrapOf(t1.access_token), wrapOf(t1.refresh_token), wrapOf(t0.access_token)];
    app.clock.advance(31_000);
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id }), 400, 'invalid_grant');
    const bytes = disk();
    for (const w of wraps) expect(bytes.includes(w)).toBe(false);
  });

  it('spec §5.4: revoke-all ends every grant', async () => {
    const u = await registerUser(app);
    const a = await authorizeAndApprove(app, u.session);
    const t = (await exchange(app, a)).body;
    expect((await call(app, 'POST', '/v1/auth/revoke-all', { token: u.session })).status).toBe(204);
    expectProblem(await call(app, 'GET', '/v1/me', { token: t.access_token }), 401, 'grant_revoked');
    oauthError(await token(app, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: a.client.client_id }), 400, 'invalid_grant');
  });

  it('spec §5.4: a code approved before a password change is dead', async () => {
    const u = await registerUser(app, undefined, 'first password 123');
    const a = await authorizeAndApprove(app, u.session);
    const pw = await call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: 'first password 123', newPassword: 'second password 456' } });
    expect(pw.status).toBe(200);
    oauthError(await exchange(app, a), 400, 'invalid_grant');
  });
});
