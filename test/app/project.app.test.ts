// Issue 32 items 3 and 4 (docs/app.md "Projects, headings and drag"): areas and projects created
// from the sidebar, a project page's headings (rename, reorder, convert to a subproject, complete),
// its notes, completing the project, and to-dos dragged (HTML5 drag and drop, through
// playwright's dragTo) within a heading, across headings and onto a sidebar project, checked over
// /v1 and after a reload. Real Chromium, real server; no CSP violation may be reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, noChromium, openApp, signedInPage, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

type TodoOut = { id: string; title: string; parentId: string | null; headingId: string | null; status: string };
type HeadingOut = { id: string; name: string };

describe.skipIf(noChromium('project.app.test'))('project page, headings and drag in chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let token: string;
  let projectId: string;
  const ids: Record<string, string> = {};

  const todosOf = async (parentId: string) => (await call(app, 'GET', `/v1/todos?parent_id=${parentId}&limit=200`, { token })).body.data as TodoOut[];
  const headingsOf = async (parentId: string) => (await call(app, 'GET', `/v1/headings?project_id=${parentId}&limit=200`, { token })).body.data as HeadingOut[];
  /** Titles under a heading (or none) in the order /v1 keeps them. */
  const orderOver = async (headingId: string | null) => (await todosOf(projectId)).filter((t) => t.headingId === headingId && t.status === 'open').map((t) => t.title);
  /** The rows' titles as the page shows them (the row's own checkbox, not an open editor's boxes). */
  const shown = (list: Locator) => list.locator(':scope > li > .row > input[type=checkbox]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
  const row = (list: Locator, title: string) => list.getByRole('listitem').filter({ has: page.getByRole('checkbox', { name: title, exact: true }) });
  const nav = () => page.getByRole('navigation', { name: 'Lists' });

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ page, watch, token } = await signedInPage(browser, app));
    page.setDefaultTimeout(10_000);
    await openApp(page, app);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('creates an area and a project in it from the sidebar; the area page lists the project', async () => {
    await nav().getByRole('textbox', { name: 'New area' }).fill('Home');
    await nav().getByRole('textbox', { name: 'New area' }).press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    await nav().getByRole('combobox', { name: 'Area of the new project' }).selectOption({ label: 'Home' });
    await nav().getByRole('textbox', { name: 'New project' }).fill('House');
    await nav().getByRole('textbox', { name: 'New project' }).press('Enter');
    await page.getByRole('heading', { level: 1, name: 'House' }).waitFor();
    projectId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
    const containers = (await call(app, 'GET', '/v1/containers', { token })).body.data as { id: string; kind: string; name: string; parentId: string | null }[];
    const area = containers.find((c) => c.name === 'Home')!;
    expect(area.kind).toBe('area');
    expect(containers.find((c) => c.id === projectId)).toMatchObject({ kind: 'project', name: 'House', parentId: area.id });
    // The sidebar shows it in its area; the area page lists it.
    await nav().getByRole('list', { name: 'Home' }).getByRole('link', { name: 'House' }).waitFor();
    await nav().getByRole('link', { name: 'Home' }).click();
    await page.getByRole('list', { name: 'Projects in this area' }).getByRole('link', { name: 'House' }).click();
    await page.getByRole('heading', { level: 1, name: 'House' }).waitFor();
  }, 60_000);

  it('two headings with to-dos; a drag from one heading onto a row of the other moves it there, before that row, and it stays after a reload', async () => {
    for (const name of ['Kitchen', 'Garage']) {
      await page.getByRole('textbox', { name: 'New heading' }).fill(name);
      await page.getByRole('textbox', { name: 'New heading' }).press('Enter');
      await page.getByRole('heading', { level: 2, name }).waitFor();
    }
    const [kitchen, garage] = await headingsOf(projectId);
    expect([kitchen!.name, garage!.name]).toEqual(['Kitchen', 'Garage']);
    ids.kitchen = kitchen!.id;
    ids.garage = garage!.id;
    for (const [title, headingId] of [['Wash dishes', kitchen!.id], ['Clean oven', kitchen!.id], ['Empty fridge', kitchen!.id], ['Sweep floor', garage!.id], ['Fix bike', garage!.id]] as const) {
      const r = await call(app, 'POST', '/v1/todos', { token, body: { title, parentId: projectId, headingId } });
      expect(r.status).toBe(201);
      ids[title] = r.body.id;
    }
    await page.reload();
    const kitchenList = page.getByRole('list', { name: 'Kitchen' });
    const garageList = page.getByRole('list', { name: 'Garage' });
    await expect.poll(() => shown(garageList)).toEqual(['Sweep floor', 'Fix bike']);
    expect(await shown(kitchenList)).toEqual(['Wash dishes', 'Clean oven', 'Empty fridge']);

    // Onto the upper part of "Fix bike" under Garage: before it, under Garage.
    await kitchenList.getByRole('button', { name: 'Wash dishes' }).dragTo(row(garageList, 'Fix bike'), { targetPosition: { x: 30, y: 3 } });
    await expect.poll(() => orderOver(ids.garage!)).toEqual(['Sweep floor', 'Wash dishes', 'Fix bike']);
    expect(await orderOver(ids.kitchen!)).toEqual(['Clean oven', 'Empty fridge']);
    const moved = (await call(app, 'GET', `/v1/todos/${ids['Wash dishes']}`, { token })).body as TodoOut;
    expect(moved).toMatchObject({ parentId: projectId, headingId: ids.garage });
    await page.reload();
    await expect.poll(() => shown(garageList)).toEqual(['Sweep floor', 'Wash dishes', 'Fix bike']);
    expect(await shown(kitchenList)).toEqual(['Clean oven', 'Empty fridge']);

    // Onto the heading itself: to the end of that heading.
    await garageList.getByRole('button', { name: 'Sweep floor' }).dragTo(page.getByRole('heading', { level: 2, name: 'Kitchen' }));
    await expect.poll(() => orderOver(ids.kitchen!)).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
    await expect.poll(() => shown(kitchenList)).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
    expect(await orderOver(ids.garage!)).toEqual(['Wash dishes', 'Fix bike']);
  }, 60_000);

  it('reorders within a heading by drag (before and after a row), the order kept over /v1', async () => {
    const kitchenList = page.getByRole('list', { name: 'Kitchen' });
    // "Sweep floor" onto the upper half of "Clean oven": first.
    await kitchenList.getByRole('button', { name: 'Sweep floor' }).dragTo(row(kitchenList, 'Clean oven'), { targetPosition: { x: 30, y: 3 } });
    await expect.poll(() => orderOver(ids.kitchen!)).toEqual(['Sweep floor', 'Clean oven', 'Empty fridge']);
    await expect.poll(() => shown(kitchenList)).toEqual(['Sweep floor', 'Clean oven', 'Empty fridge']);
    // "Sweep floor" onto the lower half of "Empty fridge": last.
    const box = (await row(kitchenList, 'Empty fridge').boundingBox())!;
    await kitchenList.getByRole('button', { name: 'Sweep floor' }).dragTo(row(kitchenList, 'Empty fridge'), { targetPosition: { x: 30, y: box.height - 3 } });
    await expect.poll(() => orderOver(ids.kitchen!)).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
    await page.reload();
    await expect.poll(() => shown(page.getByRole('list', { name: 'Kitchen' }))).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
  }, 60_000);

  it('keyboard: Ctrl+↓ on the last row of a heading moves it into the next heading, Ctrl+↑ on the first back; m opens the move selects and the Heading one moves it', async () => {
    const kitchenList = page.getByRole('list', { name: 'Kitchen' });
    await kitchenList.getByRole('checkbox', { name: 'Sweep floor' }).focus();
    await page.keyboard.press('Control+ArrowDown');
    await expect.poll(() => orderOver(ids.garage!)).toEqual(['Sweep floor', 'Wash dishes', 'Fix bike']);
    const garageList = page.getByRole('list', { name: 'Garage' });
    await expect.poll(() => shown(garageList)).toEqual(['Sweep floor', 'Wash dishes', 'Fix bike']);
    // And Ctrl+↑ on the first row of Garage: back to the end of Kitchen.
    await garageList.getByRole('checkbox', { name: 'Sweep floor' }).focus();
    await page.keyboard.press('Control+ArrowUp');
    await expect.poll(() => orderOver(ids.kitchen!)).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
    // `m`: the editor opens at its Project select; the Heading select beside it moves it.
    await expect.poll(() => shown(kitchenList)).toEqual(['Clean oven', 'Empty fridge', 'Sweep floor']);
    await kitchenList.getByRole('checkbox', { name: 'Sweep floor' }).focus();
    await page.keyboard.press('m');
    const editor = page.getByRole('region', { name: 'Sweep floor' });
    await expect.poll(() => editor.getByRole('combobox', { name: /^Project/ }).evaluate((e) => e === e.ownerDocument.activeElement)).toBe(true);
    // Tab past Priority to the Heading select; ↓ picks the next heading (Garage) from the keyboard.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const headingSelect = editor.getByRole('combobox', { name: /^Heading/ });
    expect(await headingSelect.evaluate((e) => e === e.ownerDocument.activeElement)).toBe(true);
    expect(await headingSelect.evaluate((e) => (e as unknown as { selectedOptions: { text: string }[] }).selectedOptions[0]!.text)).toBe('Kitchen');
    await page.keyboard.press('ArrowDown');
    await expect.poll(async () => ((await call(app, 'GET', `/v1/todos/${ids['Sweep floor']}`, { token })).body as TodoOut).headingId).toBe(ids.garage);
    await page.getByRole('region', { name: 'Sweep floor' }).getByRole('button', { name: 'Close' }).click();
  }, 60_000);

  it('renames a heading (button and double-click) and reorders headings (button and drag)', async () => {
    await page.getByRole('button', { name: 'Rename heading Kitchen' }).click();
    const nameBox = page.getByRole('textbox', { name: 'Heading name' });
    await nameBox.fill('Cooking');
    await nameBox.press('Enter');
    await page.getByRole('heading', { level: 2, name: 'Cooking' }).waitFor();
    await expect.poll(async () => (await headingsOf(projectId)).map((h) => h.name)).toEqual(['Cooking', 'Garage']);
    await page.getByRole('heading', { level: 2, name: 'Garage' }).dblclick();
    await nameBox.fill('Workshop');
    await nameBox.press('Enter');
    await expect.poll(async () => (await headingsOf(projectId)).map((h) => h.name)).toEqual(['Cooking', 'Workshop']);
    // The to-dos stay under the renamed heading.
    await expect.poll(() => shown(page.getByRole('list', { name: 'Workshop' }))).toEqual(['Wash dishes', 'Fix bike', 'Sweep floor']);
    await page.getByRole('button', { name: 'Move heading Workshop up' }).click();
    await expect.poll(async () => (await headingsOf(projectId)).map((h) => h.name)).toEqual(['Workshop', 'Cooking']);
    await page.getByRole('heading', { level: 2, name: 'Cooking' }).waitFor();
    expect(await page.getByRole('heading', { level: 2 }).allTextContents()).toEqual(['Workshop', 'Cooking']);
    // Drag the Workshop heading below Cooking's section.
    const cooking = page.getByRole('region', { name: 'Cooking' });
    const box = (await cooking.boundingBox())!;
    await page.getByRole('heading', { level: 2, name: 'Workshop' }).dragTo(cooking, { targetPosition: { x: 40, y: box.height - 4 } });
    await expect.poll(async () => (await headingsOf(projectId)).map((h) => h.name)).toEqual(['Cooking', 'Workshop']);
    await expect.poll(() => page.getByRole('heading', { level: 2 }).allTextContents()).toEqual(['Cooking', 'Workshop']);
  }, 60_000);

  it('edits the project notes (rendered as Markdown, raw HTML as text)', async () => {
    await page.getByRole('button', { name: 'Add notes' }).click();
    await page.getByRole('textbox', { name: 'Project notes (Markdown)' }).fill('Keep **receipts** <script>window.__pwned=1</script>');
    await page.getByRole('button', { name: 'Save notes' }).click();
    const notes = page.getByRole('region', { name: 'Project notes' });
    await notes.locator('strong', { hasText: 'receipts' }).waitFor();
    expect(await notes.locator('script').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(((await call(app, 'GET', `/v1/containers/${projectId}`, { token })).body as { notes: string }).notes).toBe('Keep **receipts** <script>window.__pwned=1</script>');
  }, 60_000);

  it('converts a heading to a subproject, shown as a link that opens it', async () => {
    await page.getByRole('button', { name: 'Convert Workshop to a subproject' }).click();
    const link = page.getByRole('list', { name: 'Subprojects' }).getByRole('link', { name: 'Workshop' });
    await link.waitFor();
    expect((await headingsOf(projectId)).map((h) => h.name)).toEqual(['Cooking']);
    const sub = ((await call(app, 'GET', '/v1/containers', { token })).body.data as { id: string; kind: string; name: string; parentId: string }[]).find((c) => c.name === 'Workshop')!;
    expect(sub).toMatchObject({ kind: 'subproject', parentId: projectId });
    expect((await todosOf(sub.id)).map((t) => t.title)).toEqual(['Wash dishes', 'Fix bike', 'Sweep floor']);
    await link.click();
    await page.getByRole('heading', { level: 1, name: 'Workshop' }).waitFor();
    await page.getByRole('list', { name: 'Workshop' }).getByRole('checkbox', { name: 'Fix bike' }).waitFor();
    // A subproject holds no subprojects: its headings offer no convert.
    await page.getByRole('textbox', { name: 'New heading' }).fill('Parts');
    await page.getByRole('textbox', { name: 'New heading' }).press('Enter');
    await page.getByRole('button', { name: 'Rename heading Parts' }).waitFor();
    expect(await page.getByRole('button', { name: /^Convert/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'House' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'House' }).waitFor();
  }, 60_000);

  it('drags a to-do onto a project in the sidebar: it moves there', async () => {
    const r = await call(app, 'POST', '/v1/containers', { token, body: { kind: 'project', name: 'Errands' } });
    const errands = r.body.id as string;
    const target = nav().getByRole('link', { name: 'Errands' });
    await target.waitFor();
    const cooking = page.getByRole('list', { name: 'Cooking' });
    await cooking.getByRole('button', { name: 'Empty fridge' }).dragTo(target);
    await expect.poll(async () => ((await call(app, 'GET', `/v1/todos/${ids['Empty fridge']}`, { token })).body as TodoOut).parentId).toBe(errands);
    await expect.poll(() => shown(cooking)).toEqual(['Clean oven']);
    await target.click();
    await page.getByRole('list', { name: 'Errands' }).getByRole('checkbox', { name: 'Empty fridge' }).waitFor();
  }, 60_000);

  it('completes a heading, then the project (its to-dos and subproject); it leaves the sidebar', async () => {
    await nav().getByRole('link', { name: 'House' }).click();
    await page.getByRole('heading', { level: 1, name: 'House' }).waitFor();
    await page.getByRole('button', { name: 'Complete the to-dos of Cooking' }).click();
    await expect.poll(async () => (await todosOf(projectId)).map((t) => `${t.title}:${t.status}`)).toEqual(['Clean oven:completed']);
    await page.getByRole('button', { name: 'Complete project' }).click();
    await page.getByRole('group', { name: 'Complete the project?' }).getByRole('button', { name: 'Complete them and the project' }).click();
    await page.getByRole('status').filter({ hasText: 'This project is completed' }).waitFor();
    const containers = (await call(app, 'GET', '/v1/containers', { token })).body.data as { name: string; status: string }[];
    expect(containers.filter((c) => c.name === 'House' || c.name === 'Workshop').map((c) => c.status)).toEqual(['archived', 'archived']);
    const sub = containers.find((c) => c.name === 'Workshop') as unknown as { id: string };
    expect((await todosOf(sub.id)).every((t) => t.status === 'completed')).toBe(true);
    await nav().getByRole('link', { name: 'House' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Reopen project' }).click();
    await nav().getByRole('link', { name: 'House' }).waitFor();
  }, 60_000);

  it('reported no CSP violation and no page error', () => {
    watch.assertClean();
  });
});
