// Issue 32 loose ends in a real Chromium (docs/app.md "Keyboard", "The editor", "Notes, filters
// and files"): the `?` list names every shortcut the app has, the editor's Project select leaves
// out completed (archived) projects but keeps the to-do's own, the repeat picker's day boxes and
// basis radios sit on the line of their names, a trashed note folder is restored from the Trash,
// and a file captured in the Inbox keeps its name once made a to-do. No CSP violation may be
// reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, signedInPage, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

describe.skipIf(noChromium('details.app.test'))('shortcuts, the project select, the repeat picker, folder restore, file names', () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let token: string;
  const nav = () => page.getByRole('navigation', { name: 'Lists' });
  const post = async (path: string, body?: unknown) => {
    const r = await call(app, 'POST', path, { token, ...(body !== undefined ? { body } : {}) });
    expect(r.status, r.text).toBeLessThan(300);
    return r.body;
  };
  /** Opens a to-do found by search in place and answers its editor. */
  const openBySearch = async (title: string): Promise<Locator> => {
    await page.goto(`${app.url}/app#/search/${encodeURIComponent(title)}`);
    await page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: title }).click();
    const editor = page.getByRole('region', { name: title });
    await editor.waitFor();
    return editor;
  };

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ page, watch, token } = await signedInPage(browser, app));
    await page.goto(`${app.url}/app`);
    await nav().getByRole('link', { name: 'Today' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('`?` lists every shortcut, the reorder keys included', async () => {
    await page.locator('body').press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    const keys = await dialog.locator('dt').allTextContents();
    for (const k of ['n', 'x', 't', 'e', 's', 'd', 'm', 'Enter', '1–6', 'j / k', 'Ctrl/⌘+↑ / ↓', 'Alt+↑ / ↓', '/', 'Ctrl/⌘+K', '?', 'Esc']) expect(keys).toContain(k);
    const says = (k: string) => dialog.locator('dl > div', { has: page.locator('dt').getByText(k, { exact: true }) }).locator('dd').textContent();
    expect(await says('Ctrl/⌘+↑ / ↓')).toMatch(/heading/);
    expect(await says('Alt+↑ / ↓')).toMatch(/checklist item/);
    expect(await says('m')).toMatch(/heading/);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    watch.assertClean();
  }, 30_000);

  it('the Project select leaves out completed projects, but shows the to-do’s own when it is one', async () => {
    const live = await post('/v1/containers', { kind: 'project', name: 'Garden' });
    const done = await post('/v1/containers', { kind: 'project', name: 'Old move' });
    await post('/v1/todos', { title: 'Standalone chore' });
    await post('/v1/todos', { title: 'Leftover box', parentId: done.id });
    await post(`/v1/containers/${done.id}/archive`);

    let editor = await openBySearch('Standalone chore');
    // The label holds the select, so its name ends with the chosen option ("Project No project").
    const select = (ed: Locator) => ed.getByRole('combobox', { name: /^Project\b/ });
    const options = (ed: Locator) => select(ed).locator('option').allTextContents();
    // The page learns of the API's changes live (docs/app.md "Live updates"): wait for them.
    await expect.poll(() => options(editor), { timeout: 5000 }).toEqual(['No project', 'Garden']);

    editor = await openBySearch('Leftover box');
    await expect.poll(() => options(editor), { timeout: 5000 }).toEqual(['No project', 'Garden', 'Old move']);
    expect(await select(editor).inputValue()).toBe(done.id);
    // Moving it out leaves the completed project behind for good.
    await select(editor).selectOption({ label: 'Garden' });
    await expect.poll(async () => (await call(app, 'GET', '/v1/todos', { token })).body.data.find((t: { title: string }) => t.title === 'Leftover box')?.parentId, { timeout: 5000 }).toBe(live.id);
    await expect.poll(() => options(editor), { timeout: 5000 }).toEqual(['No project', 'Garden']);
    watch.assertClean();
  }, 60_000);

  it('the repeat picker: each day box and basis radio is on the line of its name, box first', async () => {
    const editor = await openBySearch('Standalone chore');
    await editor.getByLabel('Repeat rule').selectOption({ label: 'Weekly' });
    const sideBySide = async (control: Locator, name: string) => {
      const box = (await control.boundingBox())!;
      const label = (await editor.locator('label', { hasText: new RegExp(`^${name}$`) }).boundingBox())!;
      // The name starts right of the box and their vertical middles meet.
      expect(label.x, name).toBeGreaterThanOrEqual(box.x + box.width);
      expect(Math.abs(label.y + label.height / 2 - (box.y + box.height / 2)), name).toBeLessThan(4);
    };
    const days = editor.getByRole('group', { name: 'On days' });
    await sideBySide(days.getByRole('checkbox', { name: 'Monday' }), 'Mon');
    await sideBySide(days.getByRole('checkbox', { name: 'Sunday' }), 'Sun');
    await sideBySide(editor.getByRole('radio', { name: 'On a fixed schedule' }), 'On a fixed schedule');
    await sideBySide(editor.getByRole('radio', { name: 'After completion' }), 'After completion');
    // The labels still name their controls: a click on a name checks its box.
    await editor.locator('label', { hasText: /^Wed$/ }).click();
    expect(await days.getByRole('checkbox', { name: 'Wednesday' }).isChecked()).toBe(true);
    watch.assertClean();
  }, 30_000);

  it('a trashed note folder has Restore in the Trash: it comes back with its notes', async () => {
    const folder = await post('/v1/note-folders', { name: 'Receipts 2024' });
    await post('/v1/notes', { title: 'Hardware store', body: 'Screws and hinges', folderId: folder.id });
    await post(`/v1/note-folders/${folder.id}/trash`);
    await page.goto(`${app.url}/app#/trash`);
    const trash = page.getByRole('list', { name: 'Trash' });
    await trash.getByText('Receipts 2024').waitFor();
    await trash.getByRole('button', { name: 'Restore Receipts 2024' }).click();
    await trash.getByText('Receipts 2024').waitFor({ state: 'detached' });
    expect((await call(app, 'GET', `/v1/note-folders/${folder.id}`, { token })).body.trashedAt).toBeNull();
    await nav().getByRole('list', { name: 'Notes' }).getByRole('link', { name: 'Receipts 2024' }).click();
    await page.getByRole('list', { name: 'Notes in Receipts 2024' }).getByRole('button', { name: 'Hardware store' }).waitFor();
    watch.assertClean();
  }, 30_000);

  it('a file captured in the Inbox keeps its name on the to-do’s attachment', async () => {
    await page.goto(`${app.url}/app#/inbox`);
    await page.getByLabel('Capture files').setInputFiles({ name: 'Lease scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 lease') });
    const captures = page.getByRole('list', { name: 'Captures' });
    await captures.getByRole('button', { name: 'Make a to-do of Lease scan.pdf' }).click();
    await captures.getByText('Lease scan.pdf').waitFor({ state: 'detached' });
    const editor = await openBySearch('Lease scan.pdf');
    const attachments = editor.getByRole('list', { name: 'Attachments' });
    await attachments.getByRole('button', { name: 'Download Lease scan.pdf' }).waitFor();
    expect(await attachments.getByText('Unnamed file').count()).toBe(0);
    watch.assertClean();
  }, 30_000);
});
