// A list of to-dos and one row: the checkbox named by the title, the badges, the editor in place.
import { useState } from 'react';
import { type Todo } from '../api.js';
import { type ListProps, shortDate } from './shared.js';
import { Editor } from './editor.js';

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

export function TodoRow({ todo, ...p }: ListProps & { todo: Todo }) {
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
