// Issue 32 item 7: WCAG AA contrast in the light and the dark theme (the app follows the system
// setting). In a real Chromium, for every view (and a to-do opened in place, the sign-in form and
// the shortcuts dialog), every visible element that holds text is checked: its computed colour
// against the background it is painted on (the first opaque background up its ancestors, layered
// over white or the page's background), at 4.5:1, or 3:1 for large text (≥ 24 px, or ≥ 18.66 px
// bold), as WCAG 2.x 1.4.3 counts it. Disabled controls and placeholders are exempt there too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, signedInPage, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

type Low = { text: string; ratio: number; need: number; fg: string; bg: string; tag: string };

/** Runs in the page: every text-bearing element under `root` whose contrast is below AA. */
const AUDIT = `(() => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const canvas = (() => {
    for (const el of [document.body, document.documentElement]) {
      const c = parse(getComputedStyle(el).backgroundColor);
      if (c && c.a > 0) return over(c, { r: 255, g: 255, b: 255, a: 1 });
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  })();
  const backgroundOf = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = canvas;
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const low = [];
  let checked = 0;
  for (const el of document.querySelectorAll('body *')) {
    if (!(el instanceof HTMLElement)) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const isField = (el.tagName === 'INPUT' && !['checkbox', 'radio', 'hidden', 'file'].includes(el.type) && el.value) || (el.tagName === 'TEXTAREA' && el.value) || (el.tagName === 'SELECT');
    if (!own && !isField) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || cs.display === 'none' || Number(cs.opacity) === 0) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    if (el.closest('[disabled], [aria-disabled="true"]')) continue;
    const fg0 = parse(cs.color);
    if (!fg0) continue;
    const bg = backgroundOf(el);
    const fg = over(fg0, bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(cs.fontSize);
    const bold = Number(cs.fontWeight) >= 700;
    checked++;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio + 1e-6 < need) low.push({ text: (el.innerText || el.value || '').trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100, need, fg: cs.color, bg: 'rgb(' + [bg.r, bg.g, bg.b].map(Math.round).join(',') + ')', tag: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') });
  }
  return { low, checked };
})()`;

describe.skipIf(noChromium('contrast.app.test'))('WCAG AA contrast, light and dark', () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let token: string;

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ page, watch, token } = await signedInPage(browser, app));
    // Content in every kind of row and badge the views show.
    const post = async (path: string, body: unknown) => {
      const r = await call(app, 'POST', path, { token, body });
      expect(r.status, r.text).toBeLessThan(300);
      return r.body as { id: string };
    };
    const project = await post('/v1/containers', { kind: 'project', name: 'Contrast project', notes: 'Some **notes** with [a link](https://example.test)' });
    await post('/v1/headings', { projectId: project.id, name: 'A heading' });
    const today = new Date();
    const ymd = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    await post('/v1/todos', { title: 'Due and tagged', whenDate: ymd, deadline: ymd, tags: ['Errands'], priority: 'high', checklist: [{ title: 'one' }, { title: 'two' }], parentId: project.id });
    await post('/v1/todos', { title: 'In the evening', whenDate: ymd, evening: true });
    await post('/v1/todos', { title: 'Some day', someday: true });
    const done = await post('/v1/todos', { title: 'Finished one', whenDate: ymd });
    await call(app, 'POST', `/v1/todos/${done.id}/complete`, { token });
    await post('/v1/inbox', { kind: 'text', text: 'A captured thought' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`every view passes in the ${scheme} theme`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      const failures: (Low & { where: string })[] = [];
      const audit = async (where: string) => {
        await page.locator('main').getByText('Loading…').first().waitFor({ state: 'detached', timeout: 10_000 }).catch(() => {});
        const r = (await page.evaluate(AUDIT)) as { low: Low[]; checked: number };
        // Not vacuous: the view's sidebar, heading and content were looked at.
        expect(r.checked, where).toBeGreaterThanOrEqual(10);
        for (const l of r.low) failures.push({ where, ...l });
      };
      await page.goto(`${app.url}/app#/today`);
      await page.getByRole('heading', { level: 1, name: 'Today' }).waitFor();
      for (const view of ['Inbox', 'Today', 'Upcoming', 'Anytime', 'Someday', 'Logbook', 'Trash', 'Contrast project', 'Settings']) {
        await page.getByRole('navigation').getByRole('link', { name: view, exact: true }).first().click();
        await page.getByRole('heading', { level: 1, name: view }).waitFor();
        await audit(view);
      }
      // A to-do opened in place (its editor, badges and the notes preview).
      await page.getByRole('navigation').getByRole('link', { name: 'Today', exact: true }).click();
      await page.getByRole('button', { name: 'Due and tagged' }).click();
      await page.getByRole('region', { name: 'Due and tagged' }).waitFor();
      await audit('editor');
      // The shortcuts dialog.
      await page.keyboard.press('Escape');
      await page.locator('body').click({ position: { x: 1, y: 1 } });
      await page.keyboard.press('?');
      await page.getByRole('dialog').first().waitFor();
      await audit('shortcuts');
      await page.keyboard.press('Escape');
      expect(failures, JSON.stringify(failures, null, 1)).toEqual([]);
      watch.assertClean();
    }, 90_000);
  }

  it('the audit catches low contrast (light grey on white)', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    const p2 = await browser.newPage();
    await p2.setContent('<main style="background:#fff"><p style="color:#bbb">faint text</p><p style="color:#767676">just enough</p></main>');
    const { low, checked } = (await p2.evaluate(AUDIT)) as { low: Low[]; checked: number };
    expect(checked).toBe(2);
    expect(low.map((l) => l.text)).toEqual(['faint text']);
    await p2.close();
  });
});
