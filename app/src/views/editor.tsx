// A to-do opened in place (a region named by its title).
import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, localToday, type In, type Todo } from '../api.js';
import { renderNotes, type ListProps, Loading } from './shared.js';

export function EditorById({ id, ...p }: ListProps & { id: string }) {
  const q = useQuery({ queryKey: ['todo', id], queryFn: () => api.todos.get.query({ id }) });
  return <Loading q={q}>{() => <Editor todo={q.data!} {...p} />}</Loading>;
}

/** A to-do opened in place: a region named by its title. Each field saves when it changes. */
export function Editor({ todo, ...p }: ListProps & { todo: Todo }) {
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

export function HeadingPicker({ todo, onMove }: { todo: Todo; onMove: (headingId: string | null) => void }) {
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
