// Saved filters (spec §2.8, §4.10; docs/api.md "Saved filters"; docs/app.md "Notes, filters and
// files"): the sidebar's Filters section, the list (#/filters: create, open, delete) and one
// filter (#/filters/<id>: its open to-dos as rows, change its name or criteria, delete). The
// criteria grammar is the server's (routers/filters/criteria.ts); a criteria error it answers
// (422 at /criteria with the column) is shown as an alert next to the field.
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, localToday, message, type Out } from '../api.js';
import { type Ctx, type ListProps, type Route, Loading } from './shared.js';
import { TodoList } from './rows.js';
import { RowList } from './row-list.js';

type Filter = Out['filters']['get'];

const filtersQuery = { queryKey: ['filters'], queryFn: () => api.filters.list.query({ limit: 200 }) };

/** The sidebar's Filters section: the list of filters and each filter. */
export function FiltersNav({ route }: { route: Route }) {
  const q = useQuery(filtersQuery);
  return (
    <ul aria-label="Filters">
      <li>
        <a href="#/filters" aria-current={route.view === 'filters' ? 'page' : undefined}>
          Filters
        </a>
      </li>
      {(q.data?.data ?? []).map((f) => (
        <li key={f.id} className="sub">
          <a href={`#/filters/${encodeURIComponent(f.id)}`} aria-current={route.view === 'filter' && route.id === f.id ? 'page' : undefined}>
            {f.name}
          </a>
        </li>
      ))}
    </ul>
  );
}

const GRAMMAR_HINT = 'Tags (#errands, #"two words"), today, overdue, someday, no date, priority:high|medium|low, combined with and, or, not and parentheses. Example: #work and (today or overdue).';

/** Name and criteria; the server's refusal is shown as an alert under the form. */
function FilterForm({ initial, submit, label, onDone }: { initial?: Filter; submit: (v: { name: string; criteria: string }) => Promise<unknown>; label: string; onDone?: (f: unknown) => void }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [criteria, setCriteria] = useState(initial?.criteria ?? '');
  useEffect(() => {
    if (initial) {
      setName(initial.name);
      setCriteria(initial.criteria);
    }
  }, [initial?.name, initial?.criteria]); // eslint-disable-line react-hooks/exhaustive-deps
  const [error, setError] = useState('');
  const qc = useQueryClient();
  const save = useMutation({
    mutationFn: submit,
    onSuccess: (f) => {
      setError('');
      if (!initial) {
        setName('');
        setCriteria('');
      }
      onDone?.(f);
    },
    onError: (e) => setError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const hint = `${label.replace(/\s+/g, '-').toLowerCase()}-hint`;
  return (
    <form
      className="filter-form"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        setError('');
        save.mutate({ name: name.trim(), criteria: criteria.trim() });
      }}
    >
      <label>
        Filter name <input type="text" required maxLength={256} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Criteria <input type="text" required maxLength={10000} value={criteria} aria-describedby={hint} aria-invalid={error ? true : undefined} onChange={(e) => setCriteria(e.target.value)} />
      </label>
      <p id={hint} className="hint">
        {GRAMMAR_HINT}
      </p>
      <button type="submit">{initial ? 'Save filter' : 'Create filter'}</button>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </form>
  );
}

export function FiltersView({ ctx }: { ctx: Ctx }) {
  const q = useQuery(filtersQuery);
  const qc = useQueryClient();
  const remove = useMutation({ mutationFn: (id: string) => api.filters.delete.mutate({ id }), onError: (e) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() });
  return (
    <>
      <FilterForm label="New filter" submit={(v) => api.filters.create.mutate(v)} onDone={(f) => (location.hash = `#/filters/${encodeURIComponent((f as Filter).id)}`)} />
      <RowList
        q={q}
        label="Saved filters"
        empty="No saved filters yet."
        row={(f) => (
          <>
            <a className="title" href={`#/filters/${encodeURIComponent(f.id)}`}>
              {f.name}
            </a>{' '}
            <code className="badge">{f.criteria}</code>{' '}
            <button type="button" aria-label={`Delete filter ${f.name}`} onClick={() => confirm(`Delete the filter “${f.name}”?`) && remove.mutate(f.id)}>
              Delete
            </button>
          </>
        )}
      />
    </>
  );
}

/** One filter: its open to-dos in app order (asked with the browser's date as `today`). */
export function FilterView({ id, ...p }: ListProps & { id: string }) {
  const qc = useQueryClient();
  const filter = useQuery({ queryKey: ['filter', id], queryFn: () => api.filters.get.query({ id }) });
  const todos = useQuery({ queryKey: ['filter-todos', id], queryFn: () => api.filters.todos.query({ id, limit: 200, today: localToday() }) });
  const remove = useMutation({
    mutationFn: () => api.filters.delete.mutate({ id }),
    onSuccess: () => (location.hash = '#/filters'),
    onError: (e) => p.ctx.onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const [editing, setEditing] = useState(false);
  return (
    <Loading q={filter}>
      {() => (
        <>
          <h2>{filter.data!.name}</h2>
          <p>
            Criteria: <code>{filter.data!.criteria}</code>
          </p>
          <div className="buttons">
            <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
              Edit filter
            </button>{' '}
            <button type="button" onClick={() => confirm(`Delete the filter “${filter.data!.name}”?`) && remove.mutate()}>
              Delete filter
            </button>
          </div>
          {editing && <FilterForm label="Edit filter" initial={filter.data!} submit={(v) => api.filters.update.mutate({ id, ...v })} onDone={() => setEditing(false)} />}
          <Loading q={todos}>{() => <TodoList label={`Results of ${filter.data!.name}`} todos={todos.data!.data} empty="No open to-do matches this filter." {...p} />}</Loading>
        </>
      )}
    </Loading>
  );
}
