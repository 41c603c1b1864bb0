// Optimistic updates (docs/app.md "Optimistic updates"): one to-do changed in every cached answer
// that holds it, whatever the view's shape. The shapes the views cache: a to-do itself
// (`todos.get`), `{todos}` and `{evening}` (Today), `{days: [{todos}]}` (Upcoming, Logbook),
// `{groups: [{todos}]}` (Anytime, Someday), `{data: [...]}` (lists, search, filters), and an
// infinite query's `{pages: [any of those]}` (the paged Anytime, Someday, Logbook). Pure, no
// DOM: tested in Node (test/app/cache.app.test.ts).

/** What a to-do looks like in a cached answer (a search hit, which has no status, is not one). */
type TodoLike = { id: string; status: string; checklist: unknown[] };
const isTodo = (v: unknown): v is TodoLike => typeof v === 'object' && v !== null && typeof (v as TodoLike).id === 'string' && typeof (v as TodoLike).status === 'string' && Array.isArray((v as TodoLike).checklist);

/** The keys under which the view answers hold their to-dos (or groups of them). */
const HOLDERS = ['todos', 'evening', 'days', 'groups', 'data', 'pages'] as const;

export type TodoEdit<T> = {
  /** The changed to-do, or null to take it out of lists (a single cached to-do is kept). */
  edit: (t: T) => T | null;
  /** Reorders a list holding the to-do (ids are the list's to-dos, in order); may return it unchanged. */
  reorder?: (ids: string[]) => string[];
};

/**
 * `data` with the to-do `id` changed by `change`: new objects along the changed paths, the same
 * object when nothing in it holds the to-do (so callers can tell what changed).
 */
export function patchCached<T extends TodoLike>(data: unknown, id: string, change: TodoEdit<T>): unknown {
  if (isTodo(data)) return data.id === id ? (change.edit(data as T) ?? data) : data;
  return walk(data, id, change);
}

function walk<T extends TodoLike>(data: unknown, id: string, change: TodoEdit<T>): unknown {
  if (Array.isArray(data)) {
    let changed = false;
    let out: unknown[] = [];
    for (const item of data) {
      if (isTodo(item) && item.id === id) {
        const next = change.edit(item as T);
        changed = true;
        if (next) out.push(next);
      } else {
        const next = isTodo(item) ? item : walk(item, id, change);
        if (next !== item) changed = true;
        out.push(next);
      }
    }
    if (change.reorder && out.some((t) => isTodo(t) && t.id === id)) {
      const byId = new Map(out.map((t) => [isTodo(t) ? t.id : '', t]));
      const ids = out.map((t) => (isTodo(t) ? t.id : ''));
      const order = ids.includes('') ? ids : change.reorder(ids);
      if (order.some((x, i) => x !== ids[i])) {
        out = order.map((x) => byId.get(x));
        changed = true;
      }
    }
    return changed ? out : data;
  }
  if (typeof data !== 'object' || data === null) return data;
  let out: Record<string, unknown> | undefined;
  for (const k of HOLDERS) {
    const v = (data as Record<string, unknown>)[k];
    if (v === undefined) continue;
    const next = walk(v, id, change);
    if (next !== v) (out ??= { ...(data as Record<string, unknown>) })[k] = next;
  }
  return out ?? data;
}

/** `ids` with `id` moved before `before` or after `after` (when that one is in the list). */
export function placeIn(ids: string[], id: string, target: { before?: string | null | undefined; after?: string | null | undefined }): string[] {
  const other = target.before ?? target.after;
  if (!other || other === id || !ids.includes(other) || !ids.includes(id)) return ids;
  const rest = ids.filter((x) => x !== id);
  const at = rest.indexOf(other) + (target.before ? 0 : 1);
  return [...rest.slice(0, at), id, ...rest.slice(at)];
}

/**
 * A new to-do's id, chosen in the browser (`todos.create` takes the client's own UPPERCASE UUID):
 * the optimistic row is the one the server keeps, so a change made to it while the create is in
 * flight (queued after it) names the right to-do. `crypto.getRandomValues`, not `randomUUID`,
 * which a page served over plain http from another machine (no secure context) lacks.
 */
export function newTodoId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** What insertCreated needs of a new to-do (the fields the views' rules read). */
type NewTodo = TodoLike & { parentId: string | null; headingId: string | null; whenDate: string | null; deadline: string | null; someday: boolean; evening: boolean };

/** Whether `data` holds a to-do with this id anywhere (an answer fetched after the server created it). */
function holds(data: unknown, id: string): boolean {
  let found = false;
  patchCached(data, id, { edit: (t) => ((found = true), t) });
  return found;
}

/**
 * `list` with `t` where the server's app order puts a new to-do (routers/views/account.ts): at the
 * end of its band (its project, no heading: the headingless to-dos come first in a project; the
 * standalone ones first of all), so after the band's last to-do in the list; with none of its band
 * there, first when standalone, else last (the refetch puts it right).
 */
function intoBand<T>(list: T[], t: NewTodo): T[] {
  let at = -1;
  list.forEach((x, i) => {
    if (isTodo(x) && (x as unknown as NewTodo).parentId === t.parentId && (x as unknown as NewTodo).headingId === null) at = i;
  });
  const i = at >= 0 ? at + 1 : t.parentId === null ? 0 : list.length;
  return [...list.slice(0, i), t as unknown as T, ...list.slice(i)];
}

/**
 * Optimistic create (docs/app.md "Optimistic updates"): `data`, the cached answer under `key`,
 * with the new to-do `t` added where that view shows it, by the server's rules
 * (routers/views/model.ts); the same object when the view does not show it or already holds it.
 * Today (`['view', 'today', today]`): its when-date or deadline has come; This Evening when
 * `evening`. Upcoming: the day of a future when-date (else a future deadline). Anytime and
 * Someday (paged): into the group of its project when one is loaded (a standalone one into the
 * first page's "no project" group, made if missing). A project's list (`['project-todos', id]`).
 * Recurring projections, filters and search are left to the refetch. Pure: tested in Node.
 */
export function insertCreated(key: readonly unknown[], data: unknown, t: NewTodo, today: string): unknown {
  if (data === undefined || holds(data, t.id)) return data;
  const d = data as Record<string, unknown>;
  if (key[0] === 'project-todos') {
    if (key[1] !== t.parentId || !Array.isArray(d.data)) return data;
    return { ...d, data: intoBand(d.data as unknown[], t) };
  }
  if (key[0] !== 'view' || key[2] !== today) return data;
  if (key[1] === 'today' && key.length === 3) {
    const due = (t.whenDate !== null && t.whenDate <= today) || (t.deadline !== null && t.deadline <= today);
    const which = t.evening ? 'evening' : 'todos';
    if (!due || !Array.isArray(d[which])) return data;
    return { ...d, [which]: intoBand(d[which] as unknown[], { ...t, overdue: t.deadline !== null && t.deadline < today } as NewTodo) };
  }
  if (key[1] === 'upcoming' && key.length === 3) {
    const day = t.someday && t.whenDate === null ? null : t.whenDate !== null ? (t.whenDate > today ? t.whenDate : null) : t.deadline !== null && t.deadline > today ? t.deadline : null;
    if (!day || !Array.isArray(d.days)) return data;
    const row = { ...t, projected: false, occursOn: day } as NewTodo;
    const days = d.days as { date: string; todos: unknown[] }[];
    const hit = days.findIndex((x) => x.date === day);
    if (hit >= 0) return { ...d, days: days.map((x, i) => (i === hit ? { ...x, todos: intoBand(x.todos, row) } : x)) };
    return { ...d, days: [...days, { date: day, todos: [row] }].sort((x, y) => (x.date < y.date ? -1 : x.date > y.date ? 1 : 0)) };
  }
  if ((key[1] === 'anytime' || key[1] === 'someday') && key[3] === 'paged') {
    const shows = key[1] === 'someday' ? t.someday : !t.someday && (t.whenDate === null || t.whenDate <= today);
    const pages = d.pages as { groups: { container: { id: string } | null; todos: unknown[] }[] }[] | undefined;
    if (!shows || !Array.isArray(pages)) return data;
    const mine = (g: { container: { id: string } | null }) => (g.container?.id ?? null) === t.parentId;
    // The last loaded group of its project (a page may end inside one and the next go on with it).
    let pi = -1;
    let gi = -1;
    pages.forEach((p, i) => p.groups.forEach((g, j) => mine(g) && ((pi = i), (gi = j))));
    if (pi < 0) {
      // Only a standalone to-do has a known place without its group: the first group of all.
      if (t.parentId !== null || pages.length === 0) return data;
      return { ...d, pages: pages.map((p, i) => (i === 0 ? { ...p, groups: [{ container: null, todos: [t] }, ...p.groups] } : p)) };
    }
    return {
      ...d,
      pages: pages.map((p, i) => (i !== pi ? p : { ...p, groups: p.groups.map((g, j) => (j === gi ? { ...g, todos: intoBand(g.todos, t) } : g)) })),
    };
  }
  return data;
}
