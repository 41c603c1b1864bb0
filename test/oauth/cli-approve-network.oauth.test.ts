// Issue 28 item 1 from the terminal: `npm run cli -- approve <code>` shows where and when the
// request started and the warning; the CLI runs on the server's own machine (loopback), so a
// request started from another network needs --confirm-other-network.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';
import { root, tsx } from '../helpers/process.js';
import { REDIRECT, authorizeUrl, pkce, register, waitPoll } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ CAIRN_TRUST_PROXY: 'loopback' });
});
afterAll(() => app.close());

/** The CLI as a child process, run asynchronously: the test's server keeps answering meanwhile. */
function cli(args: string[], password: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: app.dataDir, CAIRN_MASTER_KEY: app.masterKey.toString('hex'), CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_PASSWORD: password };
  const child = spawn(tsx, ['server/cli.ts', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

describe('npm run cli -- approve <code>: a request from another network', () => {
  it('shows the context and the warning; refuses without --confirm-other-network, approves with it', async () => {
    // The CLI runs on the system clock; the app's clock is set to match.
    app.clock.set(Date.now());
    const u = await registerUser(app, undefined, 'cli network password');
    const client = await register(app, { client_name: 'Planner' });
    const res = await fetch(authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: pkce().challenge, code_challenge_method: 'S256' }), {
      headers: { 'x-forwarded-for': '203.0.113.7', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0' },
    });
    const html = await res.text();
    const userCode = /id="user-code">(\d{3})-(\d{3})-(\d{3})</.exec(html)!.slice(1).join('');
    const handle = /data-wait="([A-Za-z0-9_-]+)"/.exec(html)![1]!;

    const refused = await cli(['approve', userCode, '--email', u.email], 'cli network password');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/Started: {3}Started \d+ s ago from 203\.0\.113\.0\/24 \(address 203\.0\.113\.7\), Firefox on Windows\. You are on loopback: another network\./);
    expect(refused.stderr).toContain('Never approve a code someone else gave you.');
    expect(refused.stderr).toContain('run again with --confirm-other-network');
    expect((await waitPoll(app, handle)).status).toBe('pending');

    const ok = await cli(['approve', userCode, '--email', u.email, '--confirm-other-network'], 'cli network password');
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe('approved: todos:read');
    expect(new URL((await waitPoll(app, handle)).redirect!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  }, 60_000);
});
