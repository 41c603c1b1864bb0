// The to-do editor and quick entry in a real Chromium (issue 32 items 3 and 4; docs/app.md "The
// editor", "Quick entry", "Optimistic updates"): `every monday` in quick entry, recurrence set from
// the picker and shown in words, a refused raw RRULE as an alert, the checklist reordered by button
// and by Alt+↑, renamed and deleted, an optimistic change refused by the server rolled back with
// an alert, and the week start kept across a reload. No CSP violation may be reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page, Route } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { focusedLabel, launchBrowser, noChromium, openApp, shot, signedInPage, ymd, type PageWatch } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

/** The first date on or after today (local) that falls on `day` (0 = Sunday). */
function nextDay(day: number): string {
  const d = new Date();
  d.setDate(d.getDate() + ((day - d.getDay() + 7) % 7));
  return ymd(d);
}

type V1Todo = { id: string; title: string; whenDate: string | null; tags: string[]; recurrence: { rule: string; basis: string } | null; checklist: { id: string; title: string; done: boolean }[] };

describe.skipIf(noChromium('editor.app.test'))('the editor and quick entry in chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let token: string;
  const todos = async () => (await call(app, 'GET', '/v1/todos', { token })).body.data as V1Todo[];
  const byTitle = async (title: string) => (await todos()).find((t) => t.title === title);

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
    ({ page, watch, token } = await signedInPage(browser, app));
    await openApp(page, app);
    await page.getByRole('navigation').getByRole('link', { name: 'Today' }).click();
    await page.getByRole('heading', { level: 1, name: 'Today' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('quick entry reads `every monday` as a recurrence chip and creates the to-do with it', async () => {
    const box = page.getByRole('textbox', { name: 'New to-do' });
    await box.fill('Water plants every monday #home');
    const chips = page.getByRole('list', { name: 'Recognised' }).getByRole('listitem');
    await expect.poll(() => chips.allTextContents(), { timeout: 10_000 }).toEqual(['Tag: home', 'Repeat: Every Monday', expect.stringMatching(/^When: /)]);
    await box.press('Enter');
    await expect.poll(() => byTitle('Water plants'), { timeout: 5000 }).toMatchObject({ recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' }, tags: ['home'], whenDate: nextDay(1) });
    await box.fill('Gym every tuesday and thursday');
    await expect.poll(() => chips.first().textContent(), { timeout: 10_000 }).toBe('Repeat: Every week on Tue, Thu');
    await box.press('Enter');
    await expect.poll(() => byTitle('Gym'), { timeout: 5000 }).toMatchObject({ recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU,TH' } });
  }, 60_000);

  it('sets a recurrence from the picker and shows it in words; a refused RRULE is an alert; removes it', async () => {
    const box = page.getByRole('textbox', { name: 'New to-do' });
    await box.fill('Stretch');
    await box.press('Enter');
    await page.getByRole('button', { name: 'Stretch' }).click();
    const editor = page.getByRole('region', { name: 'Stretch' });
    await editor.getByText('Does not repeat').waitFor();
    await editor.getByLabel('Repeat rule').selectOption({ label: 'Weekly' });
    await editor.getByRole('spinbutton', { name: 'Interval' }).fill('2');
    await editor.getByRole('group', { name: 'On days' }).getByRole('checkbox', { name: 'Thursday' }).check();
    await editor.getByRole('group', { name: 'On days' }).getByRole('checkbox', { name: 'Tuesday' }).check();
    await editor.getByRole('button', { name: 'Set repeat' }).click();
    await editor.getByText('Every 2 weeks on Tue, Thu', { exact: true }).waitFor();
    await expect.poll(async () => (await byTitle('Stretch'))?.recurrence).toEqual({ rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH', basis: 'schedule' });

    await editor.getByLabel('Repeat rule').selectOption({ label: 'Monthly on a day' });
    await editor.getByRole('spinbutton', { name: 'Interval' }).fill('1');
    await editor.getByRole('spinbutton', { name: 'On day' }).fill('15');
    await editor.getByRole('radio', { name: 'After completion' }).check();
    await editor.getByRole('button', { name: 'Set repeat' }).click();
    await editor.getByText('Monthly on day 15, after completion', { exact: true }).waitFor();
    await expect.poll(async () => (await byTitle('Stretch'))?.recurrence).toEqual({ rule: 'FREQ=MONTHLY;BYMONTHDAY=15', basis: 'completion' });

    // The raw RRULE: the server's refusal is an alert with its message; the words roll back.
    await editor.getByLabel('Repeat rule').selectOption({ label: 'Custom (RRULE)' });
    await editor.getByRole('textbox', { name: 'RRULE' }).fill('FREQ=HOURLY;INTERVAL=2');
    await editor.getByRole('button', { name: 'Set repeat' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('FREQ=HOURLY is not supported');
    await editor.getByText('Monthly on day 15, after completion', { exact: true }).waitFor();
    expect((await byTitle('Stretch'))?.recurrence).toEqual({ rule: 'FREQ=MONTHLY;BYMONTHDAY=15', basis: 'completion' });
    await alert.getByRole('button', { name: 'Dismiss' }).click();

    // A rule the words do not cover is shown as itself.
    await editor.getByRole('textbox', { name: 'RRULE' }).fill('FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1');
    await editor.getByRole('button', { name: 'Set repeat' }).click();
    await editor.getByText('Custom: FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1, after completion').waitFor();

    await editor.getByRole('button', { name: 'Remove repeat' }).click();
    await editor.getByText('Does not repeat').waitFor();
    await expect.poll(async () => (await byTitle('Stretch'))?.recurrence).toBeNull();
  }, 60_000);

  it('checklist: add, reorder by button and by Alt+↑/↓ (focus stays), rename, delete', async () => {
    const editor = page.getByRole('region', { name: 'Stretch' });
    const add = editor.getByRole('textbox', { name: 'New checklist item' });
    for (const t of ['One', 'Two', 'Three']) {
      await add.fill(t);
      await add.press('Enter');
      await editor.getByRole('checkbox', { name: t }).waitFor();
    }
    const list = editor.getByRole('list', { name: 'Checklist' }).getByRole('checkbox');
    const order = async () => (await list.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))));
    const server = async () => (await byTitle('Stretch'))!.checklist.map((c) => c.title);
    /** The page shows `titles` in this order, and then the server has it too. */
    const shownAndSaved = async (titles: string[]) => {
      await expect.poll(order).toEqual(titles);
      await expect.poll(server).toEqual(titles);
    };
    /** Focuses `item` (a checkbox or its rename field) and presses Alt+`arrow` there. */
    const altArrow = async (item: Locator, arrow: 'ArrowUp' | 'ArrowDown') => {
      await item.focus();
      await item.press(`Alt+${arrow}`);
    };
    await expect.poll(server).toEqual(['One', 'Two', 'Three']);

    await editor.getByRole('button', { name: 'Move Three up' }).click();
    await shownAndSaved(['One', 'Three', 'Two']);

    // Alt+↑ on the focused item; the focus follows it.
    await altArrow(editor.getByRole('checkbox', { name: 'Three' }), 'ArrowUp');
    await expect.poll(order).toEqual(['Three', 'One', 'Two']);
    await expect.poll(() => focusedLabel(page)).toBe('Three');
    await page.keyboard.press('Alt+ArrowDown');
    await expect.poll(order).toEqual(['One', 'Three', 'Two']);
    await page.keyboard.press('Alt+ArrowDown');
    await shownAndSaved(['One', 'Two', 'Three']);
    // Alt+↓ in the rename field works too.
    await altArrow(editor.getByRole('textbox', { name: 'Rename One' }), 'ArrowDown');
    await expect.poll(server).toEqual(['Two', 'One', 'Three']);
    await expect.poll(() => focusedLabel(page)).toBe('Rename One');

    const renameTwo = editor.getByRole('textbox', { name: 'Rename Two' });
    await renameTwo.fill('Deux');
    await renameTwo.press('Enter');
    await editor.getByRole('checkbox', { name: 'Deux' }).waitFor();
    await editor.getByRole('button', { name: 'Delete One' }).click();
    await editor.getByRole('checkbox', { name: 'One' }).waitFor({ state: 'detached' });
    await editor.getByRole('checkbox', { name: 'Three' }).check();
    await expect.poll(async () => (await byTitle('Stretch'))!.checklist.map((c) => [c.title, c.done])).toEqual([
      ['Deux', false],
      ['Three', true],
    ]);
  }, 60_000);

  it('an optimistic change shows at once and rolls back with an alert when the server refuses', async () => {
    const editor = page.getByRole('region', { name: 'Stretch' });
    // Hold the update so the optimistic state can be seen, then let the server answer.
    let held: Route | undefined;
    const isUpdate = (u: URL) => u.pathname.includes('todos.update');
    await page.route(isUpdate, (r) => {
      held = r;
    });
    const tooLong = 'S'.repeat(4097); // LIMITS.todo.title is 4096
    const title = editor.getByLabel('Title', { exact: true });
    await title.fill(tooLong);
    await title.blur();
    await expect.poll(() => held !== undefined).toBe(true);
    const today = page.getByRole('list', { name: 'Today' });
    await today.getByRole('checkbox', { name: tooLong }).waitFor();
    expect(await today.getByRole('checkbox', { name: 'Stretch', exact: true }).count()).toBe(0);
    await held!.continue();
    await page.unroute(isUpdate);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/title/i);
    await today.getByRole('checkbox', { name: 'Stretch', exact: true }).waitFor();
    expect(await page.getByRole('region', { name: 'Stretch' }).getByLabel('Title', { exact: true }).inputValue()).toBe('Stretch');
    expect((await byTitle('Stretch'))).toBeDefined();
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByRole('region', { name: 'Stretch' }).getByRole('button', { name: 'Close' }).click();
  }, 60_000);

  it('the week start is kept across a reload and orders the days', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
    const select = page.getByRole('combobox', { name: 'First day of the week' });
    await select.selectOption('sunday');
    await expect.poll(async () => (await call(app, 'GET', '/v1/settings', { token })).body.weekStart).toBe('sunday');
    await page.reload();
    await expect.poll(() => page.getByRole('combobox', { name: 'First day of the week' }).inputValue()).toBe('sunday');
    // Used by the editor's days and by `next week` in quick entry.
    await page.getByRole('navigation').getByRole('link', { name: 'Today' }).click();
    await page.getByRole('button', { name: 'Stretch' }).click();
    const editor = page.getByRole('region', { name: 'Stretch' });
    await editor.getByLabel('Repeat rule').selectOption({ label: 'Weekly' });
    const days = editor.getByRole('group', { name: 'On days' }).getByRole('checkbox');
    expect(await days.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')))).toEqual(['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']);
    await shot(editor, 'editor-light');
    const box = page.getByRole('textbox', { name: 'New to-do' });
    await box.fill('Plan next week');
    const first = new Date();
    first.setDate(first.getDate() + (7 - first.getDay()));
    const label = first.toLocaleDateString('en-US', { weekday: 'short', month: 'short', day: 'numeric' });
    await expect.poll(() => page.getByRole('list', { name: 'Recognised' }).getByRole('listitem').allTextContents(), { timeout: 10_000 }).toEqual([`When: ${label}`]);
  }, 60_000);

  it('no CSP violation and no page error', () => {
    watch.assertClean();
  });
});
