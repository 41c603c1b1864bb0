// Issue 32 item 6, "Installable and honest offline" (docs/app.md "Installable and offline"), in a
// real Chromium: the service worker takes control of /app, the manifest is linked, valid and
// makes the app installable; offline, a reload still opens the app from the worker's cache and the
// app says it is offline; the cache holds the shell only (no /trpc, /v1 or /.well-known answer);
// browser storage holds the session token and nothing else; a fetch that fails for want of a
// server shows the same notice; earlier versions' caches are deleted. No CSP violation.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';

const executablePath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
if (!executablePath) console.warn('[pwa.app.test] SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH); .ci/run installs it.');

type Shell = { cache: string; network: string[]; hashed: string[] };

// The page's globals the page.evaluate callbacks below use (they run in Chromium; the server's
// tsconfig has no DOM lib), declared for this file only, as far as they are used.
type PageCache = { keys(): Promise<{ url: string }[]>; match(path: string): Promise<Response | undefined>; put(path: string, res: Response): Promise<void> };
declare const navigator: {
  onLine: boolean;
  serviceWorker: {
    ready: Promise<unknown>;
    controller: { scriptURL: string } | null;
    addEventListener(type: 'controllerchange', listener: (e: unknown) => void, opts: { once: boolean }): void;
    getRegistration(scope: string): Promise<{ scope: string } | undefined>;
  };
};
declare const caches: { keys(): Promise<string[]>; open(name: string): Promise<PageCache> };
declare const document: { body: unknown; querySelector(sel: string): { getAttribute(name: string): string | null } | null };
declare function getComputedStyle(el: unknown): { margin: string };
declare const localStorage: object;
declare const sessionStorage: { length: number };
declare const indexedDB: { databases(): Promise<{ name?: string }[]> };

/** Until a service worker controls the page (the worker claims its clients on activation). */
async function controlled(page: Page): Promise<string> {
  return page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
    return navigator.serviceWorker.controller!.scriptURL;
  });
}

/** Every cache of the origin and the paths it holds (read from the page). */
function cacheContents(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(async () => {
    const out: Record<string, string[]> = {};
    for (const name of await caches.keys()) out[name] = (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search);
    return out;
  });
}

/** Replaces the cached shell with a copy that carries a marker, so a reload shows where its HTML came from. */
function markCachedShell(page: Page, cache: string): Promise<void> {
  return page.evaluate(async (name) => {
    const c = await caches.open(name);
    const res = (await c.match('/app'))!;
    const html = (await res.text()).replace('<head>', '<head>\n<meta name="cairn-copy" content="cached">');
    await c.put('/app', new Response(html, { status: 200, headers: res.headers }));
  }, cache);
}

const marker = (page: Page) => page.evaluate(() => document.querySelector('meta[name="cairn-copy"]')?.getAttribute('content') ?? null);

describe.skipIf(!executablePath)('the web app installable and offline, in chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let shell: Shell;
  const cspErrors: string[] = [];
  const pageErrors: string[] = [];
  const swWarnings: string[] = [];
  const watch = (p: Page) => {
    p.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) cspErrors.push(m.text());
      if (m.text().includes('no offline shell')) swWarnings.push(m.text());
    });
    p.on('pageerror', (e) => pageErrors.push(String(e)));
  };

  beforeAll(async () => {
    app = await startApp();
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    ctx = await browser.newContext();
    page = await ctx.newPage();
    watch(page);
    const sw = await (await fetch(`${app.url}/app/sw.js`)).text();
    shell = JSON.parse(/^var CAIRN_SHELL=(\{.*?\});\n/.exec(sw)![1]!) as Shell;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('signs up; the service worker takes control of /app and caches the shell', async () => {
    await page.goto(`${app.url}/app`);
    await page.getByLabel('Email').fill(`pwa-${Date.now()}@example.test`);
    await page.getByLabel('Password').fill('pwa password 1 long');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Today' }).waitFor();
    expect(await controlled(page)).toBe(`${app.url}/app/sw.js`);
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/app'))?.scope)).toBe(`${app.url}/app`);
    // Some API traffic through the controlled page: a to-do, the views, the live poll.
    const box = page.getByRole('textbox', { name: 'New to-do' });
    await box.fill('Water the plants today');
    await box.press('Enter');
    await page.getByRole('checkbox', { name: 'Water the plants' }).waitFor();
    const caches = await cacheContents(page);
    expect(Object.keys(caches)).toEqual([shell.cache]);
    expect([...caches[shell.cache]!].sort()).toEqual([...shell.network, ...shell.hashed].sort());
  }, 60_000);

  it('links a manifest Chromium reads without error, and finds the app installable', async () => {
    expect(await page.locator('link[rel="manifest"]').getAttribute('href')).toBe('/app/manifest.webmanifest');
    const cdp = await ctx.newCDPSession(page);
    const m = (await cdp.send('Page.getAppManifest')) as { url: string; errors: { message: string }[]; data?: string };
    expect(m.url).toBe(`${app.url}/app/manifest.webmanifest`);
    expect(m.errors).toEqual([]);
    const data = JSON.parse(m.data!) as Record<string, unknown> & { icons: { src: string; sizes: string }[] };
    expect(data).toMatchObject({ name: 'Cairn', start_url: '/app', scope: '/app', display: 'standalone', theme_color: '#ffffff' });
    expect(data.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    // Chromium's own installability check (manifest fields, icons it could fetch, a service
    // worker). Playwright's contexts are incognito, which Chromium never installs from: that one
    // reason is the harness's, not the app's.
    const inst = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
    expect(inst.installabilityErrors.filter((e) => e.errorId !== 'in-incognito')).toEqual([]);
    // Both theme colours are in the shell.
    expect(await page.locator('meta[name="theme-color"]').evaluateAll((els) => els.map((e) => `${e.getAttribute('media')} ${e.getAttribute('content')}`))).toEqual([
      '(prefers-color-scheme: light) #ffffff',
      '(prefers-color-scheme: dark) #17191c',
    ]);
    await cdp.detach();
  }, 60_000);

  it('the shell is network first: online, a reload gets the server\'s shell and refreshes the cached copy', async () => {
    await markCachedShell(page, shell.cache);
    await page.reload();
    await page.getByRole('navigation', { name: 'Lists' }).waitFor();
    expect(await marker(page)).toBeNull();
    const cached = await page.evaluate(async (name) => (await (await caches.open(name)).match('/app'))!.text(), shell.cache);
    expect(cached).not.toContain('cairn-copy');
    expect(cached).toContain('<link rel="manifest"');
  }, 60_000);

  it('offline, a reload opens the app from the cache and says it is offline', async () => {
    // The marker proves the HTML comes from the worker's cache, not from the network.
    await markCachedShell(page, shell.cache);
    await ctx.setOffline(true);
    try {
      const res = (await page.reload())!;
      expect(await marker(page)).toBe('cached');
      expect(res.fromServiceWorker()).toBe(true);
      // The cached copy keeps the server's headers: the page is under the same strict CSP offline.
      expect(res.headers()['content-security-policy']).toBe((await fetch(`${app.url}/app`)).headers.get('content-security-policy'));
      // The script and stylesheet came from the cache too: the app runs, signed in, and says so
      // (in either wording: Chromium's emulated offline does not always reach navigator.onLine
      // after a reload, and then the failed fetches say it).
      await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Today' }).waitFor();
      const offline = page.getByRole('status').filter({ hasText: /^You are offline/ });
      expect(await offline.textContent()).toMatch(/^You are offline(: changes cannot be saved until the connection is back| or the server cannot be reached: changes cannot be saved until it answers again)\.$/);
      expect(await page.evaluate(() => getComputedStyle(document.body).margin)).toBe('0px'); // style.css applied
    } finally {
      await ctx.setOffline(false);
    }
    await page.getByRole('status').filter({ hasText: /^You are offline/ }).waitFor({ state: 'detached', timeout: 10_000 });
    await page.getByRole('checkbox', { name: 'Water the plants' }).waitFor();
  }, 60_000);

  it('stores nothing of the API: the cache holds the shell only, storage only the session token', async () => {
    const caches = await cacheContents(page);
    const all = Object.values(caches).flat();
    expect(all.length).toBeGreaterThan(0);
    for (const p of all) {
      expect(p).not.toMatch(/^\/(trpc|v1|\.well-known)(\/|$)/);
      expect(p).toMatch(/^\/app(\/|$)/);
    }
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual(['cairn.session']);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name))).toEqual([]);
  }, 60_000);

  it('a query whose fetch fails while the browser says it is online shows the offline notice, and clears when the server answers', async () => {
    // The browser stays "online"; the API alone cannot be reached (the worker leaves /trpc to the network).
    await page.route('**/trpc/**', (route) => route.abort('connectionrefused'));
    expect(await page.evaluate(() => navigator.onLine)).toBe(true);
    // A view not loaded yet: its query fails.
    await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Logbook' }).click();
    const status = page.getByRole('status').filter({ hasText: /^You are offline/ });
    await status.waitFor();
    expect(await status.textContent()).toBe('You are offline or the server cannot be reached: changes cannot be saved until it answers again.');
    // The app asks again by itself (every 3 s while down); the first answer clears the notice.
    await page.unroute('**/trpc/**');
    await status.waitFor({ state: 'detached', timeout: 10_000 });
    await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Today' }).click();
    await page.getByRole('checkbox', { name: 'Water the plants' }).waitFor();
  }, 60_000);

  it('a new version deletes the caches of earlier ones when it activates', async () => {
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    watch(p);
    // A leftover of an earlier version (and someone else's cache, which stays), made before the worker installs.
    await p.goto(`${app.url}/healthz`);
    await p.evaluate(async () => {
      await (await caches.open('cairn-shell-000000000000')).put('/app', new Response('old'));
      await caches.open('not-cairn');
    });
    await p.goto(`${app.url}/app`);
    await p.getByRole('button', { name: 'Sign in' }).waitFor();
    await controlled(p);
    expect(Object.keys(await cacheContents(p)).sort()).toEqual([shell.cache, 'not-cairn'].sort());
    await fresh.close();
  }, 60_000);

  it('reported no CSP violation, no page error, no failed registration', () => {
    expect(cspErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(swWarnings).toEqual([]);
  });
});
