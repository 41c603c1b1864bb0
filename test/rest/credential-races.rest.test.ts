// Issue 10.6: credential changes are serialised per user. Each pair is fired concurrently, many
// times; afterwards the account must work: exactly one password logs in, the new session reads
// sealed content, every credential of before is refused, and no answer was a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const ROUNDS = 8;

async function account() {
  const u = await registerUser(app, undefined, 'first password 123');
  const tag = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'Sealed marker' } });
  expect(tag.status).toBe(201);
  return { ...u, tagId: tag.body.id as string };
}

function login(email: string, password: string) {
  return call(app, 'POST', '/v1/auth/login', { body: { email, password } });
}

/** The account works: one of the passwords logs in, and the session reads sealed content. */
async function expectHealthy(email: string, tagId: string, passwords: string[]) {
  const logins = await Promise.all(passwords.map((p) => login(email, p)));
  const ok = logins.filter((r) => r.status === 200);
  expect(ok, logins.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
  for (const r of logins) if (r.status !== 200) expectProblem(r, 401, 'unauthorized');
  const tag = await call(app, 'GET', `/v1/tags/${tagId}`, { token: ok[0]!.body.token });
  expect(tag.status, tag.text).toBe(200);
  expect(tag.body.name).toBe('Sealed marker');
  return passwords[logins.indexOf(ok[0]!)]!;
}

function expectNo500(results: Res[]) {
  for (const r of results) expect(r.status, r.text).toBeLessThan(500);
}

describe('concurrent credential changes (issue 10.6)', () => {
  it('password change and rotate-key at once: one wins, the other is refused, the account keeps working', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const u = await account();
      const [pw, rot] = await Promise.all([
        call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: 'first password 123', newPassword: 'second password 456' } }),
        call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'first password 123' } }),
      ]);
      expectNo500([pw, rot]);
      expect([pw.status, rot.status].filter((s) => s === 200)).toHaveLength(1);
      for (const r of [pw, rot]) if (r.status !== 200) expect([401, 409]).toContain(r.status);
      const current = await expectHealthy(u.email, u.tagId, ['first password 123', 'second password 456']);
      expect(current).toBe(pw.status === 200 ? 'second password 456' : 'first password 123');
      // The winner's session works; the old session is gone.
      const winner = pw.status === 200 ? pw : rot;
      expect((await call(app, 'GET', `/v1/tags/${u.tagId}`, { token: winner.body.token })).status).toBe(200);
      expectProblem(await call(app, 'GET', '/v1/me', { token: u.session }), 401, 'unauthorized');
    }
  });

  it('two rotate-keys at once: one 200, one refused (never a 500), content still opens', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const u = await account();
      const results = await Promise.all([0, 1].map(() => call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'first password 123' } })));
      expectNo500(results);
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      await expectHealthy(u.email, u.tagId, ['first password 123']);
    }
  });

  it('two password changes at once from one session: one wins', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const u = await account();
      const results = await Promise.all(
        ['pass A 1234567', 'pass B 1234567'].map((p) => call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: 'first password 123', newPassword: p } })),
      );
      expectNo500(results);
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      await expectHealthy(u.email, u.tagId, ['first password 123', 'pass A 1234567', 'pass B 1234567']);
    }
  });

  it('a key created while the data key rotates never holds the old key (201 before, or refused)', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const u = await account();
      const [key, rot] = await Promise.all([
        call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'racing', scopes: ['tags:read'], expiresInDays: 30 } }),
        call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'first password 123' } }),
      ]);
      expectNo500([key, rot]);
      expect(rot.status).toBe(200);
      // Whatever happened, a token that exists after the rotation is refused (spec §5.4), never a 500.
      if (key.status === 201) expectProblem(await call(app, 'GET', `/v1/tags/${u.tagId}`, { token: key.body.token }), 401, 'unauthorized');
      else expectProblem(key, 401, 'unauthorized');
      await expectHealthy(u.email, u.tagId, ['first password 123']);
    }
  });

  it('writes racing a rotation are either sealed under the new key or refused: every row still opens', async () => {
    const u = await account();
    const pat = await createPat(app, u.session, ['tasks:write']);
    const writes = Array.from({ length: 20 }, (_, i) => call(app, 'POST', '/v1/todos', { token: pat.token, body: { title: `race ${i}` } }));
    const rot = call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'first password 123' } });
    const results = await Promise.all([...writes, rot]);
    expectNo500(results);
    const fresh = (await rot).body.token as string;
    const list = await call(app, 'GET', '/v1/todos?limit=200', { token: fresh });
    expect(list.status, list.text).toBe(200);
    const created = results.slice(0, 20).filter((r) => r.status === 201).map((r) => r.body.id);
    expect(list.body.data.map((t: { id: string }) => t.id).sort()).toEqual(created.sort());
    for (const r of results.slice(0, 20)) if (r.status !== 201) expectProblem(r, 401, 'unauthorized');
  });

  it('logout, revoke-all and a key revocation racing a password change never 500', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const u = await account();
      const pat = await createPat(app, u.session, ['sessions:write']);
      const results = await Promise.all([
        call(app, 'POST', '/v1/auth/password', { token: u.session, body: { currentPassword: 'first password 123', newPassword: 'second password 456' } }),
        call(app, 'POST', '/v1/auth/revoke-all', { token: u.session }),
        call(app, 'POST', '/v1/auth/logout', { token: u.session }),
        call(app, 'DELETE', `/v1/keys/${pat.id}`, { token: pat.token }),
      ]);
      expectNo500(results);
      await expectHealthy(u.email, u.tagId, ['first password 123', 'second password 456']);
    }
  });

  it('two identical registrations at once: one 201, one 409 conflict (never a 500)', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const body = { email: `twin${i}-${Date.now()}@example.test`, password: 'twin password 1' };
      const results = await Promise.all([0, 1].map(() => call(app, 'POST', '/v1/auth/register', { body })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expectProblem(results.find((r) => r.status === 409)!, 409, 'conflict');
      expect((await login(body.email, body.password)).status).toBe(200);
    }
  });
});
