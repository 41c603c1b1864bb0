// Spec §4.14, §5.1: personal access tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('personal access tokens', () => {
  it('are created by a first-party session, prefixed, shown once, and listed without the secret', async () => {
    const u = await registerUser(app);
    const r = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'Shortcuts', scopes: ['todos:read'], expiresInDays: 90 } });
    expect(r.status).toBe(201);
    expect(r.body.token).toMatch(/^cairn_pat_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(r.body.expiresAt) - Date.parse(r.body.createdAt)).toBe(90 * 86_400_000);
    const list = await call(app, 'GET', '/v1/keys', { token: u.session });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: r.body.id, name: 'Shortcuts', scopes: ['todos:read'] });
    expect(list.text).not.toContain(r.body.token);
    expect(list.text).not.toContain(r.body.token.slice('cairn_pat_'.length));
    expect(list.body.data[0]).not.toHaveProperty('token');
  });

  it('a token cannot create a token (forbidden_scope), whatever its scopes', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['sessions:write', 'tasks:write', 'webhooks:write']);
    const r = await call(app, 'POST', '/v1/keys', { token: pat.token, body: { name: 'x', scopes: ['todos:read'], expiresInDays: 30 } });
    expectProblem(r, 403, 'forbidden_scope');
  });

  it('expiry is mandatory and one of 30/90/180/365 days; scopes must be known', async () => {
    const u = await registerUser(app);
    for (const bad of [undefined, 31, 0, '30', 365.5]) {
      const r = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['todos:read'], expiresInDays: bad } });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/expiresInDays');
    }
    for (const d of [30, 90, 180, 365]) {
      expect((await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: `d${d}`, scopes: ['todos:read'], expiresInDays: d } })).status).toBe(201);
    }
    const scope = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['todos:read', 'admin'], expiresInDays: 30 } });
    expect(expectProblem(scope, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/scopes/1');
    const none = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: [], expiresInDays: 30 } });
    expect(expectProblem(none, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/scopes');
  });

  it('an expired token gets 401', async () => {
    const local = await startApp();
    try {
      const u = await registerUser(local);
      const pat = await createPat(local, u.session, ['tags:read'], 30);
      expect((await call(local, 'GET', '/v1/tags', { token: pat.token })).status).toBe(200);
      local.clock.advance(30 * 86_400_000);
      expectProblem(await call(local, 'GET', '/v1/tags', { token: pat.token }), 401, 'unauthorized');
    } finally {
      await local.close();
    }
  });

  it('at most 10 are created per day (rate_limited with Retry-After until the next UTC day)', async () => {
    const local = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
    try {
      local.clock.set(Date.parse('2026-11-21T23:00:00.000Z'));
      const u = await registerUser(local);
      for (let i = 0; i < 10; i++) {
        const k = await createPat(local, u.session, ['tags:read']);
        if (i < 3) await call(local, 'DELETE', `/v1/keys/${k.id}`, { token: u.session }); // revoked ones still count
      }
      const r = await call(local, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } });
      expectProblem(r, 429, 'rate_limited');
      expect(r.headers.get('retry-after')).toBe('3600');
      local.clock.advance(3600 * 1000);
      expect((await call(local, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } })).status).toBe(201);
    } finally {
      await local.close();
    }
  });

  it('CAIRN_RATE_LIMIT_FACTOR scales the daily cap like every rate limit (DECISIONS §1); the 25-active cap is not a rate', async () => {
    const local = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '2' });
    try {
      local.clock.set(Date.parse('2026-11-21T10:00:00.000Z'));
      const u = await registerUser(local);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await createPat(local, u.session, ['tags:read'])).id);
      const r = await call(local, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } });
      expect(expectProblem(r, 429, 'rate_limited').detail).toMatch(/20/);
    } finally {
      await local.close();
    }
    const many = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1000' });
    try {
      const u = await registerUser(many);
      for (let i = 0; i < 25; i++) await createPat(many, u.session, ['tags:read']);
      const r = await call(many, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } });
      expect(expectProblem(r, 409, 'conflict').detail).toMatch(/25/);
    } finally {
      await many.close();
    }
  });

  it('at most 25 are active at a time (conflict); revoking or expiry frees a place', async () => {
    const local = await startApp();
    try {
      const u = await registerUser(local);
      const ids: string[] = [];
      for (let day = 0; day < 3; day++) {
        for (let i = 0; i < (day < 2 ? 10 : 5); i++) ids.push((await createPat(local, u.session, ['tags:read'], 365)).id);
        local.clock.advance(86_400_000);
      }
      expect(ids).toHaveLength(25);
      const r = await call(local, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } });
      expect(expectProblem(r, 409, 'conflict').detail).toMatch(/25/);
      expect((await call(local, 'DELETE', `/v1/keys/${ids[0]}`, { token: u.session })).status).toBe(204);
      expect((await call(local, 'POST', '/v1/keys', { token: u.session, body: { name: 'x', scopes: ['tags:read'], expiresInDays: 30 } })).status).toBe(201);
    } finally {
      await local.close();
    }
  });

  it('listing needs sessions:read and revoking needs sessions:write', async () => {
    const u = await registerUser(app);
    const reader = await createPat(app, u.session, ['sessions:read']);
    const writer = await createPat(app, u.session, ['sessions:write']);
    const target = await createPat(app, u.session, ['tags:read']);
    expectProblem(await call(app, 'GET', '/v1/keys', { token: target.token }), 403, 'forbidden_scope');
    expect((await call(app, 'GET', '/v1/keys', { token: reader.token })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/keys', { token: writer.token })).status).toBe(200); // write implies read
    expectProblem(await call(app, 'DELETE', `/v1/keys/${target.id}`, { token: reader.token }), 403, 'forbidden_scope');
    expect((await call(app, 'DELETE', `/v1/keys/${target.id}`, { token: writer.token })).status).toBe(204);
    expectProblem(await call(app, 'GET', '/v1/tags', { token: target.token }), 401, 'unauthorized');
    expectProblem(await call(app, 'DELETE', `/v1/keys/${target.id}`, { token: writer.token }), 404, 'not_found');
  });

  it("a user cannot list or revoke another user's tokens", async () => {
    const a = await registerUser(app);
    const b = await registerUser(app);
    const ka = await createPat(app, a.session, ['tags:read']);
    expectProblem(await call(app, 'DELETE', `/v1/keys/${ka.id}`, { token: b.session }), 404, 'not_found');
    expect((await call(app, 'GET', '/v1/keys', { token: b.session })).body.data).toEqual([]);
    expect((await call(app, 'GET', '/v1/tags', { token: ka.token })).status).toBe(200);
  });
});

describe('GET /v1/me (spec §4.3)', () => {
  it('reports the credential, subject, granted scopes and webhooks.disabled', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['todos:write', 'tasks:read']);
    const r = await call(app, 'GET', '/v1/me', { token: pat.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      sub: u.userId,
      credential: { id: pat.id, kind: 'personal_token', expiresAt: expect.any(String) },
      scopes: ['todos:write', 'tasks:read'],
      webhooks: { disabled: false, disabledAt: null },
    });
    const s = await call(app, 'GET', '/v1/me', { token: u.session });
    expect(s.body.credential.kind).toBe('session');
    expect(s.body.scopes).toEqual(expect.arrayContaining(['sessions:write', 'webhooks:write', 'todos:write']));
  });

  it('reports webhooks.disabled once subscriptions were disabled', async () => {
    const u = await registerUser(app);
    app.deps.db.$client.prepare('UPDATE users SET webhooks_disabled_at = ? WHERE id = ?').run(app.clock(), u.userId);
    const r = await call(app, 'GET', '/v1/me', { token: u.session });
    expect(r.body.webhooks).toEqual({ disabled: true, disabledAt: new Date(app.clock()).toISOString() });
  });
});
