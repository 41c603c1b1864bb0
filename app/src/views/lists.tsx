// The date-driven lists: Today (with This Evening), Upcoming, Anytime/Someday by project,
// Logbook, and search results. Anytime, Someday and the Logbook page through their view's cursor
// and render through the virtualiser (virtual.tsx; docs/app.md "Long lists").
import { useCallback, useMemo } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api, localToday, type Todo } from '../api.js';
import { type ListProps, Loading, longDate } from './shared.js';
import { TodoList } from './rows.js';
import { EditorById } from './editor.js';
import { VirtualGroups, type VirtualGroup } from './virtual.js';

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

/** To-dos per page of a long view (the views' largest page, routers/views/schema.ts). */
const PAGE = 200;

/**
 * Adjacent groups of the same key are one group (a page may end inside a project or a day, and
 * the next one go on with it); a key seen again further down gets a suffix, so React keys stay unique.
 */
function mergeGroups(pages: { key: string; title: string; todos: Todo[] }[][]): VirtualGroup[] {
  const out: VirtualGroup[] = [];
  const seen = new Map<string, number>();
  for (const g of pages.flat()) {
    const prev = out.at(-1);
    if (prev && prev.key.split('#')[0] === g.key) {
      prev.todos = [...prev.todos, ...g.todos];
      continue;
    }
    const n = seen.get(g.key) ?? 0;
    seen.set(g.key, n + 1);
    out.push({ key: n ? `${g.key}#${n}` : g.key, title: g.title, todos: g.todos });
  }
  return out;
}

/** A paged view: the first page at once, the next ones as the list scrolls near its end (VirtualGroups). */
function usePaged<T extends { next_cursor: string | null }>(key: string, fetch: (cursor: string | undefined) => Promise<T>) {
  const today = localToday();
  return useInfiniteQuery({
    queryKey: ['view', key, today, 'paged'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => fetch(pageParam),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}

function PagedList({ q, groups, empty, ...p }: ListProps & { q: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown }; groups: VirtualGroup[]; empty: string }) {
  const { fetchNextPage } = q;
  const loadMore = useCallback(() => void fetchNextPage(), [fetchNextPage]);
  if (groups.length === 0) return <p>{empty}</p>;
  return <VirtualGroups groups={groups} more={q.hasNextPage} loadingMore={q.isFetchingNextPage} loadMore={loadMore} {...p} />;
}

export function GroupedView({ which, ...p }: ListProps & { which: 'anytime' | 'someday' }) {
  const q = usePaged(which, (cursor) => {
    const input = { today: localToday(), limit: PAGE, ...(cursor ? { cursor } : {}) };
    return which === 'anytime' ? api.views.anytime.query(input) : api.views.someday.query(input);
  });
  const groups = useMemo(
    () => mergeGroups((q.data?.pages ?? []).map((pg) => pg.groups.map((g) => ({ key: g.container?.id ?? 'none', title: g.container?.name ?? 'No project', todos: g.todos })))),
    [q.data],
  );
  return <Loading q={q}>{() => <PagedList q={q} groups={groups} empty="Nothing here." {...p} />}</Loading>;
}

export function LogbookView(p: ListProps) {
  const q = usePaged('logbook', (cursor) => api.views.logbook.query({ today: localToday(), limit: PAGE, ...(cursor ? { cursor } : {}) }));
  const groups = useMemo(() => mergeGroups((q.data?.pages ?? []).map((pg) => pg.days.map((d) => ({ key: d.date, title: longDate(d.date), todos: d.todos })))), [q.data]);
  return <Loading q={q}>{() => <PagedList q={q} groups={groups} empty="Nothing completed yet." {...p} />}</Loading>;
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
