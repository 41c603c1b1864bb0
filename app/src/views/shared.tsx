// What the views share (docs/app.md): the route, the typing test for shortcuts, the notes'
// Markdown renderer, the row actions, the loading wrapper and the date labels.
import { type ReactNode, useEffect, useRef } from 'react';
import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import { api, localToday, message, type Container, type In, type Todo } from '../api.js';
import { patchCached, placeIn, type TodoEdit } from '../cache.js';
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

/**
 * Notes are Markdown rendered through DOMPurify with a short list of tags and attributes: no
 * script, no style attribute (the CSP would refuse it anyway), no image (no third-party origin),
 * links only to http(s) and mailto.
 */
const PURIFY = {
  ALLOWED_TAGS: ['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'ul', 'ol', 'li', 'a', 'blockquote', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
  ALLOWED_ATTR: ['href', 'title'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
});
/**
 * Raw HTML inside the Markdown is shown as text, never parsed: even an inert parse of a `style`
 * or `on…` attribute makes Chromium report a CSP violation, and nothing a note needs is HTML.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const markdown = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => esc(text) } });
export function renderNotes(md: string): string {
  return DOMPurify.sanitize(markdown.parse(md, { async: false }), PURIFY);
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

/**
 * Everything a row can do. The writes on an existing to-do are optimistic: the to-do changes at
 * once in every cached view holding it (app/src/cache.ts), rolls back with the server's message
 * as an alert when it refuses, and every view is refetched when the write settles.
 */
export function useActions(onError: (m: string) => void) {
  const qc = useQueryClient();
  const settle = { onError: (e: unknown) => onError(message(e)), onSettled: () => qc.invalidateQueries() };
  type Change = { id: string } & TodoEdit<Todo>;
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
        for (const c of inFlight) next = patchCached(next, c.id, c);
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
        const next = patchCached(data, c.id, c);
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
        for (const c of inFlight) back = patchCached(back, c.id, c);
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
  const create = useMutation({ mutationFn: (v: In['todos']['create']) => api.todos.create.mutate(v), ...settle });
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
