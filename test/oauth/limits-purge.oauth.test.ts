// Issue 17 item 8 (spec §8.1) at the real budgets (CAIRN_RATE_LIMIT_FACTOR=1), and the purge of
// OAuth key material (codes, rotated and expired tokens) with the manual clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';
import { purgeCredentials } from '../../server/jobs/purge-credentials.js';
import { authorizeAndApprove, authorizeUrl, exchange, openAuthorize, pkce, register, REDIRECT, token } from './helpers.js';

describe('OAuth rate limits (spec §8.1)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
  });
  afterAll(() => app.close());

  it('POST /oauth/register: 10 per hour per IP', async () => {
    for (let i = 0; i < 10; i++) await register(app);
    const r = await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: [REDIRECT] } });
    expectProblem(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    app.clock.advance(3_600_000);
    expect((await call(app, 'POST', '/oauth/register', { body: { client_name: 'x', redirect_uris: [REDIRECT] } })).status).toBe(201);
  });

  it('POST /oauth/token: 60 per minute per IP', async () => {
    app.clock.advance(60_000 - (app.clock() % 60_000));
    for (let i = 0; i < 60; i++) {
      const r = await token(app, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'cl_none' });
      expect(r.status).toBe(401);
      expect(r.headers.get('ratelimit-limit')).toBe('60');
    }
    const refused = await token(app, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'cl_none' });
    expectProblem(refused, 429, 'rate_limited');
    // The problem also reads as an RFC 6749 error for OAuth client libraries.
    expect(refused.body).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    app.clock.advance(60_000);
    expect((await token(app, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'cl_none' })).status).toBe(401);
  });

  it('GET /oauth/authorize: 30 per minute per IP (each page stores a pending request)', async () => {
    app.clock.advance(60_000 - (app.clock() % 60_000));
    const client = await register(app);
    const url = () => authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const pending = () => (app.deps.db.$client.prepare('SELECT COUNT(*) AS n FROM oauth_requests').get() as { n: number }).n;
    const before = pending();
    for (let i = 0; i < 30; i++) expect((await fetch(url(), { redirect: 'manual' })).status).toBe(200);
    const r = await fetch(url(), { redirect: 'manual' });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(pending()).toBe(before + 30);
    app.clock.advance(60_000);
    expect((await fetch(url(), { redirect: 'manual' })).status).toBe(200);
  });

  it('approval lookups: 10 per minute per user, 30 per minute per IP', async () => {
    app.clock.advance(60_000 - (app.clock() % 60_000));
    const users = await Promise.all([0, 1, 2, 3].map(() => registerUser(app)));
    for (let i = 0; i < 10; i++) expectProblem(await call(app, 'GET', '/v1/approvals/123456789', { token: users[0]!.session }), 404, 'not_found');
    expectProblem(await call(app, 'GET', '/v1/approvals/123456789', { token: users[0]!.session }), 429, 'rate_limited');
    // The IP's budget (30) is spent by three users' ten each; a fourth user is refused too.
    for (const u of users.slice(1, 3)) for (let i = 0; i < 10; i++) expectProblem(await call(app, 'GET', '/v1/approvals/123456789', { token: u.session }), 404, 'not_found');
    expectProblem(await call(app, 'GET', '/v1/approvals/123456789', { token: users[3]!.session }), 429, 'rate_limited');
    // Approve and deny are lookups too.
    expectProblem(await call(app, 'POST', '/v1/approvals/123456789/deny', { token: users[3]!.session }), 429, 'rate_limited');
    app.clock.advance(60_000);
    expectProblem(await call(app, 'GET', '/v1/approvals/123456789', { token: users[3]!.session }), 404, 'not_found');
  });
});

describe('purge of OAuth key material', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.close());
  const q = <T>(sql: string, ...args: unknown[]) => app.deps.db.$client.prepare(sql).get(...args) as T;

  it('drops wraps of expired codes, of refresh tokens rotated past the grace and of expired access tokens; deletes what holds nothing after 30 days', async () => {
    const { session } = await registerUser(app);
    // An approved code never redeemed.
    const client = await register(app);
    const page = await openAuthorize(authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: pkce().challenge, code_challenge_method: 'S256' }));
    await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: session, body: { scopes: ['todos:read'] } });
    // A grant with one rotation.
    const a = await authorizeAndApprove(app, session);
    const t0 = (await exchange(app, a)).body;
    await token(app, { grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: a.client.client_id });
    const countWraps = () => q<{ n: number }>('SELECT (SELECT COUNT(*) FROM oauth_tokens WHERE wrapped_key IS NOT NULL) + (SELECT COUNT(*) FROM oauth_requests WHERE wrapped_key IS NOT NULL) AS n').n;
    // 2 access + 2 refresh (t0 within grace) + 1 pending code.
    expect(countWraps()).toBe(5);
    purgeCredentials(app.deps);
    expect(countWraps()).toBe(5);
    app.clock.advance(61_000);
    purgeCredentials(app.deps);
    // The code (60 s) and the rotated refresh token (30 s grace) lost their wraps.
    expect(countWraps()).toBe(3);
    app.clock.advance(3_600_000);
    purgeCredentials(app.deps);
    expect(countWraps()).toBe(1); // the live refresh token
    expect(q<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_requests').n).toBe(0);
    app.clock.advance(30 * 86_400_000);
    purgeCredentials(app.deps);
    expect(q<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_tokens WHERE kind = 'access'").n).toBe(0);
    expect(q<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_tokens WHERE kind = 'refresh' AND wrapped_key IS NOT NULL").n).toBe(1);
  });
});
