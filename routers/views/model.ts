// Views (spec §4.12, DECISIONS §6, issue 14): today, upcoming, anytime, someday, logbook and the
// overview. Each reads the account's picture (./account.ts: placement from plaintext columns,
// sealed attributes from the sealed index), picks its to-dos, and opens only those rows.
import { LIMITS } from '../../server/config.js';
import type { Deps } from '../../server/deps.js';
import type { Principal } from '../../server/auth/credentials.js';
import { nextOccurrence } from '../../server/recurrence.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import { todayOf } from '../todos/model.js';
import type { TodoOut } from '../todos/schema.js';
import type { ContainerOut } from '../containers/schema.js';
import { loadAccount, pageInAppOrder, presentPicked, type Account, type Item } from './account.js';

/** How far upcoming projects a recurring to-do's further occurrences (DECISIONS §6). */
export const PROJECTION_DAYS = 14;

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

const isOpen = (i: Item) => i.a.status === 'open';
/** Today's rule: open, live, and its when-date or deadline has come. */
const inToday = (i: Item, today: string) => (i.a.whenDate !== null && i.a.whenDate <= today) || (i.a.deadline !== null && i.a.deadline <= today);
/** Anytime: open, not someday, no when-date or one that has come. */
const inAnytime = (i: Item, today: string) => !i.a.someday && (i.a.whenDate === null || i.a.whenDate <= today);
/** Upcoming: the day a to-do shows on, when it has a future when-date (else a future deadline). */
function upcomingDay(i: Item, today: string): string | null {
  if (i.a.someday && i.a.whenDate === null) return null;
  if (i.a.whenDate !== null) return i.a.whenDate > today ? i.a.whenDate : null;
  return i.a.deadline !== null && i.a.deadline > today ? i.a.deadline : null;
}

export function todayView(deps: Deps, p: Principal, query: { today?: string | undefined }) {
  const today = query.today ?? todayOf(deps);
  const acc = loadAccount(deps, p);
  const picked = acc.inAppOrder(acc.items.filter((i) => isOpen(i) && acc.isLive(i) && inToday(i, today)));
  const shown = presentPicked(deps, p, picked.map((i) => i.id));
  const out = (i: Item) => ({ ...shown.get(i.id)!, overdue: i.a.deadline !== null && i.a.deadline < today });
  return {
    date: today,
    todos: picked.filter((i) => !i.a.evening).map(out),
    evening: picked.filter((i) => i.a.evening).map(out),
  };
}

/**
 * The further occurrences of a recurring to-do within (today, today + 14], computed with the rule
 * code completion uses (server/recurrence.ts), as if each occurrence were completed on its day.
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
  const today = query.today ?? todayOf(deps);
  const acc = loadAccount(deps, p);
  const byDay = new Map<string, { item: Item; projected: boolean }[]>();
  const add = (day: string, item: Item, projected: boolean) => {
    const list = byDay.get(day);
    if (list) list.push({ item, projected });
    else byDay.set(day, [{ item, projected }]);
  };
  for (const i of acc.inAppOrder(acc.items.filter((x) => isOpen(x) && acc.isLive(x) && (x.a.recurrence !== null || upcomingDay(x, today) !== null)))) {
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
      todos: byDay.get(date)!.map((e) => ({ ...shown.get(e.item.id)!, projected: e.projected })),
    })),
  };
}

type Paged = { limit?: number | undefined; cursor?: string | undefined };

/** Anytime and someday: the picked items in grouped app order, one page of them, grouped by container. */
function groupedPage(deps: Deps, p: Principal, acc: Account, picked: Item[], query: Paged, list: string) {
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
  const today = query.today ?? todayOf(deps);
  const acc = loadAccount(deps, p);
  return groupedPage(deps, p, acc, acc.items.filter((i) => isOpen(i) && acc.isLive(i) && inAnytime(i, today)), query, 'anytime');
}

export function somedayView(deps: Deps, p: Principal, query: Paged & { today?: string | undefined }) {
  const acc = loadAccount(deps, p);
  return groupedPage(deps, p, acc, acc.items.filter((i) => isOpen(i) && acc.isLive(i) && i.a.someday), query, 'someday');
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Logbook: completed and canceled, newest completion first, grouped by UTC day, from/to inclusive, paged. */
export function logbookView(deps: Deps, p: Principal, query: Paged & { today?: string | undefined; from?: string | undefined; to?: string | undefined }) {
  const limit = query.limit ?? LIMITS.page.defaultLimit;
  const scope = `${p.userId}:views.logbook`;
  const acc = loadAccount(deps, p);
  const done = acc.items.filter((i) => {
    if (i.a.status === 'open' || i.a.completedAt === null || !acc.isLoggable(i)) return false;
    const day = dayOf(i.a.completedAt);
    return (!query.from || day >= query.from) && (!query.to || day <= query.to);
  });
  // Newest first; ties by id.
  done.sort((x, y) => y.a.completedAt! - x.a.completedAt! || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  let start = 0;
  if (query.cursor) {
    const pos = decodeTupleCursor(deps.keys.cursor, scope, query.cursor, 1);
    const at = Number(pos.k[0]);
    start = done.findIndex((i) => i.a.completedAt! < at || (i.a.completedAt === at && i.id > pos.i));
    if (start < 0) start = done.length;
  }
  const page = done.slice(start, start + limit);
  const more = start + limit < done.length;
  const shown = presentPicked(deps, p, page.map((i) => i.id));
  const days: { date: string; todos: TodoOut[] }[] = [];
  for (const i of page) {
    const date = dayOf(i.a.completedAt!);
    if (days.at(-1)?.date !== date) days.push({ date, todos: [] });
    days.at(-1)!.todos.push(shown.get(i.id)!);
  }
  const last = page.at(-1);
  return { days, next_cursor: more && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [String(last.a.completedAt)], i: last.id }) : null };
}

/** Counts per view and open counts per live container (no to-do row is opened). */
export function overviewView(deps: Deps, p: Principal, query: { today?: string | undefined }) {
  const today = query.today ?? todayOf(deps);
  const acc = loadAccount(deps, p);
  const counts = { today: 0, upcoming: 0, anytime: 0, someday: 0, logbook: 0 };
  const perContainer = new Map<string, number>();
  for (const i of acc.items) {
    if (i.a.status !== 'open') {
      if (acc.isLoggable(i) && i.a.completedAt !== null) counts.logbook++;
      continue;
    }
    if (!acc.isLive(i)) continue;
    if (inToday(i, today)) counts.today++;
    if (upcomingDay(i, today)) counts.upcoming++;
    if (inAnytime(i, today)) counts.anytime++;
    if (i.a.someday) counts.someday++;
    if (i.parentId) perContainer.set(i.parentId, (perContainer.get(i.parentId) ?? 0) + 1);
  }
  const live = [...acc.containers.values()].filter((c) => !c.trashedBelow && !c.archivedBelow).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    date: today,
    counts,
    containers: live.map((c) => ({ id: c.row.id, kind: c.row.kind, parentId: c.row.parentId, openCount: perContainer.get(c.row.id) ?? 0 })),
  };
}
