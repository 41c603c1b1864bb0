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
