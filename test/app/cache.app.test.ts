// Optimistic updates (app/src/cache.ts; docs/app.md "Optimistic updates"): one to-do changed in
// every cached view shape, new objects only along the changed paths, order changes for a move.
import { describe, expect, it } from 'vitest';
import { patchCached, placeIn } from '../../app/src/cache.js';

const todo = (id: string, title = id) => ({ id, title, status: 'open', checklist: [] as unknown[] });
type T = ReturnType<typeof todo>;
const rename = { edit: (t: T) => ({ ...t, title: 'New' }) };

describe('patchCached', () => {
  it('changes the to-do in each view shape and leaves the rest as it was', () => {
    const today = { todos: [todo('A'), todo('B')], evening: [todo('C')] };
    const upcoming = { days: [{ date: '2026-11-26', todos: [todo('A')] }, { date: '2026-11-27', todos: [todo('D')] }] };
    const anytime = { groups: [{ container: null, todos: [todo('E'), todo('A')] }] };
    const list = { data: [todo('A')], next_cursor: null };
    const paged = { pages: [{ groups: [{ container: null, todos: [todo('B')] }] }, { groups: [{ container: null, todos: [todo('A')] }] }], pageParams: [null, 'c1'] };
    const single = todo('A');
    const search = { data: [{ type: 'todo', id: 'A', title: 'A', snippet: '' }] };
    const t2 = patchCached(today, 'A', rename) as typeof today;
    expect(t2.todos.map((t) => t.title)).toEqual(['New', 'B']);
    expect(t2.todos[1]).toBe(today.todos[1]);
    expect(t2.evening).toBe(today.evening);
    const u2 = patchCached(upcoming, 'A', rename) as typeof upcoming;
    expect(u2.days[0]!.todos[0]!.title).toBe('New');
    expect(u2.days[1]).toBe(upcoming.days[1]);
    expect((patchCached(anytime, 'A', rename) as typeof anytime).groups[0]!.todos.map((t) => t.title)).toEqual(['E', 'New']);
    expect((patchCached(list, 'A', rename) as typeof list).data[0]!.title).toBe('New');
    expect((patchCached(single, 'A', rename) as T).title).toBe('New');
    const p2 = patchCached(paged, 'A', rename) as typeof paged;
    expect(p2.pages[1]!.groups[0]!.todos[0]!.title).toBe('New');
    expect(p2.pages[0]).toBe(paged.pages[0]);
    expect(p2.pageParams).toBe(paged.pageParams);
    // Not holding it: the same object. A search hit is not a to-do.
    expect(patchCached(today, 'Z', rename)).toBe(today);
    expect(patchCached(search, 'A', rename)).toBe(search);
    expect(patchCached({ weekStart: 'monday' }, 'A', rename)).toEqual({ weekStart: 'monday' });
    // The original is not mutated.
    expect(today.todos[0]!.title).toBe('A');
  });

  it('null takes it out of lists but keeps a single cached to-do', () => {
    const today = { todos: [todo('A'), todo('B')], evening: [] };
    expect((patchCached(today, 'A', { edit: () => null }) as typeof today).todos.map((t) => t.id)).toEqual(['B']);
    const single = todo('A');
    expect(patchCached(single, 'A', { edit: () => null })).toBe(single);
  });

  it('a move reorders the lists holding it', () => {
    const list = { data: [todo('A'), todo('B'), todo('C')] };
    const moved = patchCached(list, 'C', { edit: (t: T) => t, reorder: (ids) => placeIn(ids, 'C', { before: 'A' }) }) as typeof list;
    expect(moved.data.map((t) => t.id)).toEqual(['C', 'A', 'B']);
    expect(placeIn(['A', 'B', 'C'], 'A', { after: 'B' })).toEqual(['B', 'A', 'C']);
    expect(placeIn(['A', 'B'], 'A', { after: 'Z' })).toEqual(['A', 'B']);
  });
});
