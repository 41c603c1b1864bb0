// Views (spec §4.12, DECISIONS §6, issue 14): today, upcoming, anytime, someday, logbook and the
// overview. Each reads the account's picture (./account.ts: placement from plaintext columns,
// sealed attributes from the sealed index), picks its to-dos, and opens only those rows.
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { nextOccurrence } from '../todos/recurrence.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import { todayOf } from '../todos/model.js';
import type { TodoOut } from '../todos/schema.js';
import type { ContainerOut } from '../containers/schema.js';
import { withAccountArena } from '../todo-index/index.js';
import { loadAccount, pageInAppOrder, presentPicked, smallest, type Account, type Item } from './account.js';

/** How far upcoming projects a recurring to-do's further occurrences (DECISIONS §6). */
export const PROJECTION_DAYS = 14;

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

// The rules read the index column-wise by row position (no object per to-do): see Account.
const SOMEDAY = 2;
/** Open and live (every view but the logbook). */
const openLive = (acc: Account, k: number) => acc.attrs.status(k) === 0 && acc.isLive(k);
/** Today's rule: its when-date or deadline has come. */
function inToday(acc: Account, k: number, today: string): boolean {
  const w = acc.attrs.whenDate(k);
  if (w !== null && w <= today) return true;
  const d = acc.attrs.deadline(k);
  return d !== null && d <= today;
}
/** Anytime: not someday, no when-date or one that has come. */
function inAnytime(acc: Account, k: number, today: string): boolean {
  if ((acc.attrs.flags(k) & SOMEDAY) !== 0) return false;
  const w = acc.attrs.whenDate(k);
  return w === null || w <= today;
}
/** Upcoming: the day a to-do shows on, when it has a future when-date (else a future deadline). */
function upcomingDayOf(whenDate: string | null, deadline: string | null, someday: boolean, today: string): string | null {
  if (someday && whenDate === null) return null;
  if (whenDate !== null) return whenDate > today ? whenDate : null;
  return deadline !== null && deadline > today ? deadline : null;
}
const upcomingAt = (acc: Account, k: number, today: string) => upcomingDayOf(acc.attrs.whenDate(k), acc.attrs.deadline(k), (acc.attrs.flags(k) & SOMEDAY) !== 0, today);
const upcomingDay = (i: Item, today: string) => upcomingDayOf(i.a.whenDate, i.a.deadline, i.a.someday, today);

export function todayView(deps: Deps, p: Principal, query: { today?: string | undefined }) {
  return withAccountArena((arena) => {
    const today = query.today ?? todayOf(deps);
    const acc = loadAccount(deps, p, arena);
    const picked = acc.inAppOrder(acc.pick((k) => openLive(acc, k) && inToday(acc, k, today)));
    const shown = presentPicked(deps, p, picked.map((i) => i.id));
    const out = (i: Item) => ({ ...shown.get(i.id)!, overdue: i.a.deadline !== null && i.a.deadline < today });
    return {
      date: today,
      todos: picked.filter((i) => !i.a.evening).map(out),
      evening: picked.filter((i) => i.a.evening).map(out),
    };
  });
}

/**
 * The further occurrences of a recurring to-do within (today, today + 14], computed with the rule
 * code completion uses (routers/todos/recurrence.ts), as if each occurrence were completed on its day.
 */
function projections(i: Item, today: string): string[] {
  const r = i.a.recurrence;
  if (!r) return [];
  const horizon = addDays(today, PROJECTION_DAYS);
  let whenDate = i.a.whenDate;
  let deadline = i.a.deadline;
  if ((whenDate ?? deadline) === null) return [];
  let anchor = r.anchor;
  const out: string[] = [];
  for (let n = 1; n <= PROJECTION_DAYS * 2; n++) {
    const current = (whenDate ?? deadline)!;
    const next = nextOccurrence({ rule: r.rule, basis: r.basis, whenDate, deadline, today: current, count: r.done + n, anchor });
    if (!next) break;
    const day = (next.whenDate ?? next.deadline)!;
    if (day > horizon) break;
    if (day > today) out.push(day);
    ({ whenDate, deadline, anchor } = next);
  }
  return out;
}

export function upcomingView(deps: Deps, p: Principal, query: { today?: string | undefined }) {
  return withAccountArena((arena) => {
    const today = query.today ?? todayOf(deps);
    const acc = loadAccount(deps, p, arena);
    const byDay = new Map<string, { item: Item; projected: boolean }[]>();
    const add = (day: string, item: Item, projected: boolean) => {
      const list = byDay.get(day);
      if (list) list.push({ item, projected });
      else byDay.set(day, [{ item, projected }]);
    };
    for (const i of acc.inAppOrder(acc.pick((k) => openLive(acc, k) && (acc.attrs.recurring(k) || upcomingAt(acc, k, today) !== null)))) {
      const day = upcomingDay(i, today);
      if (day) add(day, i, false);
      for (const d of projections(i, today)) if (d !== day) add(d, i, true);
    }
    const days = [...byDay.keys()].sort();
    const shown = presentPicked(deps, p, [...new Set([...byDay.values()].flat().map((e) => e.item.id))]);
    return {
      days: days.map((date) => ({
        date,
        // Items keep app order inside a day (they were added in app order).
        // Issue 28 item 15: every entry says the day it occurs on (docs/api.md "Views").
        todos: byDay.get(date)!.map((e) => ({ ...shown.get(e.item.id)!, projected: e.projected, occursOn: date })),
      })),
    };
  });
}

type Paged = { limit?: number | undefined; cursor?: string | undefined };

/** Anytime and someday: the picked items in grouped app order, one page of them, grouped by container. */
function groupedPage(deps: Deps, p: Principal, acc: Account, picked: number[], query: Paged, list: string) {
  const { page, next_cursor } = pageInAppOrder(deps, acc, picked, query, `${p.userId}:views.${list}`);
  const shown = presentPicked(deps, p, page.map((i) => i.id));
  const groups: { container: ContainerOut | null; todos: TodoOut[] }[] = [];
  let current: string | null | undefined;
  for (const i of page) {
    if (groups.length === 0 || i.parentId !== current) {
      current = i.parentId;
      groups.push({ container: i.parentId ? acc.container(i.parentId) : null, todos: [] });
    }
    groups.at(-1)!.todos.push(shown.get(i.id)!);
  }
  return { groups, next_cursor };
}

export function anytimeView(deps: Deps, p: Principal, query: Paged & { today?: string | undefined }) {
  return withAccountArena((arena) => {
    const today = query.today ?? todayOf(deps);
    const acc = loadAccount(deps, p, arena);
    return groupedPage(deps, p, acc, acc.positions((k) => openLive(acc, k) && inAnytime(acc, k, today)), query, 'anytime');
  });
}

export function somedayView(deps: Deps, p: Principal, query: Paged & { today?: string | undefined }) {
  return withAccountArena((arena) => {
    const acc = loadAccount(deps, p, arena);
    return groupedPage(deps, p, acc, acc.positions((k) => openLive(acc, k) && (acc.attrs.flags(k) & SOMEDAY) !== 0), query, 'someday');
  });
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Logbook: completed and canceled, newest completion first, grouped by UTC day, from/to inclusive, paged. */
export function logbookView(deps: Deps, p: Principal, query: Paged & { today?: string | undefined; from?: string | undefined; to?: string | undefined }) {
  return withAccountArena((arena) => {
    const limit = query.limit ?? LIMITS.page.defaultLimit;
    const scope = `${p.userId}:views.logbook`;
    const acc = loadAccount(deps, p, arena);
    // Row positions of the logged to-dos (no object per to-do), then only the page is sorted.
    const fromMs = query.from ? Date.parse(`${query.from}T00:00:00Z`) : -Infinity;
    const toMs = query.to ? Date.parse(`${query.to}T00:00:00Z`) + 86_400_000 : Infinity;
    let at = Infinity;
    let afterId = '';
    if (query.cursor) {
      const pos = decodeTupleCursor(deps.keys.cursor, scope, query.cursor, 1);
      at = Number(pos.k[0]);
      afterId = pos.i;
    }
    const done: number[] = [];
    const doneAt = new Float64Array(acc.n);
    for (let k = 0; k < acc.n; k++) {
      if (!acc.has(k) || acc.attrs.status(k) === 0) continue;
      const c = acc.attrs.completedAt(k);
      if (c === null || c < fromMs || c >= toMs || !acc.isLoggable(k)) continue;
      // After the cursor: older, or as old with a greater id.
      if (c > at || (c === at && acc.idAt(k) <= afterId)) continue;
      doneAt[k] = c;
      done.push(k);
    }
    // Newest first; ties by id.
    const cmp = (x: number, y: number) => doneAt[y]! - doneAt[x]! || (acc.idAt(x) < acc.idAt(y) ? -1 : acc.idAt(x) > acc.idAt(y) ? 1 : 0);
    const page = acc.items(smallest(done, limit, cmp));
    const more = done.length > limit;
    const shown = presentPicked(deps, p, page.map((i) => i.id));
    const days: { date: string; todos: TodoOut[] }[] = [];
    for (const i of page) {
      const date = dayOf(i.a.completedAt!);
      if (days.at(-1)?.date !== date) days.push({ date, todos: [] });
      days.at(-1)!.todos.push(shown.get(i.id)!);
    }
    const last = page.at(-1);
    return { days, next_cursor: more && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [String(last.a.completedAt)], i: last.id }) : null };
  });
}

/** Counts per view and open counts per live container (no to-do row is opened). */
export function overviewView(deps: Deps, p: Principal, query: { today?: string | undefined }) {
  return withAccountArena((arena) => {
    const today = query.today ?? todayOf(deps);
    const acc = loadAccount(deps, p, arena);
    const counts = { today: 0, upcoming: 0, anytime: 0, someday: 0, logbook: 0 };
    const perContainer = new Map<string, number>();
    for (let k = 0; k < acc.n; k++) {
      if (!acc.has(k)) continue;
      if (acc.attrs.status(k) !== 0) {
        if (acc.attrs.completedAt(k) !== null && acc.isLoggable(k)) counts.logbook++;
        continue;
      }
      if (!acc.isLive(k)) continue;
      if (inToday(acc, k, today)) counts.today++;
      if (upcomingAt(acc, k, today)) counts.upcoming++;
      if (inAnytime(acc, k, today)) counts.anytime++;
      if ((acc.attrs.flags(k) & SOMEDAY) !== 0) counts.someday++;
      const parent = acc.parentAt(k);
      if (parent) perContainer.set(parent, (perContainer.get(parent) ?? 0) + 1);
    }
    const live = [...acc.containers.values()].filter((c) => !c.trashedBelow && !c.archivedBelow).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return {
      date: today,
      counts,
      containers: live.map((c) => ({ id: c.row.id, kind: c.row.kind, parentId: c.row.parentId, openCount: perContainer.get(c.row.id) ?? 0 })),
    };
  });
}
