// Issue 28 item 15 (docs/api.md "Views", "occursOn in Upcoming"): a projected occurrence in
// Upcoming is the stored to-do listed under a later day, so its `whenDate` is the stored one
// (2026-12-03 under 2026-12-10). Every entry of Upcoming carries `occursOn`, the day it is listed
// under, so a client shows the right date; stored fields stay the stored to-do's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { userClient } from '../helpers/user-client.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;

beforeAll(async () => {
  app = await startApp();
  app.clock.set(Date.parse('2026-11-30T12:00:00Z'));
});
afterAll(() => app.close());

describe('GET /v1/views/upcoming: occursOn', () => {
  it('a weekly to-do stored for 2026-12-03 is listed on the 3rd and, projected, on the 10th with occursOn 2026-12-10', async () => {
    const u = await userClient(app);
    const weekly = await u.req('POST', '/v1/todos', { title: 'weekly review', whenDate: '2026-12-03', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    await u.req('POST', '/v1/todos', { title: 'deadline only', deadline: '2026-12-05' });
    const v = await u.req('GET', '/v1/views/upcoming');

    const entries = v.days.flatMap((d: Any) => d.todos.map((t: Any) => ({ date: d.date, title: t.title, projected: t.projected, occursOn: t.occursOn, whenDate: t.whenDate, deadline: t.deadline })));
    expect(entries).toEqual([
      { date: '2026-12-03', title: 'weekly review', projected: false, occursOn: '2026-12-03', whenDate: '2026-12-03', deadline: null },
      { date: '2026-12-05', title: 'deadline only', projected: false, occursOn: '2026-12-05', whenDate: null, deadline: '2026-12-05' },
      // The projection keeps the stored to-do's fields (its id, its whenDate) and says its own day.
      { date: '2026-12-10', title: 'weekly review', projected: true, occursOn: '2026-12-10', whenDate: '2026-12-03', deadline: null },
    ]);
    const projected = v.days.find((d: Any) => d.date === '2026-12-10').todos[0];
    expect(projected.id).toBe(weekly.id);
    // Apart from the two view fields, an entry is the to-do as GET /v1/todos/{id} presents it.
    const { projected: _p, occursOn: _o, ...rest } = projected;
    expect(rest).toEqual(await u.req('GET', `/v1/todos/${weekly.id}`));
  });

  it('every entry of every day carries occursOn equal to its day, over a daily to-do and another today', async () => {
    const u = await userClient(app);
    await u.req('POST', '/v1/todos', { title: 'daily', whenDate: '2026-11-30', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } });
    await u.req('POST', '/v1/todos', { title: 'later', whenDate: '2026-12-02' });
    const v = await u.req('GET', '/v1/views/upcoming?today=2026-12-01');
    const all = v.days.flatMap((d: Any) => d.todos.map((t: Any) => [d.date, t.occursOn]));
    expect(all.length).toBe(15); // 14 projected days of `daily` and `later`
    for (const [date, occursOn] of all) expect(occursOn).toBe(date);
  });
});
