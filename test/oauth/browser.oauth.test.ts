// Issue 17 "done means": a real browser (Debian's chromium driven by playwright-core through
// executablePath) opens the authorize page and the /app console, signs in, approves a code with
// one scope unticked, and the authorize page lands on the redirect with a code that exchanges.
// Screenshots go to test-artifacts/oauth/ (gitignored) for a person to look at. Without a chromium
// on the machine this one file is skipped and says so; .ci/run installs chromium, so CI runs it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, shot, watchPage } from '../helpers/browser.js';
import { call, registerUser } from '../helpers/http.js';
import { authorizeUrl, pkce, register, token } from './helpers.js';

describe.skipIf(noChromium('browser.oauth.test'))('authorize page and console in chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let callback: Server;
  let callbackUrl: string;
  beforeAll(async () => {
    app = await startApp();
    callback = createServer((_req, res) => res.end('callback reached'));
    await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    callback?.close();
    await app?.close();
  });

  it('approves through the console; the authorize page redirects with code, state and iss', async () => {
    const u = await registerUser(app, undefined, 'browser password 1');
    const client = await register(app, { client_name: 'Browser Test App', redirect_uris: [callbackUrl] });
    const { verifier, challenge } = pkce();
    const ctxA = await browser.newContext();
    const pageA = await ctxA.newPage();
    const watch = watchPage(pageA);
    await pageA.goto(authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: callbackUrl, scope: 'todos:read tags:read', resource: app.deps.config.publicUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'browser-state' }));
    const shown = (await pageA.locator('#user-code').textContent())!;
    expect(shown).toMatch(/^\d{3}-\d{3}-\d{3}$/);
    await expect(pageA.locator('h1').textContent()).resolves.toContain(callbackUrl);
    await shot(pageA, '1-authorize-page', { dir: 'oauth' });

    // The trusted device: the console, signed in with email and password.
    const ctxB = await browser.newContext();
    const pageB = await ctxB.newPage();
    watch.add(pageB);
    await pageB.goto(`${app.url}/app#code=${shown.replace(/-/g, '')}`);
    await pageB.fill('#email', u.email);
    await pageB.fill('#password', 'browser password 1');
    await pageB.click('#signin-button');
    await pageB.locator('#signed-in').waitFor({ state: 'visible' });
    await pageB.click('#lookup');
    await pageB.locator('#approval').waitFor({ state: 'visible' });
    expect(await pageB.locator('#approval-callback').textContent()).toBe(callbackUrl);
    expect(await pageB.locator('#approval-app').textContent()).toBe('Browser Test App');
    await pageB.uncheck('#approval-scopes input[value="tags:read"]');
    await shot(pageB, '2-console-approval', { dir: 'oauth' });
    await pageB.click('#approve');
    await pageB.locator('#approve-status', { hasText: /^Approved/ }).waitFor();

    // The authorize page notices and lands on the callback with the code.
    await pageA.waitForURL((url) => url.href.startsWith(callbackUrl), { timeout: 15_000 });
    const landed = new URL(pageA.url());
    expect(landed.searchParams.get('state')).toBe('browser-state');
    expect(landed.searchParams.get('iss')).toBe(app.deps.config.publicUrl);
    await shot(pageA, '3-redirected', { dir: 'oauth', fullPage: false });
    const t = await token(app, { grant_type: 'authorization_code', code: landed.searchParams.get('code')!, code_verifier: verifier, client_id: client.client_id, redirect_uri: callbackUrl });
    expect(t.status).toBe(200);
    expect(t.body.scope).toBe('todos:read');
    expect((await call(app, 'GET', '/v1/todos', { token: t.body.access_token })).status).toBe(200);

    // The console lists the connected app and creates a personal token, shown once.
    await pageB.reload();
    await pageB.locator('#grants tr').first().waitFor();
    expect(await pageB.locator('#grants').textContent()).toContain('Browser Test App (unverified)');
    await pageB.fill('#new-key-name', 'from the console');
    await pageB.check('#new-key-scopes input[value="todos:read"]');
    await pageB.click('#new-key-create');
    await pageB.locator('#new-key-shown').waitFor({ state: 'visible' });
    const pat = (await pageB.locator('#new-key-secret').textContent())!;
    expect(pat).toMatch(/^cairn_pat_/);
    expect((await call(app, 'GET', '/v1/todos', { token: pat })).status).toBe(200);
    await pageB.locator('#keys tr').first().waitFor();
    // An app password for a CalDAV client (DECISIONS §8): no scopes to pick; it opens /dav only.
    await pageB.fill('#new-key-name', 'app password for my phone');
    await pageB.selectOption('#new-key-audience', 'dav');
    expect(await pageB.locator('#new-key-scopes').isHidden()).toBe(true);
    await pageB.click('#new-key-create');
    await pageB.waitForFunction((old) => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector('#new-key-secret')?.textContent !== old, pat);
    const appPassword = (await pageB.locator('#new-key-secret').textContent())!;
    expect(appPassword).toMatch(/^cairn_pat_/);
    expect((await call(app, 'GET', '/v1/todos', { token: appPassword })).status).toBe(401);
    const keys = (await call(app, 'GET', '/v1/keys', { token: u.session })).body.data as { name: string; audience: string; scopes: string[] }[];
    expect(keys.find((k) => k.name === 'app password for my phone')).toMatchObject({ audience: 'dav', scopes: ['todos:read', 'todos:write', 'containers:read', 'containers:write'] });
    await pageB.locator('#keys tr', { hasText: 'CalDAV (app password)' }).waitFor();
    await shot(pageB, '4-console-lists', { dir: 'oauth' });
    // Disconnect the app from the console: its token then gets grant_revoked.
    await pageB.locator('#grants button').first().click();
    await pageB.locator('#grants tr').first().waitFor({ state: 'detached' });
    expect((await call(app, 'GET', '/v1/todos', { token: t.body.access_token })).status).toBe(401);
    watch.assertClean();
  }, 60_000);
});
