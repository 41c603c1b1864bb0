// DECISIONS §2 (issue 10.4): sessions are bound to the instance, an id kept with the data, not to
// PUBLIC_URL or the port. Changing PUBLIC_URL, or minting a session with the CLI under another
// environment, logs nobody out; a session of another instance (same master key) is refused.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { webcrypto } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { restartApp, stopKeepingData } from '../helpers/restart.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';
import { root, startServerProcess, tsx, type ServerProcess } from '../helpers/process.js';

const open: TestApp[] = [];
let proc: ServerProcess | undefined;
afterEach(async () => {
  await proc?.stop();
  proc = undefined;
  while (open.length) await open.pop()!.close();
});

describe('sessions are bound to the instance', () => {
  it('a session survives a change of PUBLIC_URL and port', async () => {
    const a = await startApp();
    const u = await registerUser(a);
    stopKeepingData(a);
    const b = await restartApp(a, {}, { publicUrl: 'https://tasks.example.test' });
    open.push(b);
    const me = await call(b, 'GET', '/v1/me', { token: u.session });
    expect(me.status, me.text).toBe(200);
    // The 401 challenge still names the new public URL.
    const bad = await call(b, 'GET', '/v1/me', { token: 'nope' });
    expect(bad.headers.get('www-authenticate')).toContain('https://tasks.example.test/.well-known/oauth-protected-resource');
  });

  it('a session of another instance is refused, even under the same master key and URL', async () => {
    const a = await startApp();
    open.push(a);
    const u = await registerUser(a);
    const other = await startApp({}, { publicUrl: a.deps.config.publicUrl });
    open.push(other);
    // Same signing key as `a`: only the instance id tells the two apart.
    other.deps.keys = a.deps.keys;
    expectProblem(await call(other, 'GET', '/v1/me', { token: u.session }), 401, 'unauthorized');
  });

  it('npm run cli -- login under another PORT/PUBLIC_URL prints a session the server accepts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-inst-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_PASSWORD: 'instance password 1' };
      delete env.PORT;
      delete env.PUBLIC_URL;
      const add = spawnSync(tsx, ['server/cli.ts', 'user', 'add', '--email', 'inst@example.test'], { cwd: root, env, encoding: 'utf8' });
      expect(add.status, add.stderr).toBe(0);
      const login = spawnSync(tsx, ['server/cli.ts', 'login', '--email', 'inst@example.test'], { cwd: root, env, encoding: 'utf8' });
      expect(login.status, login.stderr).toBe(0);
      const token = /eyJ[\w.-]+/.exec(login.stdout)![0];
      proc = await startServerProcess(dataDir, { PUBLIC_URL: 'https://cairn.example.test' });
      const me = await fetch(`${proc.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the session key is imported into WebCrypto once per server key, not on every sign and verify (issue 12)', async () => {
    const a = await startApp();
    open.push(a);
    const u = await registerUser(a);
    const spy = vi.spyOn(webcrypto.subtle, 'importKey');
    try {
      for (let i = 0; i < 3; i++) expect((await call(a, 'GET', '/v1/me', { token: u.session })).status).toBe(200);
      const again = await call(a, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } });
      expect(again.status, again.text).toBe(200);
      expect((await call(a, 'GET', '/v1/me', { token: again.body.token })).status).toBe(200);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});
