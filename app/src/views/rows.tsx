// A list of to-dos and one row: the checkbox named by the title, the badges, the editor in place.
// A row is dragged by its line (HTML5 drag and drop, docs/app.md "Projects, headings and drag"):
// dropped on another row it goes before or after it (`todos.move` with before/after); on a
// project page's heading section it goes under that heading; on a sidebar project, into it.
import { useState, type DragEvent } from 'react';
import { type Todo } from '../api.js';
import { type ListProps, shortDate } from './shared.js';
import { Editor } from './editor.js';

/** What is being dragged in this page (the drag's data is not readable during dragover). */
export type Dragged = { kind: 'todo'; id: string; parentId: string | null; headingId: string | null } | { kind: 'heading'; id: string; projectId: string };
export const drag: { current: Dragged | undefined } = { current: undefined };
/** Our own type in the drag data, so other pages and apps see a plain-text title only. */
export const DRAG_TYPE = 'application/x-cairn';

let marked: HTMLElement | undefined;
/** The drop indication (style.css `[data-drop]`): one element at a time. */
export function markDrop(el: HTMLElement | undefined, where?: 'before' | 'after' | 'into'): void {
  if (marked && marked !== el) marked.removeAttribute('data-drop');
  marked = el;
  if (el && where) el.setAttribute('data-drop', where);
  else if (el) el.removeAttribute('data-drop');
}
/** Clears the indication when the pointer leaves `e.currentTarget` for somewhere outside it. */
export function leaveDrop(e: DragEvent<HTMLElement>): void {
  if (marked === e.currentTarget && !e.currentTarget.contains(e.relatedTarget as Node | null)) markDrop(undefined);
}

export function startDrag(e: DragEvent<HTMLElement>, what: Dragged, text: string): void {
  drag.current = what;
  e.dataTransfer.effectAllowed = 'move';
  e.dataTransfer.setData(DRAG_TYPE, what.id);
  e.dataTransfer.setData('text/plain', text);
  // After dragstart: changing the page inside dragstart can cancel the drag in Chromium.
  setTimeout(() => {
    if (drag.current === what) document.documentElement.dataset.dragging = what.kind;
  }, 0);
}
export function endDrag(): void {
  drag.current = undefined;
  markDrop(undefined);
  delete document.documentElement.dataset.dragging;
}
/** Before or after `el`, by which half of it the pointer is over. */
export function half(e: DragEvent<HTMLElement>, el: HTMLElement): 'before' | 'after' {
  const r = el.getBoundingClientRect();
  return e.clientY < r.top + r.height / 2 ? 'before' : 'after';
}

export function TodoList({ label, todos, empty, keyOf, ...p }: ListProps & { label: string; todos: Todo[]; empty?: string; keyOf?: (t: Todo) => string }) {
  if (!todos.length) return empty ? <p>{empty}</p> : null;
  return (
    <ul className="todos" aria-label={label}>
      {todos.map((t) => (
        <TodoRow key={keyOf ? keyOf(t) : t.id} todo={t} {...p} />
      ))}
    </ul>
  );
}

/**
 * Whether the dragged to-do may be dropped next to `todo`: on a project page (inside a
 * `[data-band]`) anywhere, moving it into that row's heading; elsewhere (Today, Anytime, …) only
 * among the rows of its own project and heading, where the order it changes is the one shown.
 */
function dropNextTo(todo: Todo, el: HTMLElement): boolean {
  const d = drag.current;
  if (!d || d.kind !== 'todo' || d.id === todo.id || todo.status !== 'open') return false;
  if (el.closest('[data-band]')) return true;
  return d.parentId === todo.parentId && d.headingId === todo.headingId;
}

export function TodoRow({ todo, ...p }: ListProps & { todo: Todo }) {
  // Optimistic: the box shows the new state at once and rolls back when the server refuses
  // (the refusal is shown as an alert by useActions).
  const [pending, setPending] = useState<boolean | undefined>();
  const done = pending ?? todo.status !== 'open';
  const project = todo.parentId ? p.ctx.containers.find((c) => c.id === todo.parentId) : undefined;
  const isOpen = p.open?.id === todo.id;
  const checked = todo.checklist.filter((c) => c.done).length;
  return (
    <li
      data-todo={todo.id}
      data-state={JSON.stringify({ status: todo.status, parentId: todo.parentId, headingId: todo.headingId })}
      className={p.selected === todo.id ? 'selected' : ''}
      onFocus={() => p.setSelected(todo.id)}
      onDragOver={(e) => {
        if (!dropNextTo(todo, e.currentTarget)) return;
        e.preventDefault();
        e.stopPropagation();
        e.dataTransfer.dropEffect = 'move';
        markDrop(e.currentTarget, half(e, e.currentTarget));
      }}
      onDragLeave={leaveDrop}
      onDrop={(e) => {
        const d = drag.current;
        if (!d || d.kind !== 'todo' || !dropNextTo(todo, e.currentTarget)) return;
        e.preventDefault();
        e.stopPropagation();
        const where = half(e, e.currentTarget);
        endDrag();
        p.actions.move.mutate({ id: d.id, parentId: todo.parentId, headingId: todo.headingId, ...(where === 'before' ? { before: todo.id } : { after: todo.id }) });
      }}
    >
      <div
        className="row"
        draggable={todo.status === 'open'}
        onDragStart={(e) => startDrag(e, { kind: 'todo', id: todo.id, parentId: todo.parentId, headingId: todo.headingId }, todo.title)}
        onDragEnd={endDrag}
      >
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
