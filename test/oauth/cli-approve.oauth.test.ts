// Issue 17 item 4: `npm run cli -- approve <code>` approves from the terminal (a first-party
// session against the same DATA_DIR), and the waiting page then redirects with a code that works.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { root, tsx } from '../helpers/process.js';
import { REDIRECT, authorizeUrl, exchange, openAuthorize, pkce, register, waitPoll } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

/**
 * Runs the CLI as its own process. Not spawnSync: that would block this process, which serves the
 * app, for the CLI's whole run (past the keep-alive timeout), and the next request could then be
 * sent on a pooled socket the server closes at that moment. With the event loop running, the
 * idle socket is closed cleanly and the next request opens a fresh one.
 */
function cli(args: string[], password: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: app.dataDir, CAIRN_MASTER_KEY: app.masterKey.toString('hex'), CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_PASSWORD: password };
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, ['server/cli.ts', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('npm run cli -- approve <code>', () => {
  it('approves a subset; the page redirects with a code that exchanges for tokens; a used code is refused', async () => {
    // The CLI runs on the system clock; the app's clock is set to match.
    app.clock.set(Date.now());
    const u = await registerUser(app, undefined, 'cli approve password');
    const client = await register(app, { client_name: 'CLI App' });
    const { verifier, challenge } = pkce();
    const page = await openAuthorize(authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'todos:read tags:read', resource: app.deps.config.publicUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 's' }));
    const r = await cli(['approve', page.userCode!, '--email', u.email, '--scopes', 'todos:read'], 'cli approve password');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Callback:  ${REDIRECT}`);
    expect(r.stderr).toContain('CLI App (unverified name)');
    expect(r.stdout.trim()).toBe('approved: todos:read');
    const w = await waitPoll(app, page.handle!);
    const code = new URL(w.redirect!).searchParams.get('code')!;
    const t = await exchange(app, { client, verifier, code });
    expect(t.body.scope).toBe('todos:read');
    expect((await call(app, 'GET', '/v1/todos', { token: t.body.access_token })).status).toBe(200);
    const again = await cli(['approve', page.userCode!, '--email', u.email], 'cli approve password');
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/No pending approval/);
  });
});
