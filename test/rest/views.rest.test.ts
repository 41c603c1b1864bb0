// Views (spec §4.12, DECISIONS §6, issue 14) over HTTP: each rule of today, upcoming, anytime,
// someday, logbook and the overview; trashed and archived containers; paging; `today` parsing;
// scopes; account_too_large past CAIRN_MAX_ACCOUNT_ITEMS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { userClient } from '../helpers/user-client.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;

beforeAll(async () => {
  app = await startApp();
  // The server's UTC date is 2026-11-20 (the injected clock).
  app.clock.set(Date.parse('2026-11-20T12:00:00Z'));
});
afterAll(() => app.close());

async function user(a: TestApp = app) {
  const u = await userClient(a);
  const req = u.req;
  const todo = (body: Record<string, unknown>) => req('POST', '/v1/todos', body);
  const container = (body: Record<string, unknown>) => req('POST', '/v1/containers', body);
  return { ...u, req, todo, container };
}
const titles = (list: Any[]) => list.map((t) => t.title);

describe('GET /v1/views/today', () => {
  it('today exactly, earlier when-dates and deadlines; not tomorrow; evening apart; overdue flagged', async () => {
    const u = await user();
    await u.todo({ title: 'today', whenDate: '2026-11-20' });
    await u.todo({ title: 'yesterday', whenDate: '2026-11-19' });
    await u.todo({ title: 'tomorrow', whenDate: '2026-11-21' });
    await u.todo({ title: 'evening', whenDate: '2026-11-20', evening: true });
    await u.todo({ title: 'overdue deadline', deadline: '2026-11-18' });
    await u.todo({ title: 'due today', deadline: '2026-11-20' });
    await u.todo({ title: 'due later', deadline: '2026-11-25' });
    await u.todo({ title: 'no date' });
    const done = await u.todo({ title: 'done today', whenDate: '2026-11-20' });
    await u.req('POST', `/v1/todos/${done.id}/complete`);
    const trashed = await u.todo({ title: 'trashed today', whenDate: '2026-11-20' });
    await u.req('POST', `/v1/todos/${trashed.id}/trash`);

    const v = await u.req('GET', '/v1/views/today');
    expect(v.date).toBe('2026-11-20');
    expect(titles(v.todos).sort()).toEqual(['due today', 'overdue deadline', 'today', 'yesterday']);
    expect(titles(v.evening)).toEqual(['evening']);
    const flag = Object.fromEntries(v.todos.map((t: Any) => [t.title, t.overdue]));
    expect(flag).toEqual({ today: false, yesterday: false, 'overdue deadline': true, 'due today': false });
    // Presented exactly as GET /v1/todos/{id} presents it, plus the flag.
    const one = v.todos.find((t: Any) => t.title === 'today');
    const { overdue, ...rest } = one;
    expect(overdue).toBe(false);
    expect(rest).toEqual(await u.req('GET', `/v1/todos/${one.id}`));

    // Another `today`: tomorrow's to-do shows, and the deadline of the 20th is now overdue.
    const next = await u.req('GET', '/v1/views/today?today=2026-11-21');
    expect(titles(next.todos).sort()).toEqual(['due today', 'overdue deadline', 'today', 'tomorrow', 'yesterday']);
    expect(next.todos.find((t: Any) => t.title === 'due today').overdue).toBe(true);
  });

  it('the default date follows the injected clock, and a malformed today is 422 at /today', async () => {
    const u = await user();
    await u.todo({ title: 'on the 22nd', whenDate: '2026-11-22' });
    expect(titles((await u.req('GET', '/v1/views/today')).todos)).toEqual([]);
    app.clock.set(Date.parse('2026-11-22T00:30:00Z'));
    try {
      const v = await u.req('GET', '/v1/views/today');
      expect(v.date).toBe('2026-11-22');
      expect(titles(v.todos)).toEqual(['on the 22nd']);
    } finally {
      app.clock.set(Date.parse('2026-11-20T12:00:00Z'));
    }
    for (const bad of ['2026-13-01', '20261120', '2026-02-30', 'x'.repeat(11)]) {
      const r = await call(app, 'GET', `/v1/views/today?today=${bad}`, { token: u.session });
      expect(expectProblem(r, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/today');
    }
  });

  it('leaves out to-dos of trashed and archived containers and of a trashed container\'s subprojects, and keeps app order', async () => {
    const u = await user();
    const area = await u.container({ kind: 'area', name: 'Area' });
    const p1 = await u.container({ kind: 'project', name: 'P1', parentId: area.id });
    const p2 = await u.container({ kind: 'project', name: 'P2' });
    const sub = await u.container({ kind: 'subproject', name: 'Sub', parentId: p2.id });
    const p3 = await u.container({ kind: 'project', name: 'P3' });
    await u.todo({ title: 'standalone', whenDate: '2026-11-20' });
    await u.todo({ title: 'in p1', whenDate: '2026-11-20', parentId: p1.id });
    await u.todo({ title: 'in p2', whenDate: '2026-11-20', parentId: p2.id });
    await u.todo({ title: 'in sub', whenDate: '2026-11-20', parentId: sub.id });
    await u.todo({ title: 'in p3', whenDate: '2026-11-20', parentId: p3.id });
    const order = titles((await u.req('GET', '/v1/views/today')).todos);
    expect(order[0]).toBe('standalone');
    expect(order.sort()).toEqual(['in p1', 'in p2', 'in p3', 'in sub', 'standalone']);
    await u.req('POST', `/v1/containers/${p2.id}/trash`);
    await u.req('POST', `/v1/containers/${p3.id}/archive`);
    expect(titles((await u.req('GET', '/v1/views/today')).todos).sort()).toEqual(['in p1', 'standalone']);
    // An archived area hides what is below it too.
    await u.req('POST', `/v1/containers/${area.id}/archive`);
    expect(titles((await u.req('GET', '/v1/views/today')).todos)).toEqual(['standalone']);
    await u.req('POST', `/v1/containers/${p2.id}/restore`);
    expect(titles((await u.req('GET', '/v1/views/today')).todos).sort()).toEqual(['in p2', 'in sub', 'standalone']);
  });
});

describe('GET /v1/views/upcoming', () => {
  it('groups future when-dates and deadlines by day, and projects a recurring to-do over the next 14 days', async () => {
    const u = await user();
    await u.todo({ title: 'tomorrow', whenDate: '2026-11-21' });
    await u.todo({ title: 'deadline 23', deadline: '2026-11-23' });
    await u.todo({ title: 'far', whenDate: '2027-01-15' });
    await u.todo({ title: 'today', whenDate: '2026-11-20' });
    const weekly = await u.todo({ title: 'weekly', whenDate: '2026-11-22', recurrence: { rule: 'FREQ=WEEKLY', basis: 'schedule' } });
    const v = await u.req('GET', '/v1/views/upcoming');
    const byDay = Object.fromEntries(v.days.map((d: Any) => [d.date, d.todos.map((t: Any) => `${t.title}${t.projected ? '*' : ''}`)]));
    expect(byDay).toEqual({
      '2026-11-21': ['tomorrow'],
      '2026-11-22': ['weekly'],
      '2026-11-23': ['deadline 23'],
      '2026-11-29': ['weekly*'],
      '2027-01-15': ['far'],
    });
    // 14 days from the 20th is the 4th of December: the occurrence of 6 December is not projected.
    const d29 = v.days.find((d: Any) => d.date === '2026-11-29').todos[0];
    expect(d29.id).toBe(weekly.id);
    // The projection is computed, not stored: still one to-do.
    expect((await u.req('GET', '/v1/todos')).data.filter((t: Any) => t.title === 'weekly')).toHaveLength(1);
    // A daily to-do due today shows its next 14 days.
    await u.todo({ title: 'daily', whenDate: '2026-11-20', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } });
    const v2 = await u.req('GET', '/v1/views/upcoming');
    const daily = v2.days.filter((d: Any) => d.todos.some((t: Any) => t.title === 'daily')).map((d: Any) => d.date);
    expect(daily).toHaveLength(14);
    expect(daily[0]).toBe('2026-11-21');
    expect(daily.at(-1)).toBe('2026-12-04');
  });
});

describe('GET /v1/views/anytime and /someday', () => {
  it('pages of any size walk exactly the one-page order: nested containers, headings, moved to-dos, skipped rows between', async () => {
    const u = await user();
    const area = await u.container({ kind: 'area', name: 'Area' });
    const p1 = await u.container({ kind: 'project', name: 'P1', parentId: area.id });
    const sub = await u.container({ kind: 'subproject', name: 'Sub', parentId: p1.id });
    const p2 = await u.container({ kind: 'project', name: 'P2' });
    await u.req('POST', `/v1/containers/${p2.id}/move`, { parentId: null, before: area.id });
    const h1 = await u.req('POST', '/v1/headings', { projectId: p1.id, name: 'H1' });
    const h2 = await u.req('POST', '/v1/headings', { projectId: p1.id, name: 'H2' });
    const made: Any[] = [];
    const places = [{}, { parentId: p1.id }, { parentId: p1.id, headingId: h1.id }, { parentId: p1.id, headingId: h2.id }, { parentId: sub.id }, { parentId: p2.id }];
    for (let i = 0; i < 35; i++) {
      const place = places[i % places.length]!;
      // Every fourth is not in anytime (someday or completed): the walk skips rows between picks.
      const t = await u.todo({ title: `t${String(i).padStart(2, '0')}`, ...place, ...(i % 4 === 1 ? { someday: true } : {}) });
      if (i % 5 === 4) await u.req('POST', `/v1/todos/${t.id}/complete`);
      made.push(t);
    }
    // Reorder: a to-do moved to the front of its list; a heading moved before the other.
    await u.req('POST', `/v1/todos/${made[20]!.id}/move`, { parentId: null, before: made[0]!.id });
    await u.req('PATCH', `/v1/headings/${h2.id}`, { after: null });
    const whole = await u.req('GET', '/v1/views/anytime?limit=200');
    expect(whole.next_cursor).toBeNull();
    const order = whole.groups.flatMap((g: Any) => titles(g.todos));
    const expected = made.filter((_, i) => i % 4 !== 1 && i % 5 !== 4).map((t) => t.title);
    expect([...order].sort()).toEqual([...expected].sort());
    expect(order[0]).toBe('t20');
    expect(whole.groups.map((g: Any) => g.container?.name ?? null)).toEqual([null, 'P2', 'P1', 'Sub']);
    // Inside P1: no heading first, then H2 (moved first), then H1.
    const inP1 = whole.groups[2].todos;
    const headingOf = (t: Any) => (t.headingId === h2.id ? 1 : t.headingId === h1.id ? 2 : 0);
    expect(inP1.map(headingOf)).toEqual([...inP1.map(headingOf)].sort());
    for (const size of [1, 2, 3, 7]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Any = await u.req('GET', `/v1/views/anytime?limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        for (const g of page.groups) seen.push(...titles(g.todos));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(order);
    }
  });

  it('groups by container in the containers\' order, standalone first, and pages over the grouped order', async () => {
    const u = await user();
    const a = await u.container({ kind: 'project', name: 'A' });
    const b = await u.container({ kind: 'project', name: 'B' });
    await u.req('POST', `/v1/containers/${b.id}/move`, { parentId: null, before: a.id });
    for (let i = 0; i < 3; i++) await u.todo({ title: `a${i}`, parentId: a.id });
    for (let i = 0; i < 3; i++) await u.todo({ title: `b${i}`, parentId: b.id });
    await u.todo({ title: 's0' });
    await u.todo({ title: 'later', whenDate: '2026-12-01' });
    await u.todo({ title: 'someday', someday: true });
    await u.todo({ title: 'now', whenDate: '2026-11-19' });
    const all = await u.req('GET', '/v1/views/anytime');
    expect(all.next_cursor).toBeNull();
    expect(all.groups.map((g: Any) => [g.container?.name ?? null, titles(g.todos)])).toEqual([
      [null, ['s0', 'now']],
      ['B', ['b0', 'b1', 'b2']],
      ['A', ['a0', 'a1', 'a2']],
    ]);
    expect(all.groups[1].container).toEqual(await u.req('GET', `/v1/containers/${b.id}`));
    // Pages of 3 walk the same order.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Any = await u.req('GET', `/v1/views/anytime?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const g of page.groups) seen.push(...titles(g.todos));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['s0', 'now', 'b0', 'b1', 'b2', 'a0', 'a1', 'a2']);
    const bad = await call(app, 'GET', '/v1/views/anytime?cursor=abc.def', { token: u.session });
    expect(expectProblem(bad, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
    // A cursor of another list does not work here.
    const first = await u.req('GET', '/v1/views/anytime?limit=1');
    expect((await call(app, 'GET', `/v1/views/someday?cursor=${encodeURIComponent(first.next_cursor)}`, { token: u.session })).status).toBe(422);

    const someday = await u.req('GET', '/v1/views/someday');
    expect(someday.groups.map((g: Any) => titles(g.todos))).toEqual([['someday']]);
    await u.req('POST', `/v1/containers/${a.id}/archive`);
    expect((await u.req('GET', '/v1/views/anytime')).groups.map((g: Any) => g.container?.name ?? null)).toEqual([null, 'B']);
  });
});

describe('GET /v1/views/logbook', () => {
  it('newest completion first, grouped by day, from/to inclusive, paged; archived kept, trashed not', async () => {
    const u = await user();
    const arch = await u.container({ kind: 'project', name: 'Archived' });
    const gone = await u.container({ kind: 'project', name: 'Gone' });
    const mk = async (title: string, at: string, extra: Record<string, unknown> = {}, cancel = false) => {
      const t = await u.todo({ title, ...extra });
      app.clock.set(Date.parse(at));
      await u.req('POST', `/v1/todos/${t.id}/${cancel ? 'cancel' : 'complete'}`);
      return t;
    };
    try {
      await mk('d1 early', '2026-11-01T08:00:00Z');
      await mk('d1 late', '2026-11-01T20:00:00Z');
      await mk('d2 canceled', '2026-11-02T10:00:00Z', {}, true);
      await mk('d3 archived', '2026-11-03T10:00:00Z', { parentId: arch.id });
      await mk('d3 gone', '2026-11-03T11:00:00Z', { parentId: gone.id });
      const tr = await mk('d4 trashed', '2026-11-04T10:00:00Z');
      await u.req('POST', `/v1/todos/${tr.id}/trash`);
      await u.todo({ title: 'open' });
    } finally {
      app.clock.set(Date.parse('2026-11-20T12:00:00Z'));
    }
    await u.req('POST', `/v1/containers/${arch.id}/archive`);
    await u.req('POST', `/v1/containers/${gone.id}/trash`);
    const v = await u.req('GET', '/v1/views/logbook');
    expect(v.days.map((d: Any) => [d.date, titles(d.todos)])).toEqual([
      ['2026-11-03', ['d3 archived']],
      ['2026-11-02', ['d2 canceled']],
      ['2026-11-01', ['d1 late', 'd1 early']],
    ]);
    expect(v.next_cursor).toBeNull();
    const range = await u.req('GET', '/v1/views/logbook?from=2026-11-02&to=2026-11-03');
    expect(range.days.map((d: Any) => d.date)).toEqual(['2026-11-03', '2026-11-02']);
    const p1 = await u.req('GET', '/v1/views/logbook?limit=2');
    expect(p1.days.flatMap((d: Any) => titles(d.todos))).toEqual(['d3 archived', 'd2 canceled']);
    const p2 = await u.req('GET', `/v1/views/logbook?limit=2&cursor=${encodeURIComponent(p1.next_cursor)}`);
    expect(p2.days.flatMap((d: Any) => titles(d.todos))).toEqual(['d1 late', 'd1 early']);
    expect(p2.next_cursor).toBeNull();
    expect((await call(app, 'GET', '/v1/views/logbook?from=2026-1-01', { token: u.session })).body.errors[0].pointer).toBe('/from');
  });
});

describe('GET /v1/views/overview', () => {
  it('counts per view and open counts per live container', async () => {
    const u = await user();
    const p = await u.container({ kind: 'project', name: 'P' });
    const arch = await u.container({ kind: 'project', name: 'Arch' });
    await u.todo({ title: 't', whenDate: '2026-11-20', parentId: p.id });
    await u.todo({ title: 'u', whenDate: '2026-11-25', parentId: p.id });
    await u.todo({ title: 'a', parentId: arch.id });
    await u.todo({ title: 's', someday: true });
    const done = await u.todo({ title: 'd' });
    await u.req('POST', `/v1/todos/${done.id}/complete`);
    await u.req('POST', `/v1/containers/${arch.id}/archive`);
    const v = await u.req('GET', '/v1/views/overview');
    expect(v.counts).toEqual({ today: 1, upcoming: 1, anytime: 1, someday: 1, logbook: 1 });
    expect(v.containers).toEqual([{ id: p.id, kind: 'project', parentId: null, openCount: 2 }]);
  });
});

describe('views: scopes and account size', () => {
  it('need todos:read and containers:read', async () => {
    const u = await registerUser(app);
    const onlyTodos = await createPat(app, u.session, ['todos:read']);
    expectProblem(await call(app, 'GET', '/v1/views/today', { token: onlyTodos.token }), 403, 'forbidden_scope');
    const both = await createPat(app, u.session, ['todos:read', 'containers:read']);
    expect((await call(app, 'GET', '/v1/views/today', { token: both.token })).status).toBe(200);
  });

  it('answer account_too_large past CAIRN_MAX_ACCOUNT_ITEMS (to-dos, containers, headings and notes count)', async () => {
    const small = await startApp({ CAIRN_MAX_ACCOUNT_ITEMS: '4' });
    try {
      const u = await user(small);
      const p = await u.container({ kind: 'project', name: 'P' });
      await u.req('POST', '/v1/headings', { projectId: p.id, name: 'H' });
      await u.req('POST', '/v1/notes', { body: 'n' });
      await u.todo({ title: 'one' });
      for (const v of ['today', 'upcoming', 'anytime', 'someday', 'logbook', 'overview']) {
        expect((await call(small, 'GET', `/v1/views/${v}`, { token: u.session })).status).toBe(200);
      }
      await u.todo({ title: 'five' });
      for (const v of ['today', 'upcoming', 'anytime', 'someday', 'logbook', 'overview']) {
        expectProblem(await call(small, 'GET', `/v1/views/${v}`, { token: u.session }), 422, 'account_too_large');
      }
    } finally {
      await small.close();
    }
  });
});
