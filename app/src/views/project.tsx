// A project (its to-dos under its headings) and an area (its projects and to-dos).
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message } from '../api.js';
import { renderNotes, type ListProps, Loading } from './shared.js';
import { TodoList } from './rows.js';

export function ProjectView({ id, ...p }: ListProps & { id: string }) {
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

export function AreaView({ id, ...p }: ListProps & { id: string }) {
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
