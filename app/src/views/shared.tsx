// What the views share (docs/app.md): the route, the typing test for shortcuts, the notes'
// Markdown (loaded on first use), the row actions, the loading wrapper and the date labels.
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { api, localToday, message, type Container, type In, type Todo } from '../api.js';
import { insertCreated, patchCached, placeIn, type TodoEdit } from '../cache.js';
import { type WeekStart } from '../recurrence.js';

export type Route =
  | { view: 'inbox' | 'today' | 'upcoming' | 'anytime' | 'someday' | 'logbook' | 'trash' | 'settings' }
  | { view: 'project' | 'area'; id: string }
  | { view: 'search'; q: string }
  // Notes (#/notes, #/notes/<folder id>) and saved filters (#/filters, #/filters/<filter id>).
  | { view: 'notes' | 'filters' }
  | { view: 'folder' | 'filter'; id: string };

/** A field that takes text (a checkbox or a button does not: shortcuts work there). */
export function isTyping(t: HTMLElement): boolean {
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  return t.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset'].includes((t as HTMLInputElement).type);
}

export type Ctx = { containers: Container[]; onError: (m: string) => void };

/** The renderer once its chunk has loaded (app/src/views/markdown.ts), shared by every note shown. */
let renderer: ((md: string) => string) | undefined;
let loading: Promise<(md: string) => string> | undefined;
function loadRenderer(): Promise<(md: string) => string> {
  loading ??= import('./markdown.js').then(
    (m) => (renderer = m.renderNotes),
    (e: unknown) => {
      // Offline before the chunk was ever fetched, say: the next note shown asks again.
      loading = undefined;
      throw e;
    },
  );
  return loading;
}

/**
 * Notes' Markdown as sanitised HTML (marked, then DOMPurify: markdown.ts), or undefined until the
 * renderer's chunk has loaded (the first note shown asks for it; it stays undefined if that fails).
 */
export function useMarkdown(md: string): string | undefined {
  const [render, setRender] = useState(() => renderer);
  useEffect(() => {
    if (render) return;
    let live = true;
    loadRenderer().then(
      (r) => live && setRender(() => r),
      (e: unknown) => console.warn('Cairn: the Markdown renderer did not load:', e),
    );
    return () => {
      live = false;
    };
  }, [render]);
  return useMemo(() => render?.(md), [render, md]);
}

/**
 * A note shown as Markdown: a region named `label` holding the sanitised HTML, or, until the
 * renderer has loaded, the same text as plain text (paragraphs at blank lines), never unsanitised HTML.
 */
export function Markdown({ md, label }: { md: string; label: string }) {
  const html = useMarkdown(md);
  if (html === undefined) {
    return (
      <div className="notes-preview" role="region" aria-label={label}>
        {md.split(/\n\s*\n/).map((p, i) => (
          <p key={i}>{p}</p>
        ))}
      </div>
    );
  }
  return <div className="notes-preview" role="region" aria-label={label} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** One checklist item at a time (`todos.checklist.*`), so ticking one cannot drop another. */
export type ChecklistOp =
  | { op: 'add'; id: string; itemId: string; title: string }
  | { op: 'update'; id: string; itemId: string; title?: string; done?: boolean }
  | { op: 'delete'; id: string; itemId: string }
  | { op: 'move'; id: string; itemId: string; before?: string; after?: string };

/** `todos.update`'s fields on a cached to-do, field by field (docs/app.md "Optimistic updates"). */
function applyUpdate<T extends Todo>(t: T, v: In['todos']['update']): T {
  const n = { ...t };
  if (v.title !== undefined) n.title = v.title;
  if (v.notes !== undefined) n.notes = v.notes;
  if (v.whenDate !== undefined) n.whenDate = v.whenDate;
  if (v.evening !== undefined) n.evening = v.evening;
  if (v.someday !== undefined) n.someday = v.someday;
  if (v.deadline !== undefined) n.deadline = v.deadline;
  if (v.priority !== undefined) n.priority = v.priority;
  if (v.tags !== undefined) n.tags = v.tags;
  if (v.recurrence !== undefined) n.recurrence = v.recurrence;
  if (v.checklist !== undefined) n.checklist = v.checklist.map((c, i) => ({ id: c.id ?? `new-${i}`, title: c.title, done: c.done ?? false }));
  return n;
}

function applyChecklist(list: Todo['checklist'], v: ChecklistOp): Todo['checklist'] {
  switch (v.op) {
    case 'add':
      return list.some((c) => c.id === v.itemId) ? list : [...list, { id: v.itemId, title: v.title, done: false }];
    case 'update':
      return list.map((c) => (c.id === v.itemId ? { id: c.id, title: v.title ?? c.title, done: v.done ?? c.done } : c));
    case 'delete':
      return list.filter((c) => c.id !== v.itemId);
    case 'move': {
      const order = placeIn(list.map((c) => c.id), v.itemId, v);
      return order.map((id) => list.find((c) => c.id === id)!);
    }
  }
}

/** A new to-do as the views show it, from `todos.create`'s input, until the server's answer replaces it. */
function draftOf(v: NewTodoInput): Todo {
  const now = new Date().toISOString();
  return {
    id: v.id,
    title: v.title,
    notes: v.notes ?? null,
    status: 'open',
    completedAt: null,
    whenDate: v.whenDate ?? null,
    evening: v.evening ?? false,
    someday: v.someday ?? false,
    deadline: v.deadline ?? null,
    priority: v.priority ?? null,
    tags: v.tags ?? [],
    checklist: (v.checklist ?? []).map((c, i) => ({ id: c.id ?? `new-${i}`, title: c.title, done: c.done ?? false })),
    recurrence: v.recurrence ?? null,
    parentId: v.parentId ?? null,
    headingId: v.headingId ?? null,
    sortKey: '',
    trashedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** `todos.create`'s input with the id chosen in the browser (cache.ts newTodoId). */
export type NewTodoInput = In['todos']['create'] & { id: string };

/**
 * Everything a row can do. The writes are optimistic: the to-do changes at once in every cached
 * view holding it (app/src/cache.ts), a new one appears where the views show it, rolls back with
 * the server's message as an alert when it refuses, and every view is refetched when the write settles.
 */
export function useActions(onError: (m: string) => void) {
  const qc = useQueryClient();
  // A change to a to-do (patchCached), or a new to-do (`insert`: where each cached view shows it).
  type Change = { id: string; insert?: (key: QueryKey, data: unknown) => unknown } & TodoEdit<Todo>;
  const apply = (c: Change, key: QueryKey, data: unknown) => (c.insert ? c.insert(key, data) : patchCached(data, c.id, c));
  type Ctx = { snapshot: [QueryKey, unknown][]; change: Change };
  // The changes whose writes are in flight. A view fetched meanwhile (live updates, another
  // write's refetch) is answered from before them: they are applied to it again as it lands.
  const inFlight = useRef(new Set<Change>()).current;
  useEffect(
    () =>
      qc.getQueryCache().subscribe((ev) => {
        if (ev.type !== 'updated' || ev.action.type !== 'success' || ev.action.manual || !inFlight.size) return;
        const data = ev.query.state.data;
        let next: unknown = data;
        for (const c of inFlight) next = apply(c, ev.query.queryKey, next);
        if (next !== data) ev.query.setData(next, { manual: true });
      }),
    [qc, inFlight],
  );
  const optimistic = <V,>(change: (v: V) => Change) => ({
    // One after the other, in the order they were made: two moves sent at once could otherwise
    // reach the server in either order. Each shows at once all the same (onMutate runs first).
    scope: { id: 'cairn-todo-writes' },
    onMutate: (v: V): Ctx => {
      const c = change(v);
      inFlight.add(c);
      const snapshot: Ctx['snapshot'] = [];
      for (const [key, data] of qc.getQueriesData({})) {
        const next = apply(c, key, data);
        if (next !== data) {
          snapshot.push([key, data]);
          qc.setQueryData(key, next);
        }
      }
      return { snapshot, change: c };
    },
    onError: (e: unknown, _v: V, ctx: Ctx | undefined) => {
      if (ctx) inFlight.delete(ctx.change);
      // Back to before this change, keeping the later ones still in flight.
      for (const [key, data] of ctx?.snapshot ?? []) {
        let back: unknown = data;
        for (const c of inFlight) back = apply(c, key, back);
        qc.setQueryData(key, back);
      }
      onError(message(e));
    },
    // The last write to settle refetches: an earlier one's refetch would only be patched again.
    onSettled: (_d: unknown, _e: unknown, _v: V, ctx: Ctx | undefined) => {
      if (ctx) inFlight.delete(ctx.change);
      return qc.isMutating() <= 1 ? qc.invalidateQueries() : undefined;
    },
  });
  const now = () => new Date().toISOString();
  const complete = useMutation({ mutationFn: (id: string) => api.todos.complete.mutate({ id, today: localToday() }), ...optimistic((id: string) => ({ id, edit: (t) => ({ ...t, status: 'completed', completedAt: now() }) })) });
  const reopen = useMutation({ mutationFn: (id: string) => api.todos.reopen.mutate({ id }), ...optimistic((id: string) => ({ id, edit: (t) => ({ ...t, status: 'open', completedAt: null }) })) });
  const cancel = useMutation({ mutationFn: (id: string) => api.todos.cancel.mutate({ id, today: localToday() }), ...optimistic((id: string) => ({ id, edit: (t) => ({ ...t, status: 'canceled', completedAt: now() }) })) });
  const update = useMutation({ mutationFn: (v: In['todos']['update']) => api.todos.update.mutate(v), ...optimistic((v: In['todos']['update']) => ({ id: v.id, edit: (t) => applyUpdate(t, v) })) });
  const move = useMutation({
    mutationFn: (v: In['todos']['move']) => api.todos.move.mutate(v),
    ...optimistic((v: In['todos']['move']) => ({ id: v.id, edit: (t) => ({ ...t, parentId: v.parentId, headingId: v.headingId ?? null }), reorder: (ids) => placeIn(ids, v.id, v) })),
  });
  // Out of every list at once; a to-do cached on its own (`todos.get`) stays until the refetch.
  const trash = useMutation({ mutationFn: (id: string) => api.todos.trash.mutate({ id }), ...optimistic((id: string) => ({ id, edit: () => null })) });
  const checklist = useMutation({
    mutationFn: (v: ChecklistOp) => {
      switch (v.op) {
        case 'add':
          return api.todos.checklist.add.mutate({ id: v.id, itemId: v.itemId, title: v.title });
        case 'update':
          return api.todos.checklist.update.mutate({ id: v.id, itemId: v.itemId, ...(v.title !== undefined ? { title: v.title } : {}), ...(v.done !== undefined ? { done: v.done } : {}) });
        case 'delete':
          return api.todos.checklist.delete.mutate({ id: v.id, itemId: v.itemId });
        case 'move':
          return api.todos.checklist.move.mutate({ id: v.id, itemId: v.itemId, ...(v.before ? { before: v.before } : {}), ...(v.after ? { after: v.after } : {}) });
      }
    },
    ...optimistic((v: ChecklistOp) => ({ id: v.id, edit: (t) => ({ ...t, checklist: applyChecklist(t.checklist, v) }) })),
  });
  // The new row shows at once where the views show it, under the id the server will keep; the
  // server's answer then replaces the draft (a view's own fields, `overdue`, `occursOn`, stay).
  const create = useMutation({
    mutationFn: (v: NewTodoInput) => api.todos.create.mutate(v),
    ...optimistic((v: NewTodoInput) => {
      const t = draftOf(v);
      const today = localToday();
      return { id: v.id, edit: (x) => x, insert: (key, data) => insertCreated(key, data, t, today) };
    }),
    onSuccess: (saved: Todo) => {
      for (const [key, data] of qc.getQueriesData({})) {
        let next = patchCached(data, saved.id, { edit: (x) => ({ ...x, ...saved }) });
        if (next === data) continue;
        // A change made to the new row meanwhile (queued after the create) stays on it.
        for (const c of inFlight) next = apply(c, key, next);
        qc.setQueryData(key, next);
      }
    },
  });
  return { complete, reopen, cancel, update, move, trash, checklist, create };
}
export type Actions = ReturnType<typeof useActions>;

/** The account's first day of the week (Settings; `settings.get`), Monday until it loads. */
export function useWeekStart(): WeekStart {
  const q = useQuery({ queryKey: ['settings'], queryFn: () => api.settings.get.query(), staleTime: 60_000 });
  return q.data?.weekStart ?? 'monday';
}

export type ListProps = {
  ctx: Ctx;
  actions: Actions;
  selected: string | undefined;
  setSelected: (id: string | undefined) => void;
  open: { id: string; focus?: 'deadline' | 'move' } | undefined;
  setOpen: (o: { id: string; focus?: 'deadline' | 'move' } | undefined) => void;
};

export function Loading({ q, children }: { q: { isPending: boolean; error: unknown }; children: () => ReactNode }) {
  if (q.isPending) return <p role="status">Loading…</p>;
  if (q.error) return <p role="alert">{message(q.error)}</p>;
  return <>{children()}</>;
}

export function longDate(d: string): string {
  return new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { weekday: 'long', month: 'long', day: 'numeric' });
}
export function shortDate(d: string): string {
  if (d === localToday()) return 'Today';
  return new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}
