// The date-driven lists: Today (with This Evening), Upcoming, Anytime/Someday by project,
// Logbook, and search results.
import { useQuery } from '@tanstack/react-query';
import { api, localToday } from '../api.js';
import { type ListProps, Loading, longDate } from './shared.js';
import { TodoList } from './rows.js';
import { EditorById } from './editor.js';

export function TodayView(p: ListProps) {
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

export function UpcomingView(p: ListProps) {
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

export function GroupedView({ which, ...p }: ListProps & { which: 'anytime' | 'someday' }) {
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

export function LogbookView(p: ListProps) {
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

export function SearchView({ q: text, ...p }: ListProps & { q: string }) {
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
