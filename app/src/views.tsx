// The views (Things' model, spec §4.12): Inbox, Today with This Evening, Upcoming, Anytime,
// Someday, Logbook, Trash, an area, a project with its headings, search results. Every view is
// asked with the browser's local date as `today`. To-do rows are listitems holding a checkbox
// named by the title; a row opens in place as a region named by the title (docs/app.md).
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import { api, localToday, message, type Container, type In, type Todo } from './api.js';
import { parseQuick } from './quick.js';

export type Route =
  | { view: 'inbox' | 'today' | 'upcoming' | 'anytime' | 'someday' | 'logbook' | 'trash' | 'settings' }
  | { view: 'project' | 'area'; id: string }
  | { view: 'search'; q: string };

/** A field that takes text (a checkbox or a button does not: shortcuts work there). */
export function isTyping(t: HTMLElement): boolean {
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  return t.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset'].includes((t as HTMLInputElement).type);
}

type Ctx = { containers: Container[]; onError: (m: string) => void };

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
function useActions(onError: (m: string) => void) {
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
type Actions = ReturnType<typeof useActions>;

export function Views({ route, title, containers, onError }: { route: Route; title: string; containers: Container[]; onError: (m: string) => void }) {
  const ctx: Ctx = { containers, onError };
  const [selected, setSelected] = useState<string | undefined>();
  const [open, setOpen] = useState<{ id: string; focus?: 'deadline' | 'move' } | undefined>();
  const actions = useActions(onError);
  const quick = useRef<HTMLInputElement>(null);
  const key = route.view + ('id' in route ? route.id : '') + ('q' in route ? route.q : '');
  useEffect(() => {
    setSelected(undefined);
    setOpen(undefined);
  }, [key]);

  // Row shortcuts (docs/app.md "Keyboard"): act on the selected row; never while typing.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target as HTMLElement) || e.altKey) return;
      if (document.querySelector('[role=dialog][aria-modal=true]')) return;
      const rows = [...document.querySelectorAll<HTMLElement>('main [data-todo]')];
      const ids = rows.map((r) => r.dataset.todo!);
      const i = selected ? ids.indexOf(selected) : -1;
      const todo = i >= 0 ? (JSON.parse(rows[i]!.dataset.state!) as { status: string; parentId: string | null; headingId: string | null }) : undefined;
      // Ctrl/⌘+↑/↓: move the selected to-do before the previous row (after the next one) of its
      // own list, in its project's (or the standalone) order (spec §4.3 band order).
      if ((e.ctrlKey || e.metaKey) && (e.key === 'ArrowUp' || e.key === 'ArrowDown') && selected && todo) {
        const siblings = [...rows[i]!.parentElement!.children].map((c) => (c as HTMLElement).dataset.todo).filter(Boolean) as string[];
        const at = siblings.indexOf(selected);
        const other = siblings[e.key === 'ArrowUp' ? at - 1 : at + 1];
        if (other) {
          e.preventDefault();
          actions.move.mutate({ id: selected, parentId: todo.parentId, headingId: todo.headingId, ...(e.key === 'ArrowUp' ? { before: other } : { after: other }) });
        }
        return;
      }
      if (e.ctrlKey || e.metaKey) return;
      const pick = (n: number) => {
        const id = ids[Math.max(0, Math.min(ids.length - 1, n))];
        if (!id) return;
        setSelected(id);
        rows[ids.indexOf(id)]?.querySelector<HTMLElement>('input[type=checkbox]')?.focus();
      };
      switch (e.key) {
        case 'n':
          e.preventDefault();
          quick.current?.focus();
          return;
        case 'j':
          pick(i + 1);
          return;
        case 'k':
          pick(i < 0 ? 0 : i - 1);
          return;
      }
      if (!selected || !todo) return;
      switch (e.key) {
        case 'x':
          if (todo.status === 'open') actions.complete.mutate(selected);
          else actions.reopen.mutate(selected);
          break;
        case 't':
          actions.update.mutate({ id: selected, whenDate: localToday(), evening: false, someday: false });
          break;
        case 'e':
          actions.update.mutate({ id: selected, whenDate: localToday(), evening: true, someday: false });
          break;
        case 's':
          actions.update.mutate({ id: selected, whenDate: null, evening: false, someday: true });
          break;
        case 'd':
          setOpen({ id: selected, focus: 'deadline' });
          break;
        case 'm':
          setOpen({ id: selected, focus: 'move' });
          break;
        case 'Enter':
          setOpen({ id: selected });
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [selected, actions]);

  const list = { ctx, actions, selected, setSelected, open, setOpen };
  const defaults: Partial<In['todos']['create']> =
    route.view === 'today' ? { whenDate: localToday() } : route.view === 'someday' ? { someday: true } : route.view === 'project' ? { parentId: route.id } : {};
  // The Inbox has its own capture box (spec §4.11): captures are not to-dos until processed.
  const showQuick = ['today', 'upcoming', 'anytime', 'someday', 'project'].includes(route.view);
  return (
    <>
      <h1>{title}</h1>
      {showQuick && <QuickEntry inputRef={quick} defaults={defaults} ctx={ctx} actions={actions} />}
      {route.view === 'today' && <TodayView {...list} />}
      {route.view === 'upcoming' && <UpcomingView {...list} />}
      {(route.view === 'anytime' || route.view === 'someday') && <GroupedView which={route.view} {...list} />}
      {route.view === 'logbook' && <LogbookView {...list} />}
      {route.view === 'inbox' && <InboxView ctx={ctx} />}
      {route.view === 'trash' && <TrashView ctx={ctx} />}
      {route.view === 'project' && <ProjectView id={route.id} {...list} />}
      {route.view === 'area' && <AreaView id={route.id} {...list} />}
      {route.view === 'search' && <SearchView q={route.q} {...list} />}
    </>
  );
}

type ListProps = {
  ctx: Ctx;
  actions: Actions;
  selected: string | undefined;
  setSelected: (id: string | undefined) => void;
  open: { id: string; focus?: 'deadline' | 'move' } | undefined;
  setOpen: (o: { id: string; focus?: 'deadline' | 'move' } | undefined) => void;
};

function Loading({ q, children }: { q: { isPending: boolean; error: unknown }; children: () => ReactNode }) {
  if (q.isPending) return <p role="status">Loading…</p>;
  if (q.error) return <p role="alert">{message(q.error)}</p>;
  return <>{children()}</>;
}

function TodayView(p: ListProps) {
  const today = localToday();
  const q = useQuery({ queryKey: ['view', 'today', today], queryFn: () => api.views.today.query({ today }) });
  return (
    <Loading q={q}>
      {() => (
        <>
          <TodoList label="Today" todos={q.data!.todos} {...p} empty="Nothing for today." />
          <section aria-labelledby="evening-h">
            <h2 id="evening-h">This Evening</h2>
            <TodoList label="This Evening" todos={q.data!.evening} {...p} empty="Nothing for this evening." />
          </section>
        </>
      )}
    </Loading>
  );
}

function UpcomingView(p: ListProps) {
  const today = localToday();
  const q = useQuery({ queryKey: ['view', 'upcoming', today], queryFn: () => api.views.upcoming.query({ today }) });
  return (
    <Loading q={q}>
      {() =>
        q.data!.days.length === 0 ? (
          <p>Nothing upcoming.</p>
        ) : (
          q.data!.days.map((d) => (
            <section key={d.date} aria-labelledby={`d-${d.date}`}>
              <h2 id={`d-${d.date}`}>{longDate(d.date)}</h2>
              <TodoList label={longDate(d.date)} todos={d.todos} {...p} keyOf={(t) => `${t.id}:${(t as { occursOn?: string }).occursOn ?? ''}`} />
            </section>
          ))
        )
      }
    </Loading>
  );
}

function GroupedView({ which, ...p }: ListProps & { which: 'anytime' | 'someday' }) {
  const today = localToday();
  const q = useQuery({ queryKey: ['view', which, today], queryFn: () => (which === 'anytime' ? api.views.anytime.query({ today, limit: 200 }) : api.views.someday.query({ today, limit: 200 })) });
  return (
    <Loading q={q}>
      {() =>
        q.data!.groups.length === 0 ? (
          <p>Nothing here.</p>
        ) : (
          q.data!.groups.map((g) => (
            <section key={g.container?.id ?? 'none'} aria-label={g.container?.name ?? 'No project'}>
              <h2>{g.container?.name ?? 'No project'}</h2>
              <TodoList label={g.container?.name ?? 'No project'} todos={g.todos} {...p} />
            </section>
          ))
        )
      }
    </Loading>
  );
}

function LogbookView(p: ListProps) {
  const today = localToday();
  const q = useQuery({ queryKey: ['view', 'logbook', today], queryFn: () => api.views.logbook.query({ today, limit: 200 }) });
  return (
    <Loading q={q}>
      {() =>
        q.data!.days.length === 0 ? (
          <p>Nothing completed yet.</p>
        ) : (
          q.data!.days.map((d) => (
            <section key={d.date} aria-labelledby={`l-${d.date}`}>
              <h2 id={`l-${d.date}`}>{longDate(d.date)}</h2>
              <TodoList label={longDate(d.date)} todos={d.todos} {...p} />
            </section>
          ))
        )
      }
    </Loading>
  );
}

function InboxView({ ctx }: { ctx: Ctx }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['inbox'], queryFn: () => api.inbox.list.query({ limit: 200, status: 'open' }) });
  const capture = useMutation({
    mutationFn: (text: string) => (/^https?:\/\/\S+$/.test(text) ? api.inbox.create.mutate({ kind: 'url', url: text }) : api.inbox.create.mutate({ kind: 'text', text })),
    onError: (e) => ctx.onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  // Spec §4.11: the capture becomes a standalone to-do (its url kept as an attachment).
  const toTodo = useMutation({ mutationFn: (id: string) => api.inbox.move.mutate({ id }), onError: (e) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() });
  const [text, setText] = useState('');
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) capture.mutate(text.trim(), { onSuccess: () => setText('') });
        }}
      >
        <label>
          Capture <input type="text" aria-label="New capture" value={text} onChange={(e) => setText(e.target.value)} placeholder="A thought or a link" />
        </label>{' '}
        <button type="submit">Capture</button>
      </form>
      <Loading q={q}>
        {() => (
          <ul aria-label="Captures" className="todos">
            {q.data!.data.length === 0 && <li>The inbox is empty.</li>}
            {q.data!.data.map((i) => (
              <li key={i.id} className="row">
                <span className="title">{i.title ?? i.text ?? i.url ?? i.kind}</span> {i.url && <span className="badge">{i.url}</span>}
                <button type="button" aria-label={`Make a to-do of ${i.title ?? i.text ?? i.url ?? i.kind}`} onClick={() => toTodo.mutate(i.id)}>
                  Make to-do
                </button>
              </li>
            ))}
          </ul>
        )}
      </Loading>
    </>
  );
}

function TrashView({ ctx }: { ctx: Ctx }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['trash'], queryFn: () => api.trash.list.query({ limit: 200 }) });
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const restore = useMutation({
    mutationFn: async (i: { type: string; id: string }): Promise<void> => {
      if (i.type === 'todo') await api.todos.restore.mutate({ id: i.id });
      else if (i.type === 'container') await api.containers.restore.mutate({ id: i.id });
      else await api.notes.restore.mutate({ id: i.id });
    },
    ...settle,
  });
  const empty = useMutation({ mutationFn: () => api.trash.empty.mutate({}), ...settle });
  return (
    <Loading q={q}>
      {() => (
        <>
          <ul aria-label="Trash" className="todos">
            {q.data!.data.length === 0 && <li>The trash is empty.</li>}
            {q.data!.data.map((i) => (
              <li key={i.id} className="row">
                <span className="title">{i.title}</span> <span className="badge">{i.type.replace('_', ' ')}</span>
                {i.type !== 'note_folder' && (
                  <button type="button" onClick={() => restore.mutate(i)} aria-label={`Restore ${i.title}`}>Restore</button>
                )}
              </li>
            ))}
          </ul>
          {q.data!.data.length > 0 && (
            <p>
              <button type="button" onClick={() => confirm('Delete everything in the trash for good?') && empty.mutate()}>Empty Trash</button>
            </p>
          )}
        </>
      )}
    </Loading>
  );
}

function ProjectView({ id, ...p }: ListProps & { id: string }) {
  const qc = useQueryClient();
  const project = useQuery({ queryKey: ['container', id], queryFn: () => api.containers.get.query({ id }) });
  const headings = useQuery({ queryKey: ['headings', id], queryFn: () => api.headings.list.query({ project_id: id, limit: 200 }) });
  const todos = useQuery({ queryKey: ['project-todos', id], queryFn: () => api.todos.list.query({ parent_id: id, limit: 200 }) });
  const [name, setName] = useState('');
  const addHeading = useMutation({
    mutationFn: (n: string) => api.headings.create.mutate({ projectId: id, name: n }),
    onError: (e) => p.ctx.onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const open = (todos.data?.data ?? []).filter((t) => t.status === 'open');
  return (
    <Loading q={{ isPending: project.isPending || headings.isPending || todos.isPending, error: project.error ?? headings.error ?? todos.error }}>
      {() => (
        <>
          {project.data!.notes && <div className="notes-preview" dangerouslySetInnerHTML={{ __html: renderNotes(project.data!.notes) }} />}
          <TodoList label={project.data!.name} todos={open.filter((t) => !t.headingId)} {...p} empty="" />
          {headings.data!.data.map((h) => (
            <section key={h.id} aria-labelledby={`h-${h.id}`}>
              <h2 id={`h-${h.id}`}>{h.name}</h2>
              <TodoList label={h.name} todos={open.filter((t) => t.headingId === h.id)} {...p} empty="" />
            </section>
          ))}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (name.trim()) addHeading.mutate(name.trim(), { onSuccess: () => setName('') });
            }}
          >
            <input type="text" aria-label="New heading" placeholder="New heading" value={name} onChange={(e) => setName(e.target.value)} /> <button type="submit">Add heading</button>
          </form>
        </>
      )}
    </Loading>
  );
}

function AreaView({ id, ...p }: ListProps & { id: string }) {
  const todos = useQuery({ queryKey: ['project-todos', id], queryFn: () => api.todos.list.query({ parent_id: id, limit: 200 }) });
  const projects = p.ctx.containers.filter((c) => c.parentId === id);
  return (
    <>
      <ul aria-label="Projects in this area">
        {projects.map((c) => (
          <li key={c.id}>
            <a href={`#/project/${c.id}`}>{c.name}</a>
          </li>
        ))}
      </ul>
      <Loading q={todos}>{() => <TodoList label="To-dos in this area" todos={todos.data!.data.filter((t) => t.status === 'open')} {...p} />}</Loading>
    </>
  );
}

function SearchView({ q: text, ...p }: ListProps & { q: string }) {
  const q = useQuery({ queryKey: ['search', text], queryFn: () => api.search.search.query({ q: text, limit: 50 }), enabled: !!text.trim() });
  return (
    <Loading q={q}>
      {() => (
        <>
          <p>Results for “{text}”</p>
          <ul aria-label="Search results" className="todos">
            {q.data!.data.length === 0 && <li>No matches.</li>}
            {q.data!.data.map((h) => (
              <li key={`${h.type}:${h.id}`}>
                {h.type === 'container' ? <a href={`#/project/${h.id}`}>{h.title}</a> : h.type === 'todo' ? <button type="button" className="title" onClick={() => p.setOpen({ id: h.id })}>{h.title}</button> : <span>{h.title}</span>}{' '}
                <span className="badge">{h.type}</span> {h.snippet && h.snippet !== h.title && <span className="snippet">{h.snippet}</span>}
                {h.type === 'todo' && p.open?.id === h.id && <EditorById id={h.id} {...p} />}
              </li>
            ))}
          </ul>
        </>
      )}
    </Loading>
  );
}

function EditorById({ id, ...p }: ListProps & { id: string }) {
  const q = useQuery({ queryKey: ['todo', id], queryFn: () => api.todos.get.query({ id }) });
  return <Loading q={q}>{() => <Editor todo={q.data!} {...p} />}</Loading>;
}

function longDate(d: string): string {
  return new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { weekday: 'long', month: 'long', day: 'numeric' });
}
function shortDate(d: string): string {
  if (d === localToday()) return 'Today';
  return new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

function TodoList({ label, todos, empty, keyOf, ...p }: ListProps & { label: string; todos: Todo[]; empty?: string; keyOf?: (t: Todo) => string }) {
  if (!todos.length) return empty ? <p>{empty}</p> : null;
  return (
    <ul className="todos" aria-label={label}>
      {todos.map((t) => (
        <TodoRow key={keyOf ? keyOf(t) : t.id} todo={t} {...p} />
      ))}
    </ul>
  );
}

function TodoRow({ todo, ...p }: ListProps & { todo: Todo }) {
  // Optimistic: the box shows the new state at once and rolls back when the server refuses
  // (the refusal is shown as an alert by useActions).
  const [pending, setPending] = useState<boolean | undefined>();
  const done = pending ?? todo.status !== 'open';
  const project = todo.parentId ? p.ctx.containers.find((c) => c.id === todo.parentId) : undefined;
  const isOpen = p.open?.id === todo.id;
  const checked = todo.checklist.filter((c) => c.done).length;
  return (
    <li data-todo={todo.id} data-state={JSON.stringify({ status: todo.status, parentId: todo.parentId, headingId: todo.headingId })} className={p.selected === todo.id ? 'selected' : ''} onFocus={() => p.setSelected(todo.id)}>
      <div className="row">
        <input
          type="checkbox"
          aria-label={todo.title}
          checked={done}
          onChange={(e) => {
            const on = e.target.checked;
            setPending(on);
            (on ? p.actions.complete : p.actions.reopen).mutate(todo.id, { onSettled: () => setPending(undefined) });
          }}
        />
        <button type="button" className="title" aria-expanded={isOpen} onClick={() => p.setOpen(isOpen ? undefined : { id: todo.id })}>
          {todo.title}
        </button>
        {todo.evening && <span className="badge">This Evening</span>}
        {todo.someday && <span className="badge">Someday</span>}
        {todo.whenDate && !todo.evening && <span className="badge">{shortDate(todo.whenDate)}</span>}
        {todo.deadline && <span className="badge deadline">Due {shortDate(todo.deadline)}</span>}
        {todo.tags.map((t) => (
          <span key={t} className="badge">#{t}</span>
        ))}
        {todo.checklist.length > 0 && <span className="badge" aria-label={`Checklist ${checked} of ${todo.checklist.length}`}>{checked}/{todo.checklist.length}</span>}
        {project && <span className="badge">{project.name}</span>}
      </div>
      {isOpen && <Editor todo={todo} {...p} />}
    </li>
  );
}

/** A to-do opened in place: a region named by its title. Each field saves when it changes. */
function Editor({ todo, ...p }: ListProps & { todo: Todo }) {
  const { update, move, trash } = p.actions;
  const [title, setTitle] = useState(todo.title);
  const [notes, setNotes] = useState(todo.notes ?? '');
  const [tags, setTags] = useState(todo.tags.join(', '));
  const [item, setItem] = useState('');
  const deadline = useRef<HTMLInputElement>(null);
  const moveTo = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (p.open?.focus === 'deadline') deadline.current?.focus();
    else if (p.open?.focus === 'move') moveTo.current?.focus();
  }, [p.open?.focus]);
  const save = (patch: Omit<In['todos']['update'], 'id'>) => update.mutate({ id: todo.id, ...patch });
  const projects = p.ctx.containers.filter((c) => c.kind !== 'area');
  const html = useMemo(() => renderNotes(notes), [notes]);
  return (
    <section className="editor" aria-label={todo.title}>
      <label>
        Title
        <input type="text" value={title} onChange={(e) => setTitle(e.target.value)} onBlur={() => title.trim() && title !== todo.title && save({ title: title.trim() })} />
      </label>
      <label>
        Notes
        <textarea value={notes} onChange={(e) => setNotes(e.target.value)} onBlur={() => notes !== (todo.notes ?? '') && save({ notes: notes || null })} />
      </label>
      {notes && <div className="notes-preview" aria-label="Notes preview" role="region" dangerouslySetInnerHTML={{ __html: html }} />}
      <div className="buttons" role="group" aria-label="When">
        <button type="button" aria-pressed={todo.whenDate === localToday() && !todo.evening} onClick={() => save({ whenDate: localToday(), evening: false, someday: false })}>Today</button>
        <button type="button" aria-pressed={todo.evening} onClick={() => save({ whenDate: localToday(), evening: true, someday: false })}>This Evening</button>
        <button type="button" aria-pressed={todo.someday} onClick={() => save({ whenDate: null, evening: false, someday: true })}>Someday</button>
        <label>
          When date <input type="date" value={todo.whenDate ?? ''} onChange={(e) => save({ whenDate: e.target.value || null, evening: false, someday: false })} />
        </label>
        <button type="button" onClick={() => save({ whenDate: null, evening: false, someday: false })}>Clear when</button>
      </div>
      <label>
        Deadline <input type="date" ref={deadline} value={todo.deadline ?? ''} onChange={(e) => save({ deadline: e.target.value || null })} />
      </label>
      <label>
        Tags (comma-separated)
        <input type="text" value={tags} onChange={(e) => setTags(e.target.value)} onBlur={() => save({ tags: tags.split(',').map((t) => t.trim()).filter(Boolean) })} />
      </label>
      <fieldset>
        <legend>Checklist</legend>
        <ul aria-label="Checklist">
          {todo.checklist.map((c) => (
            <li key={c.id}>
              <label>
                <input type="checkbox" checked={c.done} onChange={(e) => save({ checklist: todo.checklist.map((x) => ({ id: x.id, title: x.title, done: x.id === c.id ? e.target.checked : x.done })) })} /> {c.title}
              </label>
            </li>
          ))}
        </ul>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (item.trim()) save({ checklist: [...todo.checklist.map((x) => ({ id: x.id, title: x.title, done: x.done })), { title: item.trim() }] });
            setItem('');
          }}
        >
          <input type="text" aria-label="New checklist item" value={item} onChange={(e) => setItem(e.target.value)} /> <button type="submit">Add item</button>
        </form>
      </fieldset>
      <label>
        Project
        <select ref={moveTo} value={todo.parentId ?? ''} onChange={(e) => move.mutate({ id: todo.id, parentId: e.target.value || null })}>
          <option value="">No project</option>
          {projects.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Priority
        <select value={todo.priority ?? ''} onChange={(e) => save({ priority: (e.target.value || null) as Todo['priority'] })}>
          <option value="">None</option>
          <option value="low">Low</option>
          <option value="medium">Medium</option>
          <option value="high">High</option>
        </select>
      </label>
      {todo.parentId && <HeadingPicker todo={todo} onMove={(headingId) => move.mutate({ id: todo.id, parentId: todo.parentId, headingId })} />}
      <div className="buttons">
        <button type="button" onClick={() => p.setOpen(undefined)}>Close</button>
        {todo.status === 'open' && <button type="button" onClick={() => p.actions.cancel.mutate(todo.id)}>Cancel to-do</button>}
        <button type="button" onClick={() => trash.mutate(todo.id)}>Move to Trash</button>
      </div>
    </section>
  );
}

function HeadingPicker({ todo, onMove }: { todo: Todo; onMove: (headingId: string | null) => void }) {
  const q = useQuery({ queryKey: ['headings', todo.parentId], queryFn: () => api.headings.list.query({ project_id: todo.parentId!, limit: 200 }) });
  if (!q.data?.data.length) return null;
  return (
    <label>
      Heading
      <select value={todo.headingId ?? ''} onChange={(e) => onMove(e.target.value || null)}>
        <option value="">No heading</option>
        {q.data.data.map((h) => (
          <option key={h.id} value={h.id}>
            {h.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function QuickEntry({ inputRef, defaults, ctx, actions }: { inputRef: React.RefObject<HTMLInputElement | null>; defaults: Partial<In['todos']['create']>; ctx: Ctx; actions: Actions }) {
  const [text, setText] = useState('');
  const projects = ctx.containers.filter((c) => c.kind !== 'area').map((c) => ({ id: c.id, name: c.name }));
  const parsed = useMemo(() => parseQuick(text, new Date(), projects), [text, projects]);
  return (
    <form
      className="quick"
      onSubmit={(e) => {
        e.preventDefault();
        if (!parsed.title) return;
        const input: In['todos']['create'] = { title: parsed.title, ...defaults };
        if (parsed.whenDate !== undefined) {
          input.whenDate = parsed.whenDate;
          input.someday = false;
        }
        if (parsed.evening) input.evening = true;
        if (parsed.someday) {
          input.someday = true;
          input.whenDate = null;
        }
        if (parsed.deadline) input.deadline = parsed.deadline;
        if (parsed.tags.length) input.tags = parsed.tags;
        if (parsed.project) input.parentId = parsed.project.id;
        actions.create.mutate(input);
        setText('');
      }}
    >
      <input type="text" ref={inputRef} aria-label="New to-do" placeholder="New to-do: “Call the bank tomorrow #Errands” ( n )" value={text} onChange={(e) => setText(e.target.value)} maxLength={2000} />
      {parsed.chips.length > 0 && (
        <ul className="chips" aria-label="Recognised">
          {parsed.chips.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      )}
    </form>
  );
}
