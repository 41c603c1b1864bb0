// What the views share (docs/app.md): the route, the typing test for shortcuts, the notes'
// Markdown renderer, the row actions, the loading wrapper and the date labels.
import { type ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import { api, localToday, message, type Container, type In } from '../api.js';

export type Route =
  | { view: 'inbox' | 'today' | 'upcoming' | 'anytime' | 'someday' | 'logbook' | 'trash' | 'settings' }
  | { view: 'project' | 'area'; id: string }
  | { view: 'search'; q: string };

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

/** Everything a row can do; each write refetches the views when it settles. */
export function useActions(onError: (m: string) => void) {
  const qc = useQueryClient();
  const settle = { onError: (e: unknown) => onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const complete = useMutation({ mutationFn: (id: string) => api.todos.complete.mutate({ id, today: localToday() }), ...settle });
  const reopen = useMutation({ mutationFn: (id: string) => api.todos.reopen.mutate({ id }), ...settle });
  const cancel = useMutation({ mutationFn: (id: string) => api.todos.cancel.mutate({ id, today: localToday() }), ...settle });
  const update = useMutation({ mutationFn: (v: In['todos']['update']) => api.todos.update.mutate(v), ...settle });
  const move = useMutation({ mutationFn: (v: In['todos']['move']) => api.todos.move.mutate(v), ...settle });
  const trash = useMutation({ mutationFn: (id: string) => api.todos.trash.mutate({ id }), ...settle });
  const create = useMutation({ mutationFn: (v: In['todos']['create']) => api.todos.create.mutate(v), ...settle });
  return { complete, reopen, cancel, update, move, trash, create };
}
export type Actions = ReturnType<typeof useActions>;

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
