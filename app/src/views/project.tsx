// A project (its notes, subprojects, to-dos under its headings) and an area (its projects).
// docs/app.md "Projects, headings and drag": headings are renamed in place, reordered by buttons
// or drag, converted into a subproject, completed or deleted (routers/headings); a to-do dragged
// onto a heading's section moves under that heading, and Ctrl/⌘+↑/↓ past the first or last row of
// a heading moves it into the neighbouring one.
import { useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, localToday, message, type Container, type Heading, type In, type Todo } from '../api.js';
import { Markdown, isTyping, type ListProps, Loading } from './shared.js';
import { TodoList, drag, markDrop, leaveDrop, startDrag, endDrag, half } from './rows.js';

/** The heading writes of a project page; each refetches what it touched when it settles. */
function useHeadingActions(onError: (m: string) => void) {
  const qc = useQueryClient();
  const settle = { onError: (e: unknown) => onError(message(e)), onSettled: () => qc.invalidateQueries() };
  return {
    create: useMutation({ mutationFn: (v: In['headings']['create']) => api.headings.create.mutate(v), ...settle }),
    update: useMutation({ mutationFn: (v: In['headings']['update']) => api.headings.update.mutate(v), ...settle }),
    convert: useMutation({ mutationFn: (headingId: string) => api.headings.convert.mutate({ headingId }), ...settle }),
    complete: useMutation({ mutationFn: (id: string) => api.headings.complete.mutate({ id, today: localToday() }), ...settle }),
    remove: useMutation({ mutationFn: (id: string) => api.headings.delete.mutate({ id }), ...settle }),
  };
}
type HeadingActions = ReturnType<typeof useHeadingActions>;

export function ProjectView({ id, ...p }: ListProps & { id: string }) {
  const project = useQuery({ queryKey: ['container', id], queryFn: () => api.containers.get.query({ id }) });
  const headings = useQuery({ queryKey: ['headings', id], queryFn: () => api.headings.list.query({ project_id: id, limit: 200 }) });
  const todos = useQuery({ queryKey: ['project-todos', id], queryFn: () => api.todos.list.query({ parent_id: id, limit: 200 }) });
  const ha = useHeadingActions(p.ctx.onError);
  const [name, setName] = useState('');
  const open = useMemo(() => (todos.data?.data ?? []).filter((t) => t.status === 'open'), [todos.data]);
  const hs = headings.data?.data ?? [];
  useCrossBandKeys(id, p);
  return (
    <Loading q={{ isPending: project.isPending || headings.isPending || todos.isPending, error: project.error ?? headings.error ?? todos.error }}>
      {() => {
        const c = project.data!;
        const parent = c.parentId ? p.ctx.containers.find((x) => x.id === c.parentId) : undefined;
        const subprojects = p.ctx.containers.filter((x) => x.parentId === id && x.kind === 'subproject');
        return (
          <>
            {parent && (
              <p>
                In <a href={`#/project/${parent.id}`}>{parent.name}</a>
              </p>
            )}
            {c.status === 'archived' && <ProjectCompleted project={c} onError={p.ctx.onError} />}
            <ProjectNotes project={c} onError={p.ctx.onError} />
            {subprojects.length > 0 && (
              <section aria-labelledby="subprojects-h">
                <h2 id="subprojects-h">Subprojects</h2>
                <ul aria-label="Subprojects" className="subprojects">
                  {subprojects.map((s) => (
                    <li key={s.id}>
                      <a href={`#/project/${s.id}`} {...dropInto(s.id, (todoId) => p.actions.move.mutate({ id: todoId, parentId: s.id }))}>
                        {s.name}
                      </a>
                      {s.status === 'archived' && <span className="badge">Completed</span>}
                    </li>
                  ))}
                </ul>
              </section>
            )}
            <Band projectId={id} headingId={null} p={p}>
              <TodoList label={c.name} todos={open.filter((t) => !t.headingId)} {...p} empty="" />
              {!open.some((t) => !t.headingId) && <p className="band-hint">Drop here for no heading</p>}
            </Band>
            {hs.map((h, i) => (
              <HeadingSection key={h.id} h={h} i={i} hs={hs} canConvert={c.kind === 'project'} empty={!open.some((t) => t.headingId === h.id)} ha={ha} p={p}>
                <TodoList label={h.name} todos={open.filter((t) => t.headingId === h.id)} {...p} empty="" />
              </HeadingSection>
            ))}
            <form
              onSubmit={(e) => {
                e.preventDefault();
                if (name.trim()) ha.create.mutate({ projectId: id, name: name.trim() }, { onSuccess: () => setName('') });
              }}
            >
              <input type="text" aria-label="New heading" placeholder="New heading" value={name} onChange={(e) => setName(e.target.value)} maxLength={256} /> <button type="submit">Add heading</button>
            </form>
            {c.status !== 'archived' && <CompleteProject project={c} open={open} headings={hs} subprojects={subprojects} onError={p.ctx.onError} />}
          </>
        );
      }}
    </Loading>
  );
}

/** Drop a dragged to-do into a container (a sidebar project, a subproject link): at its end. */
export function dropInto(parentId: string, move: (todoId: string) => void) {
  const ok = () => {
    const d = drag.current;
    return d?.kind === 'todo' && d.parentId !== parentId ? d : undefined;
  };
  return {
    onDragOver: (e: DragEvent<HTMLElement>) => {
      if (!ok()) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'move';
      markDrop(e.currentTarget, 'into');
    },
    onDragLeave: leaveDrop,
    onDrop: (e: DragEvent<HTMLElement>) => {
      const d = ok();
      if (!d) return;
      e.preventDefault();
      endDrag();
      move(d.id);
    },
  };
}

/** The to-dos without heading (headingId null) or under one heading: a drop target for to-dos. */
function Band({ projectId, headingId, p, children, onHeadingDrag, label }: { projectId: string; headingId: string | null; p: ListProps; children: React.ReactNode; onHeadingDrag?: (e: DragEvent<HTMLElement>, drop: boolean) => boolean; label?: string }) {
  const into = (e: DragEvent<HTMLElement>, drop: boolean): boolean => {
    const d = drag.current;
    if (d?.kind === 'heading') return onHeadingDrag?.(e, drop) ?? false;
    if (d?.kind !== 'todo') return false;
    e.preventDefault();
    if (!drop) {
      e.dataTransfer.dropEffect = 'move';
      markDrop(e.currentTarget, 'into');
      return true;
    }
    endDrag();
    // Onto the section itself (its heading, its empty space): at the end of that heading.
    p.actions.move.mutate({ id: d.id, parentId: projectId, headingId });
    return true;
  };
  const props = {
    'data-band': headingId ?? '',
    className: 'band',
    onDragOver: (e: DragEvent<HTMLElement>) => void into(e, false),
    onDragLeave: leaveDrop,
    onDrop: (e: DragEvent<HTMLElement>) => void into(e, true),
  };
  return label ? (
    <section aria-labelledby={label} {...props}>
      {children}
    </section>
  ) : (
    <div {...props}>{children}</div>
  );
}

function HeadingSection({ h, i, hs, canConvert, empty, ha, p, children }: { h: Heading; i: number; hs: Heading[]; canConvert: boolean; empty: boolean; ha: HeadingActions; p: ListProps; children: React.ReactNode }) {
  const [renaming, setRenaming] = useState(false);
  const [text, setText] = useState(h.name);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (renaming) input.current?.select();
  }, [renaming]);
  // Enter and the blur that follows it (the field leaves the page) must not save twice.
  const saving = useRef(false);
  useEffect(() => {
    if (renaming) saving.current = false;
  }, [renaming]);
  const rename = () => {
    if (saving.current) return;
    saving.current = true;
    setRenaming(false);
    const v = text.trim();
    if (v && v !== h.name) ha.update.mutate({ id: h.id, name: v });
    else setText(h.name);
  };
  // `after` is the only placement PATCH takes: before hs[j] is after hs[j-1] (or first).
  const placeBefore = (j: number) => (j > 0 ? hs[j - 1]!.id : null);
  const onHeadingDrag = (e: DragEvent<HTMLElement>, drop: boolean): boolean => {
    const d = drag.current;
    if (d?.kind !== 'heading' || d.id === h.id) return false;
    e.preventDefault();
    const where = half(e, e.currentTarget);
    if (!drop) {
      e.dataTransfer.dropEffect = 'move';
      markDrop(e.currentTarget, where);
      return true;
    }
    endDrag();
    const after = where === 'before' ? placeBefore(i) : h.id;
    if (after !== d.id) ha.update.mutate({ id: d.id, after });
    return true;
  };
  const hid = `h-${h.id}`;
  return (
    <Band projectId={h.projectId} headingId={h.id} p={p} onHeadingDrag={onHeadingDrag} label={hid}>
      <div className="heading-bar" draggable={!renaming} onDragStart={(e) => startDrag(e, { kind: 'heading', id: h.id, projectId: h.projectId }, h.name)} onDragEnd={endDrag}>
        <h2 id={hid} onDoubleClick={() => setRenaming(true)}>
          {renaming ? (
            <input
              ref={input}
              type="text"
              aria-label="Heading name"
              value={text}
              maxLength={256}
              onChange={(e) => setText(e.target.value)}
              onBlur={rename}
              onKeyDown={(e) => {
                if (e.key === 'Enter') rename();
                else if (e.key === 'Escape') {
                  saving.current = true;
                  setText(h.name);
                  setRenaming(false);
                }
              }}
            />
          ) : (
            h.name
          )}
        </h2>
        <div className="heading-actions" role="group" aria-label={`Heading ${h.name}`}>
          <button type="button" aria-label={`Rename heading ${h.name}`} onClick={() => setRenaming(true)}>Rename</button>
          <button type="button" aria-label={`Move heading ${h.name} up`} disabled={i === 0} onClick={() => ha.update.mutate({ id: h.id, after: placeBefore(i - 1) })}>↑</button>
          <button type="button" aria-label={`Move heading ${h.name} down`} disabled={i === hs.length - 1} onClick={() => ha.update.mutate({ id: h.id, after: hs[i + 1]!.id })}>↓</button>
          <button type="button" aria-label={`Complete the to-dos of ${h.name}`} onClick={() => ha.complete.mutate(h.id)}>Complete</button>
          {canConvert && <button type="button" aria-label={`Convert ${h.name} to a subproject`} onClick={() => ha.convert.mutate(h.id)}>Convert to subproject</button>}
          <button type="button" aria-label={`Delete heading ${h.name}`} onClick={() => ha.remove.mutate(h.id)}>Delete</button>
        </div>
      </div>
      {children}
      {empty && <p className="band-hint">Drop here for {h.name}</p>}
    </Band>
  );
}

/**
 * Ctrl/⌘+↑ on the first row of a heading (Ctrl/⌘+↓ on the last) moves the selected to-do into the
 * heading before (after) it: to its end (start). index.tsx moves within a list and does nothing at
 * its edges, so the two never both act.
 */
function useCrossBandKeys(projectId: string, p: ListProps) {
  const { selected, actions } = p;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') || !selected) return;
      if (isTyping(e.target as HTMLElement) || document.querySelector('[role=dialog][aria-modal=true]')) return;
      const row = document.querySelector<HTMLElement>(`main [data-band] [data-todo="${CSS.escape(selected)}"]`);
      if (!row) return;
      const siblings = [...row.parentElement!.children] as HTMLElement[];
      const up = e.key === 'ArrowUp';
      if (siblings.indexOf(row) !== (up ? 0 : siblings.length - 1)) return;
      const bands = [...document.querySelectorAll<HTMLElement>('main [data-band]')];
      const band = bands[bands.indexOf(row.closest<HTMLElement>('[data-band]')!) + (up ? -1 : 1)];
      if (!band) return;
      e.preventDefault();
      const rows = [...band.querySelectorAll<HTMLElement>('[data-todo]')].map((r) => r.dataset.todo!);
      const headingId = band.dataset.band || null;
      const edge = up ? rows[rows.length - 1] : rows[0];
      actions.move.mutate({ id: selected, parentId: projectId, headingId, ...(edge ? (up ? { after: edge } : { before: edge }) : {}) });
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [selected, actions, projectId]);
}

/** The project's notes (the band's notes: Markdown through shared.tsx's Markdown), edited in place. */
function ProjectNotes({ project, onError }: { project: Container; onError: (m: string) => void }) {
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(project.notes ?? '');
  const save = useMutation({
    mutationFn: (notes: string | null) => api.containers.update.mutate({ id: project.id, notes }),
    onSuccess: () => setEditing(false),
    onError: (e) => onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  if (!editing) {
    return (
      <div className="project-notes">
        {project.notes && <Markdown md={project.notes} label="Project notes" />}
        <button
          type="button"
          onClick={() => {
            setText(project.notes ?? '');
            setEditing(true);
          }}
        >
          {project.notes ? 'Edit notes' : 'Add notes'}
        </button>
      </div>
    );
  }
  return (
    <form
      className="project-notes"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(text.trim() ? text : null);
      }}
    >
      <label>
        Project notes (Markdown)
        <textarea autoFocus value={text} onChange={(e) => setText(e.target.value)} maxLength={65536} />
      </label>
      {text && <Markdown md={text} label="Notes preview" />}
      <div className="buttons">
        <button type="submit" className="primary">Save notes</button>
        <button type="button" onClick={() => setEditing(false)}>Cancel</button>
      </div>
    </form>
  );
}

/**
 * Complete the project as Things does: every open to-do in it and in its subprojects is completed
 * (a heading's through `headings.complete`), then the project (and each subproject) is archived,
 * which takes it out of the sidebar and the views; its to-dos stay in the Logbook. Asks first when
 * open to-dos remain.
 */
function CompleteProject({ project, open, headings, subprojects, onError }: { project: Container; open: Todo[]; headings: Heading[]; subprojects: Container[]; onError: (m: string) => void }) {
  const qc = useQueryClient();
  const [asking, setAsking] = useState(false);
  const today = localToday();
  const done = useMutation({
    mutationFn: async () => {
      for (const h of headings) if (h.openCount > 0) await api.headings.complete.mutate({ id: h.id, today });
      for (const t of open) if (!t.headingId) await api.todos.complete.mutate({ id: t.id, today });
      for (const s of subprojects) {
        if (s.status === 'archived') continue;
        const inSub = await api.todos.list.query({ parent_id: s.id, status: 'open', limit: 200 });
        for (const t of inSub.data) await api.todos.complete.mutate({ id: t.id, today });
        await api.containers.archive.mutate({ id: s.id });
      }
      await api.containers.archive.mutate({ id: project.id });
    },
    onSuccess: () => setAsking(false),
    onError: (e) => onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const remaining = open.length + subprojects.filter((s) => s.status !== 'archived').length;
  if (asking) {
    return (
      <div role="group" aria-label="Complete the project?" className="confirm">
        <p>
          {open.length} open to-do{open.length === 1 ? '' : 's'} {open.length === 1 ? 'is' : 'are'} completed with it
          {subprojects.length > 0 ? ', and its subprojects with theirs' : ''}.
        </p>
        <div className="buttons">
          <button type="button" className="primary" onClick={() => done.mutate()} disabled={done.isPending}>Complete them and the project</button>
          <button type="button" onClick={() => setAsking(false)}>Keep working</button>
        </div>
      </div>
    );
  }
  return (
    <p>
      <button type="button" onClick={() => (remaining > 0 ? setAsking(true) : done.mutate())} disabled={done.isPending}>Complete project</button>
    </p>
  );
}

function ProjectCompleted({ project, onError }: { project: Container; onError: (m: string) => void }) {
  const qc = useQueryClient();
  const reopen = useMutation({
    mutationFn: () => api.containers.unarchive.mutate({ id: project.id }),
    onError: (e) => onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  return (
    <p role="status" className="completed">
      This project is completed: it is out of the sidebar and the views; its to-dos are in the Logbook.{' '}
      <button type="button" onClick={() => reopen.mutate()}>Reopen project</button>
    </p>
  );
}

export function AreaView({ id, ...p }: ListProps & { id: string }) {
  const todos = useQuery({ queryKey: ['project-todos', id], queryFn: () => api.todos.list.query({ parent_id: id, limit: 200 }) });
  const projects = p.ctx.containers.filter((c) => c.parentId === id);
  const active = projects.filter((c) => c.status !== 'archived');
  const completed = projects.filter((c) => c.status === 'archived');
  return (
    <>
      {active.length === 0 ? (
        <p>No projects in this area yet: create one from the sidebar's “New project” with this area chosen.</p>
      ) : (
        <ul aria-label="Projects in this area" className="subprojects">
          {active.map((c) => (
            <li key={c.id}>
              <a href={`#/project/${c.id}`} {...dropInto(c.id, (todoId) => p.actions.move.mutate({ id: todoId, parentId: c.id }))}>
                {c.name}
              </a>
            </li>
          ))}
        </ul>
      )}
      {completed.length > 0 && (
        <ul aria-label="Completed projects in this area" className="subprojects">
          {completed.map((c) => (
            <li key={c.id}>
              <a href={`#/project/${c.id}`}>{c.name}</a> <span className="badge">Completed</span>
            </li>
          ))}
        </ul>
      )}
      <Loading q={todos}>{() => <TodoList label="To-dos in this area" todos={todos.data!.data.filter((t) => t.status === 'open')} {...p} />}</Loading>
    </>
  );
}
