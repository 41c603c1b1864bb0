// Issue 32 item 3 (docs/app.md "Notes, filters and files"): notes and note folders, saved
// filters, attachments and inbox captures in the web app, in a real Chromium (Debian's, driven by
// playwright-core as test/app/browser.app.test.ts does) through accessible names. Hostile note
// bodies and file names must show as text with no script run; no CSP violation may be reported;
// no request may carry the session token in its URL. A url capture's title is fetched from a
// loopback HTTPS page made at test time (every outbound connection is checked to be loopback).
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, openApp, signedInPage, ymd, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';
import { html, pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';
import type { ConnectAttempt, Resolver } from '../../core/net/index.js';
import { inboxTitlesSettled } from '../../routers/inbox/model.js';

const attempts: ConnectAttempt[] = [];
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

describe.skipIf(noChromium('content.app.test'))('notes, filters and files in the web app', () => {
  let app: TestApp;
  let site: PageServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  const dialogs: string[] = [];
  const urls: string[] = [];
  let token: string;
  const nav = () => page.getByRole('navigation', { name: 'Lists' });

  beforeAll(async () => {
    const cert = selfSignedCert();
    app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { linkTitleDeadlineMs: 3_000 }, { outbound: { resolver, ca: cert.cert, onConnect: (a) => attempts.push(a) } });
    site = await pageServer((req, res) => (req.url === '/article' ? html(res, '<html><head><title>Fetched &amp; titled</title></head><body>x</body></html>') : html(res, '<title>not here</title>', 404)), cert);
    browser = await launchBrowser();
    ({ page, watch, token } = await signedInPage(browser, app, { context: { acceptDownloads: true } }));
    page.on('request', (r) => urls.push(r.url()));
    // Only the filter deletion asks (confirm); any other dialog (an alert from a payload) is recorded.
    page.on('dialog', (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void (d.type() === 'confirm' ? d.accept() : d.dismiss());
    });
    await openApp(page, app);
    expect(await page.evaluate<string | null>("localStorage.getItem('cairn.session')")).toBe(token);
  }, 60_000);
  afterAll(async () => {
    await inboxTitlesSettled();
    await browser?.close();
    await site?.close();
    await app?.close();
    expect(attempts.filter((a) => a.address !== '127.0.0.1')).toEqual([]);
  });

  it('notes: a folder, a note with Markdown rendered, an edit, a version restored, a move, a rename, a folder trashed', async () => {
    await nav().getByRole('list', { name: 'Notes' }).getByRole('link', { name: 'Notes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Notes' }).waitFor();
    await page.getByRole('textbox', { name: 'New folder' }).fill('Recipes');
    await page.getByRole('button', { name: 'Create folder' }).click();
    // The new folder opens, and the sidebar lists it.
    await page.getByRole('heading', { level: 2, name: 'Notes in Recipes' }).waitFor();
    await nav().getByRole('list', { name: 'Notes' }).getByRole('link', { name: 'Recipes' }).waitFor();
    await page.getByLabel('New note title').fill('Soup');
    await page.getByLabel('New note body (Markdown)').fill('Boil **water**\n\n- salt\n- [pepper](https://example.test/pepper)');
    await page.getByRole('button', { name: 'Create note' }).click();
    const editor = page.getByRole('region', { name: 'Soup' });
    const preview = editor.getByRole('region', { name: 'Note preview' });
    await preview.waitFor();
    expect(await preview.locator('strong').textContent()).toBe('water');
    expect(await preview.locator('li').allTextContents()).toEqual(['salt', 'pepper']);
    expect(await preview.locator('a').getAttribute('href')).toBe('https://example.test/pepper');
    await page.getByRole('list', { name: 'Notes in Recipes' }).getByRole('button', { name: 'Soup' }).waitFor();

    // An edit saves on blur (a second version), and version 1 comes back with Restore.
    await editor.getByLabel('Body (Markdown)').fill('Boil *milk* instead');
    await editor.getByRole('button', { name: 'Versions' }).focus();
    await expect.poll(async () => (await call(app, 'GET', '/v1/notes', { token })).body.data[0]?.body, { timeout: 5000 }).toBe('Boil *milk* instead');
    expect(await preview.locator('em').textContent()).toBe('milk');
    await editor.getByRole('button', { name: 'Versions' }).click();
    const versions = editor.getByRole('list', { name: 'Versions' });
    await versions.getByRole('button', { name: 'Restore version 1' }).waitFor();
    await versions.getByRole('button', { name: 'Show version 1' }).click();
    await editor.getByRole('region', { name: 'Version 1' }).getByText('Boil **water**', { exact: false }).waitFor();
    await versions.getByRole('button', { name: 'Restore version 1' }).click();
    await expect.poll(() => preview.locator('strong').textContent(), { timeout: 5000 }).toBe('water');
    expect(await editor.getByLabel('Body (Markdown)').inputValue()).toContain('Boil **water**');
    await versions.getByRole('button', { name: 'Show version 3' }).waitFor();
    const noteId = (await call(app, 'GET', '/v1/notes', { token })).body.data[0].id as string;
    const vs = (await call(app, 'GET', `/v1/notes/${noteId}/versions`, { token })).body.data as { source: string }[];
    expect(vs.map((v) => v.source)).toEqual(['restore', 'edit', 'create']);

    // Rename the folder.
    await page.getByLabel('Folder name').fill('Kitchen');
    await page.getByRole('button', { name: 'Rename folder' }).click();
    await nav().getByRole('link', { name: 'Kitchen' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Notes in Kitchen' }).waitFor();

    // Move the note out of the folder: it leaves the folder's list and shows in "no folder".
    await page.getByRole('region', { name: 'Soup' }).getByLabel('Folder').selectOption({ label: 'No folder' });
    await page.getByRole('list', { name: 'Notes in Kitchen' }).getByRole('button', { name: 'Soup' }).waitFor({ state: 'detached' });
    expect((await call(app, 'GET', `/v1/notes/${noteId}`, { token })).body.folderId).toBeNull();
    await page.getByRole('list', { name: 'Folders' }).getByRole('link', { name: 'No folder' }).click();
    await page.getByRole('list', { name: 'Notes in no folder' }).getByRole('button', { name: 'Soup' }).waitFor();

    // And back into the folder from its editor.
    await page.getByRole('list', { name: 'Notes in no folder' }).getByRole('button', { name: 'Soup' }).click();
    await page.getByRole('region', { name: 'Soup' }).getByLabel('Folder').selectOption({ label: 'Kitchen' });
    await page.getByRole('list', { name: 'Notes in no folder' }).getByRole('button', { name: 'Soup' }).waitFor({ state: 'detached' });
    await page.getByRole('list', { name: 'Folders' }).getByRole('link', { name: 'Kitchen' }).click();
    await page.getByRole('list', { name: 'Notes in Kitchen' }).getByRole('button', { name: 'Soup' }).waitFor();

    // A folder to the Trash: it leaves the sidebar; the server has it trashed.
    await page.getByRole('textbox', { name: 'New folder' }).fill('Old stuff');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('heading', { level: 2, name: 'Notes in Old stuff' }).waitFor();
    await page.getByRole('button', { name: 'Move folder to Trash' }).click();
    await page.getByRole('heading', { level: 2, name: 'Notes in no folder' }).waitFor();
    await nav().getByRole('link', { name: 'Old stuff' }).waitFor({ state: 'detached' });
    const trashed = (await call(app, 'GET', '/v1/note-folders?include_trashed=true', { token })).body.data as { name: string; trashedAt: string | null }[];
    expect(trashed.find((f) => f.name === 'Old stuff')?.trashedAt).toBeTruthy();
    expect(trashed.find((f) => f.name === 'Kitchen')?.trashedAt).toBeNull();
  }, 90_000);

  it('a hostile note body shows as text: no script, no image, no SVG, no javascript: link', async () => {
    const body = ['# Hostile', '<script>window.__pwned = 1</script>', '<img src=x onerror="window.__pwned=2">', '[x](javascript:alert(1))', '[y](javascript:window.__pwned=3)', '<svg onload="window.__pwned=4"><circle r=5 /></svg>', '<svg><script>window.__pwned=5</script></svg>', '<div style="color:red" onclick="window.__pwned=6">styled</div>'].join('\n\n');
    await page.getByLabel('New note title').fill('Hostile note');
    await page.getByLabel('New note body (Markdown)').fill(body);
    await page.getByRole('button', { name: 'Create note' }).click();
    const editor = page.getByRole('region', { name: 'Hostile note' });
    const preview = editor.getByRole('region', { name: 'Note preview' });
    await preview.waitFor();
    // The raw HTML is there as text.
    await preview.getByText('<script>window.__pwned = 1</script>').waitFor();
    await preview.getByText('<img src=x onerror="window.__pwned=2">').waitFor();
    await preview.getByText('<svg onload="window.__pwned=4"><circle r=5 /></svg>').waitFor();
    expect(await preview.locator('h1').textContent()).toBe('Hostile');
    expect(await preview.locator('script, img, svg, [style], [onclick], [onerror], [onload]').count()).toBe(0);
    expect(await preview.locator('a[href^="javascript" i]').count()).toBe(0);
    expect(await page.locator('main script, main svg, main img').count()).toBe(0);
    // Whatever links are left (none may run anything) are clicked.
    for (const a of await preview.locator('a').all()) await a.click();
    expect(await page.evaluate<number | undefined>('window.__pwned')).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(watch.cspErrors).toEqual([]);
  }, 60_000);

  it('saved filters: created from the grammar, opened with its to-dos as rows, a bad one alerted, deleted', async () => {
    const today = ymd(new Date());
    for (const t of [{ title: 'Water the plants', tags: ['Garden'] }, { title: 'Mow the lawn', tags: ['Garden'], priority: 'high' }, { title: 'File the taxes', tags: ['Money'] }]) {
      expect((await call(app, 'POST', '/v1/todos', { token, body: { ...t, whenDate: today } })).status).toBe(201);
    }
    await nav().getByRole('list', { name: 'Filters' }).getByRole('link', { name: 'Filters' }).click();
    await page.getByRole('heading', { level: 1, name: 'Filters' }).waitFor();
    const form = page.getByRole('form', { name: 'New filter' });
    await form.getByLabel('Filter name').fill('Garden today');
    await form.getByLabel('Criteria').fill('#garden and (today or overdue) and not priority:high');
    await form.getByRole('button', { name: 'Create filter' }).click();
    const results = page.getByRole('list', { name: 'Results of Garden today' });
    await results.getByRole('checkbox', { name: 'Water the plants' }).waitFor();
    expect(await results.getByRole('checkbox').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')))).toEqual(['Water the plants']);
    await nav().getByRole('list', { name: 'Filters' }).getByRole('link', { name: 'Garden today' }).waitFor();
    // The rows are the app's rows: one opens in place.
    await results.getByRole('button', { name: 'Water the plants' }).click();
    await page.getByRole('region', { name: 'Water the plants' }).getByRole('button', { name: 'Close' }).click();

    // A criteria error from the server: an alert with its message (the column), nothing saved.
    await nav().getByRole('list', { name: 'Filters' }).getByRole('link', { name: 'Filters' }).click();
    await form.getByLabel('Filter name').fill('Broken');
    await form.getByLabel('Criteria').fill('#garden and (today');
    await form.getByRole('button', { name: 'Create filter' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/\/criteria: column \d+: expected "\)" to close the "\(" at column 13/);
    expect(await form.getByLabel('Criteria').getAttribute('aria-invalid')).toBe('true');
    expect(((await call(app, 'GET', '/v1/filters', { token })).body.data as { name: string }[]).map((f) => f.name)).toEqual(['Garden today']);

    // Delete (confirmed).
    await page.getByRole('list', { name: 'Saved filters' }).getByRole('button', { name: 'Delete filter Garden today' }).click();
    await page.getByRole('list', { name: 'Saved filters' }).getByText('No saved filters yet.').waitFor();
    await nav().getByRole('link', { name: 'Garden today' }).waitFor({ state: 'detached' });
    expect((await call(app, 'GET', '/v1/filters', { token })).body.data).toEqual([]);
    expect(dialogs).toEqual(['confirm: Delete the filter “Garden today”?']);
    dialogs.length = 0;
  }, 60_000);

  it('attachments: upload by drop and by the file input, download the same bytes, a hostile name as text, delete', async () => {
    expect((await call(app, 'POST', '/v1/todos', { token, body: { title: 'Keep the receipts', whenDate: ymd(new Date()) } })).status).toBe(201);
    await nav().getByRole('link', { name: 'Today' }).click();
    await page.getByRole('button', { name: 'Keep the receipts' }).click();
    const editor = page.getByRole('region', { name: 'Keep the receipts' });
    await editor.getByRole('group', { name: 'Attachments' }).waitFor();

    // Drop: a DataTransfer built in the page, holding every byte value, dropped on the editor.
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    // (Page code as a string: this file is type-checked without the DOM library.)
    const dataTransfer = await page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(${JSON.stringify([...bytes])})], 'bytes.bin', { type: 'application/octet-stream' }));
      return dt;
    })()`);
    await editor.getByLabel('Title', { exact: true }).dispatchEvent('drop', { dataTransfer });
    const list = editor.getByRole('list', { name: 'Attachments' });
    await list.getByText('bytes.bin').waitFor();
    await list.getByText('256 bytes').waitFor();

    // The file input, with a hostile name.
    const hostile = '<img src=x onerror=alert(1)>.txt';
    const text = Buffer.from('hello from a hostile name\n');
    await editor.getByLabel('Attach files').setInputFiles({ name: hostile, mimeType: 'text/plain', buffer: text });
    await list.getByText(hostile, { exact: true }).waitFor();
    expect(await page.locator('main img').count()).toBe(0);

    const todoId = ((await call(app, 'GET', '/v1/todos', { token })).body.data as { id: string; title: string }[]).find((t) => t.title === 'Keep the receipts')!.id;
    const stored = (await call(app, 'GET', `/v1/attachments?parent_id=${todoId}`, { token })).body.data as { title: string; size: number; contentType: string }[];
    // (Creation order; both were made at the same instant of the test's manual clock, so sorted here.)
    expect(stored.map((a) => [a.title, a.size, a.contentType]).sort()).toEqual([
      [hostile, text.length, 'text/plain'],
      ['bytes.bin', 256, 'application/octet-stream'],
    ]);

    // Downloads carry the credential in a header, and come back byte for byte.
    for (const [name, want] of [['bytes.bin', bytes], [hostile, text]] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), list.getByRole('button', { name: `Download ${name}` }).click()]);
      if (name === 'bytes.bin') expect(download.suggestedFilename()).toBe(name);
      expect(readFileSync((await download.path())!)).toEqual(want);
    }
    expect(await page.evaluate<number | undefined>('window.__pwned')).toBeUndefined();

    await list.getByRole('button', { name: 'Delete attachment bytes.bin' }).click();
    await list.getByText('bytes.bin').waitFor({ state: 'detached' });
    expect(((await call(app, 'GET', `/v1/attachments?parent_id=${todoId}`, { token })).body.data as { title: string }[]).map((a) => a.title)).toEqual([hostile]);
    await editor.getByRole('button', { name: 'Close' }).click();
  }, 60_000);

  it('inbox: a text capture, a file capture (input and drop) and a url capture with its fetched title, each made a to-do', async () => {
    await nav().getByRole('link', { name: 'Inbox' }).click();
    const captures = page.getByRole('list', { name: 'Captures' });
    await page.getByRole('textbox', { name: 'New capture' }).fill('Buy stamps');
    await page.getByRole('textbox', { name: 'New capture' }).press('Enter');
    await captures.getByText('Buy stamps').waitFor();

    // A file by the input, one by drop on the inbox.
    await page.getByLabel('Capture files').setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 not really') });
    await captures.getByText('scan.pdf').waitFor();
    const dataTransfer = await page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped words'], 'dropped.txt', { type: 'text/plain' }));
      return dt;
    })()`);
    await captures.dispatchEvent('drop', { dataTransfer });
    await captures.getByText('dropped.txt').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), captures.getByRole('button', { name: 'Download dropped.txt' }).click()]);
    expect(readFileSync((await download.path())!, 'utf8')).toBe('dropped words');

    // A url: the server fetches its title after the capture answers; the inbox shows it.
    const url = `${site.origin}/article`;
    await page.getByRole('textbox', { name: 'New capture' }).fill(url);
    await page.getByRole('textbox', { name: 'New capture' }).press('Enter');
    await captures.getByText('Fetched & titled').waitFor({ timeout: 10_000 });
    await captures.getByRole('link', { name: url }).waitFor();

    for (const name of ['Buy stamps', 'scan.pdf', 'Fetched & titled']) {
      await captures.getByRole('button', { name: `Make a to-do of ${name}` }).click();
      await captures.getByText(name).waitFor({ state: 'detached' });
    }
    await nav().getByRole('link', { name: 'Anytime' }).click();
    await page.getByRole('checkbox', { name: 'Buy stamps' }).waitFor();
    // The file moved with its capture: the to-do's attachment.
    await page.getByRole('button', { name: 'scan.pdf' }).click();
    // The file keeps its name (the capture's title is its attachment's too).
    const moved = page.getByRole('region', { name: 'scan.pdf' }).getByRole('list', { name: 'Attachments' });
    await moved.getByRole('button', { name: 'Download scan.pdf' }).waitFor();
    await moved.getByText('19 bytes').waitFor();
    await page.getByRole('region', { name: 'scan.pdf' }).getByRole('button', { name: 'Close' }).click();
    // The url is kept as a url attachment of its to-do, a link.
    await page.getByRole('button', { name: 'Fetched & titled' }).click();
    const link = page.getByRole('region', { name: 'Fetched & titled' }).getByRole('list', { name: 'Attachments' }).getByRole('link', { name: 'Fetched & titled' });
    expect(await link.getAttribute('href')).toBe(url);
  }, 60_000);

  it('reported no CSP violation, no page error, no dialog, and never put the token in a URL', () => {
    watch.assertClean();
    expect(dialogs).toEqual([]);
    expect(urls.filter((u) => u.includes(token))).toEqual([]);
    // The file routes were used (upload and download) alongside /trpc.
    expect(urls.some((u) => u.includes('/v1/attachments/files'))).toBe(true);
    expect(urls.some((u) => /\/v1\/attachments\/[^/]+\/file$/.test(u))).toBe(true);
    expect(urls.some((u) => u.includes('/v1/inbox/files'))).toBe(true);
  });
});
