// Issue 28 items 1 and 14 in a real browser (chromium via playwright-core, as browser.oauth.test.ts;
// skipped without a chromium). Two browser contexts on two networks (X-Forwarded-For through a
// trusted loopback proxy): the attacker's authorize page on 203.0.113.0/24, the victim's console (the web
// app's Settings, app/) on 198.51.100.0/24. It shows the warning and where the request started, keeps Approve off
// until the other-network box is ticked, and clears #code once decided (a reload shows no error);
// the authorize page opens the console in a new tab; no page answers a 404 (the favicon).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, shot, watchPage, type PageWatch } from '../helpers/browser.js';
import { registerUser } from '../helpers/http.js';
import { authorizeUrl, pkce, register, token } from './helpers.js';

describe.skipIf(noChromium('browser-phishing.oauth.test'))('approval phishing screens in chromium (issue 28)', () => {
  let app: TestApp;
  let browser: Browser;
  let callback: Server;
  let callbackUrl: string;
  beforeAll(async () => {
    app = await startApp({ CAIRN_TRUST_PROXY: 'loopback' });
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

  /**
   * Every answer of the app's origin that is an error (a favicon 404 among them), and the page's
   * CSP violations and page errors.
   */
  function watchErrors(page: Page, into: string[], watch: PageWatch): void {
    watch.add(page);
    page.on('response', (r) => {
      if (r.url().startsWith(app.url) && r.status() >= 400 && !r.url().includes('/trpc/')) into.push(`${r.status()} ${r.url()}`);
    });
  }

  it('a code from another network: warning, context, a second yes; #code cleared; console in a new tab; no 404', async () => {
    const u = await registerUser(app, undefined, 'browser password 2');
    const client = await register(app, { client_name: 'Planner', redirect_uris: [callbackUrl] });
    const { verifier, challenge } = pkce();
    const errors: string[] = [];
    const watch = watchPage();

    // The attacker's browser on network A.
    const ctxA = await browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': '203.0.113.7' } });
    const pageA = await ctxA.newPage();
    watchErrors(pageA, errors, watch);
    const url = authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: callbackUrl, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'st' });
    await pageA.goto(url);
    const code = (await pageA.locator('#user-code').textContent())!.replace(/-/g, '');
    expect(await pageA.locator('#warning').textContent()).toMatch(/Never read it out/);
    // The console link opens a new tab and leaves the waiting page where it is.
    const [tab] = await Promise.all([ctxA.waitForEvent('page'), pageA.click('#console-link')]);
    await tab.waitForLoadState();
    expect(tab.url()).toBe(`${app.deps.config.publicUrl}/app#code=${code}`);
    expect(pageA.url()).toBe(url);
    await tab.close();

    // The victim's console on network B, opened from the link the attacker sent.
    const ctxB = await browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': '198.51.100.20' } });
    const pageB = await ctxB.newPage();
    watchErrors(pageB, errors, watch);
    await pageB.goto(`${app.url}/app#code=${code}`);
    await pageB.fill('#email', u.email);
    await pageB.fill('#password', 'browser password 2');
    await pageB.click('#signin-button');
    await pageB.locator('#signed-in').waitFor({ state: 'visible' });
    await pageB.click('#lookup');
    await pageB.locator('#approval').waitFor({ state: 'visible' });
    expect(await pageB.locator('#approval-warning').textContent()).toMatch(/^Never approve a code someone else gave you\./);
    expect(await pageB.locator('#approval-started').textContent()).toMatch(/^Started \d+ s ago from 203\.0\.113\.0\/24 \(address 203\.0\.113\.7\), headless Chrome \(an automated browser\) on Linux\. You are on 198\.51\.100\.0\/24: another network\.$/);
    expect(await pageB.locator('#approval-other-network').isVisible()).toBe(true);
    expect(await pageB.locator('#approve').isDisabled()).toBe(true);
    await shot(pageB, '5-console-other-network', { dir: 'oauth' });
    await pageB.check('#confirm-other-network');
    expect(await pageB.locator('#approve').isEnabled()).toBe(true);
    await pageB.click('#approve');
    await pageB.locator('#approve-status', { hasText: /^Approved/ }).waitFor();
    // The decided code left the address bar (the web app keeps its Settings route, #/settings):
    // a reload looks nothing up and shows no error.
    expect(new URL(pageB.url()).hash).toBe('#/settings');
    await pageB.reload();
    await pageB.locator('#signed-in').waitFor({ state: 'visible' });
    await pageB.locator('#grants').waitFor({ state: 'attached' });
    expect(await pageB.locator('#approve-status').textContent()).toBe('');
    expect(await pageB.locator('#approval').isHidden()).toBe(true);

    // The attacker's page lands with the code (the confirmation is the victim's last chance, not a lock).
    await pageA.waitForURL((u2) => u2.href.startsWith(callbackUrl), { timeout: 15_000 });
    const landed = new URL(pageA.url());
    const t = await token(app, { grant_type: 'authorization_code', code: landed.searchParams.get('code')!, code_verifier: verifier, client_id: client.client_id, redirect_uri: callbackUrl });
    expect(t.status).toBe(200);

    // Same network: no box, Approve on.
    const pageC = await ctxB.newPage();
    watchErrors(pageC, errors, watch);
    await pageC.goto(authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: callbackUrl, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: pkce().challenge, code_challenge_method: 'S256' }));
    const code2 = (await pageC.locator('#user-code').textContent())!;
    await pageB.fill('#code', code2);
    await pageB.click('#lookup');
    await pageB.locator('#approval').waitFor({ state: 'visible' });
    expect(await pageB.locator('#approval-started').textContent()).toMatch(/That is your network too\.$/);
    expect(await pageB.locator('#approval-other-network').isHidden()).toBe(true);
    expect(await pageB.locator('#approve').isEnabled()).toBe(true);

    // The favicon every page may ask for is there (headless chromium may not ask by itself).
    expect((await pageB.goto(`${app.url}/favicon.ico`))!.status()).toBe(200);
    expect(errors).toEqual([]);
    watch.assertClean();
  }, 60_000);
});
