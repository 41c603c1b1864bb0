// Issue 32 "Performance": Anytime with 2,500 to-dos, paged through the view's cursor and rendered
// through the virtualiser (app/src/views/virtual.tsx; docs/app.md "Long lists"), in a real
// Chromium (Debian's, driven by playwright-core, as test/app/browser.app.test.ts does). The list
// stays a `list` of `listitem`s, holds a window of rows (never the 2,500), reaches its last row by
// scrolling, and j/k walk rows across the window's edge. No CSP violation, no page error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { focusedLabel, launchBrowser, noChromium, signedInPage, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

const COUNT = 2_500;
/** The DOM may hold a window of rows, never the list: ~45 at this viewport, 200 at most. */
const MAX_ROWS = 200;

type Row = { id: string; title: string };

describe.skipIf(noChromium('virtual.app.test'))('long lists in chromium (virtualised Anytime)', () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let token: string;
  /** Anytime's order as the API pages it (what the app must show, in this order). */
  const order: Row[] = [];

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
    // Signed in as the app keeps it (docs/app.md "Staying signed in"), without the sign-in form.
    ({ page, watch, token } = await signedInPage(browser, app));
    // Two projects and standalone to-dos, so the list has groups (each its own `list`).
    const projects: string[] = [];
    for (const name of ['Alpha', 'Beta']) {
      const r = await call(app, 'POST', '/v1/containers', { token, body: { kind: 'project', name } });
      expect(r.status).toBeLessThan(300);
      projects.push(r.body.id as string);
    }
    // No batch create in the API: 2,500 POST /v1/todos, 16 at a time.
    let next = 0;
    const worker = async () => {
      while (next < COUNT) {
        const i = next++;
        const body: Record<string, unknown> = { title: `Item ${String(i + 1).padStart(4, '0')}` };
        if (i % 5 === 1) body.parentId = projects[0];
        else if (i % 5 === 2) body.parentId = projects[1];
        const r = await call(app, 'POST', '/v1/todos', { token, body });
        if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    let cursor: string | undefined;
    do {
      const r = await call(app, 'GET', `/v1/views/anytime?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      expect(r.status).toBe(200);
      for (const g of r.body.groups as { todos: Row[] }[]) for (const t of g.todos) order.push({ id: t.id, title: t.title });
      cursor = r.body.next_cursor ?? undefined;
    } while (cursor);
    expect(order).toHaveLength(COUNT);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const rowsInDom = () => page.locator('main li[data-todo]').count();
  // In-page code as strings: this program's lib has no DOM (as in browser.app.test.ts).
  const focused = () => focusedLabel(page);
  const toBottom = () => page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
  const maxRowsSeen = () => page.evaluate<number>('window.__maxRows');

  it('opens Anytime with a window of rows, each a listitem with its place in its group', async () => {
    await page.goto(`${app.url}/app#/anytime`);
    await page.getByRole('heading', { level: 1, name: 'Anytime' }).waitFor();
    await page.getByRole('checkbox', { name: order[0]!.title, exact: true }).waitFor();
    // The largest number of rows the DOM ever holds, from here on (checked at the end).
    await page.evaluate(`(() => {
      const rows = () => document.querySelectorAll('main li[data-todo]').length;
      window.__maxRows = rows();
      new MutationObserver(() => { window.__maxRows = Math.max(window.__maxRows, rows()); }).observe(document.querySelector('main'), { childList: true, subtree: true });
    })()`);
    const n = await rowsInDom();
    expect(n).toBeGreaterThan(5);
    expect(n).toBeLessThanOrEqual(MAX_ROWS);
    // The first list's rows, through the accessibility tree: listitems in a list named by the group.
    const first = page.getByRole('listitem').filter({ has: page.getByRole('checkbox', { name: order[0]!.title, exact: true }) });
    expect(await first.getAttribute('aria-posinset')).toBe('1');
    const setsize = Number(await first.getAttribute('aria-setsize'));
    expect(setsize === -1 || setsize > 1).toBe(true);
    expect(await page.getByRole('list').filter({ has: first }).count()).toBe(1);
  }, 60_000);

  it('scrolls to the bottom: the pages load on the way and the last to-do becomes visible', async () => {
    const last = page.getByRole('checkbox', { name: order.at(-1)!.title, exact: true });
    await expect
      .poll(
        async () => {
          await toBottom();
          return last.isVisible();
        },
        { timeout: 60_000, interval: 100 },
      )
      .toBe(true);
    await expect(last.isChecked()).resolves.toBe(false);
    // Every page is in: the last group's size is known and the last row is its last place.
    const li = page.locator(`main li[data-todo="${order.at(-1)!.id}"]`);
    expect(await li.getAttribute('aria-posinset')).toBe(await li.getAttribute('aria-setsize'));
    expect(Number(await li.getAttribute('aria-setsize'))).toBeGreaterThan(1);
    // Off-screen rows are gone: the first to-do is not in the DOM any more.
    expect(await page.locator(`main li[data-todo="${order[0]!.id}"]`).count()).toBe(0);
    expect(await rowsInDom()).toBeLessThanOrEqual(MAX_ROWS);
    expect(await maxRowsSeen()).toBeLessThanOrEqual(MAX_ROWS);
  }, 90_000);

  it('j/k walk the rows across the window, and j finds the next row after the list scrolled away', async () => {
    await page.evaluate('window.scrollTo(0, 0)');
    await page.getByRole('checkbox', { name: order[0]!.title, exact: true }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Anytime' }).click();
    await page.keyboard.press('j');
    await expect.poll(focused).toBe(order[0]!.title);
    // 80 rows down: past the first window (the rows in the DOM at the top are ~45).
    for (let k = 0; k < 80; k++) await page.keyboard.press('j');
    await expect.poll(focused, { timeout: 10_000 }).toBe(order[80]!.title);
    expect(await page.locator(`main li[data-todo="${order[0]!.id}"]`).count()).toBe(0);
    expect(await page.locator(`main li[data-todo="${order[80]!.id}"]`).getAttribute('class')).toMatch(/\bselected\b/);
    for (let k = 0; k < 3; k++) await page.keyboard.press('k');
    await expect.poll(focused).toBe(order[77]!.title);
    // Scroll far away: the selected row leaves the DOM; j still goes to the row after it.
    await toBottom();
    await expect.poll(() => page.locator(`main li[data-todo="${order[77]!.id}"]`).count()).toBe(0);
    await page.keyboard.press('j');
    await expect.poll(focused, { timeout: 10_000 }).toBe(order[78]!.title);
    await expect(page.getByRole('checkbox', { name: order[78]!.title, exact: true }).isVisible()).resolves.toBe(true);
    expect(await maxRowsSeen()).toBeLessThanOrEqual(MAX_ROWS);
    watch.assertClean();
  }, 90_000);
});
