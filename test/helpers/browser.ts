// The Chromium harness of the browser tests (test/app/*.app.test.ts, test/oauth/browser*.test.ts):
// Debian's chromium driven by playwright-core, the CSP violations and page errors a page reports
// (every browser test asserts there are none), a page signed in the way the app keeps its session
// (docs/app.md "Staying signed in"), and screenshots into test-artifacts/ (gitignored).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { registerUser } from './http.js';
import { root } from './process.js';

/** The chromium to drive: $CHROMIUM_PATH, else Debian's; undefined when there is none. */
export const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));

/** True (after saying so) when there is no chromium: `describe.skipIf(noChromium('x.app.test'))`. */
export function noChromium(what: string): boolean {
  if (!chromiumPath) console.warn(`[${what}] SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH); .ci/run installs it.`);
  return !chromiumPath;
}

export function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) throw new Error('no chromium found (apt-get install chromium, or set CHROMIUM_PATH)');
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

/** What the watched pages reported: CSP violations (console) and uncaught errors. */
export type PageWatch = {
  cspErrors: string[];
  pageErrors: string[];
  /** Watches one more page into the same lists. */
  add: (page: Page) => void;
  /** No CSP violation and no page error so far. */
  assertClean: () => void;
};

export function watchPage(...pages: Page[]): PageWatch {
  const cspErrors: string[] = [];
  const pageErrors: string[] = [];
  const add = (page: Page) => {
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) cspErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  };
  pages.forEach(add);
  return {
    cspErrors,
    pageErrors,
    add,
    assertClean: () => {
      expect(cspErrors).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  };
}

export type SignedIn = { page: Page; context: BrowserContext; watch: PageWatch; token: string; email: string; password: string };

/**
 * A new context whose page is signed in as a user registered over the API: the session token is in
 * the origin's localStorage under 'cairn.session', where app/src/api.ts keeps it, before the page
 * loads anything. The page is watched and has not navigated yet.
 */
export async function signedInPage(browser: Browser, app: { url: string }, opts: { email?: string; password?: string; context?: BrowserContextOptions } = {}): Promise<SignedIn> {
  const u = await registerUser(app, opts.email, opts.password);
  const context = await browser.newContext({
    ...opts.context,
    storageState: { cookies: [], origins: [{ origin: new URL(app.url).origin, localStorage: [{ name: 'cairn.session', value: u.session }] }] },
  });
  const page = await context.newPage();
  return { page, context, watch: watchPage(page), token: u.session, email: u.email, password: u.password };
}

/** Opens the app at `/app` and waits for its sidebar's Today link: signed in and loaded. */
export async function openApp(page: Page, app: { url: string }): Promise<void> {
  await page.goto(`${app.url}/app`);
  await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Today' }).waitFor();
}

/**
 * A screenshot into test-artifacts/<dir>/<name>.png (dir 'app' unless told): a page whole (unless
 * fullPage is false), a locator as its box.
 */
export async function shot(target: Page | Locator, name: string, opts: { dir?: string; fullPage?: boolean } = {}): Promise<void> {
  const dir = path.join(root, 'test-artifacts', opts.dir ?? 'app');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  if ('goto' in target) await target.screenshot({ path: file, fullPage: opts.fullPage ?? true });
  else await target.screenshot({ path: file });
}

/** The focused element's aria-label (in-page code as a string: the root tsconfig has no DOM lib). */
export function focusedLabel(page: Page): Promise<string | null> {
  return page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null");
}

/** The browser's local date (same machine, same time zone): what the app asks views with. */
export function ymd(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
