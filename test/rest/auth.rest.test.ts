// DECISIONS §2 and spec §5.4: accounts, sessions, and "everything ends at once".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('register and login', () => {
  it('registers with 201 {user, token, expiresAt} and the session works', async () => {
    const r = await call(app, 'POST', '/v1/auth/register', { body: { email: 'New.User@Example.test', password: 'long enough pw' } });
    expect(r.status).toBe(201);
    expect(r.body.user.email).toBe('new.user@example.test');
    expect(r.body.user.id).toMatch(/^[0-9A-F-]{36}$/);
    expect(Date.parse(r.body.expiresAt) - app.clock()).toBe(30 * 86_400_000);
    const me = await call(app, 'GET', '/v1/me', { token: r.body.token });
    expect(me.status).toBe(200);
    expect(me.body.sub).toBe(r.body.user.id);
  });

  it('refuses a duplicate email (any case), short and long passwords, and bad emails with pointers', async () => {
    await registerUser(app, 'dup@example.test');
    expectProblem(await call(app, 'POST', '/v1/auth/register', { body: { email: 'DUP@example.test', password: 'long enough pw' } }), 409, 'conflict');
    const short = await call(app, 'POST', '/v1/auth/register', { body: { email: 'x@example.test', password: '123456789' } });
    expect(expectProblem(short, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/password');
    const long = await call(app, 'POST', '/v1/auth/register', { body: { email: 'x@example.test', password: 'p'.repeat(1025) } });
    expect(expectProblem(long, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/password');
    const email = await call(app, 'POST', '/v1/auth/register', { body: { email: 'not-an-email', password: 'long enough pw' } });
    expect(expectProblem(email, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/email');
  });

  it('a wrong password and an unknown email give the same 401', async () => {
    const u = await registerUser(app);
    const wrong = await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'wrong password!' } });
    const unknown = await call(app, 'POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password: 'wrong password!' } });
    const a = expectProblem(wrong, 401, 'unauthorized');
    const b = expectProblem(unknown, 401, 'unauthorized');
    expect(a.detail).toBe(b.detail);
    const ok = await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } });
    expect(ok.status).toBe(200);
    expect((await call(app, 'GET', '/v1/me', { token: ok.body.token })).status).toBe(200);
  });

  it('sign-up can be turned off (403 forbidden)', async () => {
    const closed = await startApp({ CAIRN_ALLOW_SIGNUP: 'false' });
    try {
      expectProblem(await call(closed, 'POST', '/v1/auth/register', { body: { email: 'a@example.test', password: 'long enough pw' } }), 403, 'forbidden');
    } finally {
      await closed.close();
    }
  });

  it('sessions expire after 30 days', async () => {
    const local = await startApp();
    try {
      const u = await registerUser(local);
      local.clock.advance(30 * 86_400_000 + 1000);
      expectProblem(await call(local, 'GET', '/v1/me', { token: u.session }), 401, 'unauthorized');
    } finally {
      await local.close();
    }
  });
});

describe('logout and spec §5.4: everything ends at once', () => {
  it('logout ends that session only', async () => {
    const u = await registerUser(app);
    const second = (await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token;
    const out = await call(app, 'POST', '/v1/auth/logout', { token: u.session });
    expect(out.status).toBe(204);
    expectProblem(await call(app, 'GET', '/v1/me', { token: u.session }), 401, 'unauthorized');
    expect((await call(app, 'GET', '/v1/me', { token: second })).status).toBe(200);
  });

  for (const [name, path, body] of [
    ['a password change', '/v1/auth/password', (pw: string) => ({ currentPassword: pw, newPassword: 'a brand new password' })],
    ['a key rotation', '/v1/auth/rotate-key', (pw: string) => ({ password: pw })],
  ] as const) {
    it(`${name} disconnects every session and token, and answers with a fresh session`, async () => {
      const u = await registerUser(app);
      const other = (await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token;
      const pat = await createPat(app, u.session, ['tags:write', 'sessions:read']);
      const tag = await call(app, 'POST', '/v1/tags', { token: pat.token, body: { name: 'Keep me', colorHex: '#010203' } });
      expect(tag.status).toBe(201);

      const r = await call(app, 'POST', path, { token: u.session, body: body(u.password) });
      expect(r.status).toBe(200);
      expect(r.body.token).toBeTruthy();
      for (const old of [u.session, other, pat.token]) expectProblem(await call(app, 'GET', '/v1/me', { token: old }), 401, 'unauthorized');

      // The new session reads everything written before, whatever changed underneath.
      const t = await call(app, 'GET', `/v1/tags/${tag.body.id}`, { token: r.body.token });
      expect(t.status).toBe(200);
      expect(t.body).toMatchObject({ name: 'Keep me', colorHex: '#010203' });
      const keys = await call(app, 'GET', '/v1/keys', { token: r.body.token });
      expect(keys.body.data).toEqual([]);
    });
  }

  it('the wrong current password is refused at its pointer and changes nothing', async () => {
    const u = await registerUser(app);
    const r = await call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: 'not my password', newPassword: 'another long one' } });
    expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/currentPassword');
    expect((await call(app, 'GET', '/v1/me', { token: u.session })).status).toBe(200);
    const k = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'not my password' } });
    expect(expectProblem(k, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/password');
  });

  it('after a password change only the new password logs in', async () => {
    const u = await registerUser(app);
    await call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: u.password, newPassword: 'the new password' } });
    expectProblem(await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } }), 401, 'unauthorized');
    expect((await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'the new password' } })).status).toBe(200);
  });

  it('after a key rotation the password still logs in and reads the re-sealed data', async () => {
    const u = await registerUser(app);
    const tag = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'Rotated' } });
    const before = app.deps.db.$client.prepare('SELECT sealed, name_index FROM tags WHERE id = ?').get(tag.body.id) as { sealed: Buffer; name_index: Buffer };
    await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    const after = app.deps.db.$client.prepare('SELECT sealed, name_index FROM tags WHERE id = ?').get(tag.body.id) as { sealed: Buffer; name_index: Buffer };
    expect(after.sealed.equals(before.sealed)).toBe(false);
    expect(after.name_index.equals(before.name_index)).toBe(false);
    const s = (await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token;
    expect((await call(app, 'GET', `/v1/tags/${tag.body.id}`, { token: s })).body.name).toBe('Rotated');
    // The blind index was recomputed: the same name still finds the same tag.
    const again = await call(app, 'POST', '/v1/tags', { token: s, body: { name: 'rotated' } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(tag.body.id);
  });

  it('revoke-all disconnects every credential, the calling session included', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    const r = await call(app, 'POST', '/v1/auth/revoke-all', { token: u.session });
    expect(r.status).toBe(204);
    expectProblem(await call(app, 'GET', '/v1/me', { token: u.session }), 401, 'unauthorized');
    expectProblem(await call(app, 'GET', '/v1/me', { token: pat.token }), 401, 'unauthorized');
  });

  it('the auth actions are first-party only', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tasks:write', 'sessions:write']);
    for (const [path, body] of [
      ['/v1/auth/logout', undefined],
      ['/v1/auth/revoke-all', undefined],
      ['/v1/auth/password', { currentPassword: u.password, newPassword: 'whatever long' }],
      ['/v1/auth/rotate-key', { password: u.password }],
    ] as const) {
      expectProblem(await call(app, 'POST', path, { token: pat.token, body }), 403, 'forbidden_scope');
    }
  });
});
