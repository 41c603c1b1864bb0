// Query plans of the to-do read path (issue 12, docs/performance.md "Read path, 2026-11-23"): a
// list page reads its rows from the list index in order (no sort of the account), every variant
// of the list query included; a page's tag links are one primary-key seek per id with the ids
// driving the join (no scan of the user's links, no temporary B-tree); the trashed-container
// probe is a range of the user's containers.
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, closeDb } from '../../db/client.js';
import { linksOfMany, todoListQuery, todoWithTags, type ListShape } from '../../routers/todos/model.js';
import { TRASHED_PROBE_SQL } from '../../routers/containers/live.js';

const db = openDb(':memory:');
afterAll(() => closeDb(db));

const plan = (source: string) =>
  (db.$client.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...Array((source.match(/\?/g) ?? []).length).fill('x')) as { detail: string }[]).map((r) => r.detail).join(' | ');

describe('to-do list query plans', () => {
  const shapes: [string, ListShape][] = [
    ['first page, no trashed container', { after: false, live: false }],
    ['first page, with the live-container clause', { after: false, live: true }],
    ['a later page (cursor)', { after: true, live: false }],
    ['a later page with the clause', { after: true, live: true }],
    ['one container', { parent_id: 'P', after: false, live: true }],
    ['include_trashed', { include_trashed: true, after: true, live: false }],
  ];
  it.each(shapes)('%s: read in list-index order, no sort', (_name, shape) => {
    const p = plan(todoListQuery(db, shape).stmt.source);
    expect(p).toMatch(/SEARCH todos USING INDEX todos_user_list_order \(user_id=\?/);
    expect(p).not.toMatch(/TEMP B-TREE/);
  });

  it('the variant without the clause has no recursive query; the one with it has', () => {
    expect(todoListQuery(db, { after: false, live: false }).stmt.source).not.toMatch(/RECURSIVE/i);
    expect(todoListQuery(db, { after: false, live: true }).stmt.source).toMatch(/RECURSIVE/i);
  });
});

describe('tag links of a page', () => {
  it('the page ids drive one primary-key seek each; tags by id; nothing sorted', () => {
    const p = plan(linksOfMany(db).source);
    expect(p).toMatch(/^SCAN j VIRTUAL TABLE/);
    expect(p).toMatch(/SEARCH tt USING INDEX sqlite_autoindex_todo_tags_1 \(todo_id=\?\)/);
    expect(p).toMatch(/SEARCH t USING INDEX sqlite_autoindex_tags_1 \(id=\?\)/);
    expect(p).not.toMatch(/TEMP B-TREE|SCAN tt|SCAN t\b/);
  });

  it('one to-do with its tags: the row by (user, id), its links by (user, to-do), tags by id; nothing sorted', () => {
    const p = plan(todoWithTags(db).source);
    expect(p).toMatch(/^SEARCH t USING (COVERING )?INDEX \w+ \(user_id=\? AND id=\?\)/);
    expect(p).toMatch(/SEARCH tt USING INDEX (todo_tags_user \(user_id=\? AND todo_id=\?\)|sqlite_autoindex_todo_tags_1 \(todo_id=\?\)) LEFT-JOIN/);
    expect(p).toMatch(/SEARCH g USING INDEX sqlite_autoindex_tags_1 \(id=\?\) LEFT-JOIN/);
    expect(p).not.toMatch(/TEMP B-TREE|SCAN/);
  });

  it('the trashed-container probe reads a range of the user’s containers', () => {
    expect(plan(TRASHED_PROBE_SQL)).toMatch(/^SEARCH containers USING INDEX containers_user_\w+ \(user_id=\?\)$/);
  });
});
