// Query plans of the per-write link lookups (issue 12). With an index on `user_id` alone, SQLite
// chose it for `user_id = ? AND todo_id = ?` and walked every tag link of the account on each
// write of a to-do (a PATCH at 10,000 to-dos spent ~200 µs there). The secondary indexes now lead
// with the pair each query names (migration 0013); these plans must use both columns.
import { describe, expect, it } from 'vitest';
import { openDb, closeDb } from '../../db/client.js';

const plan = (sql: string, n: number) => {
  const db = openDb(':memory:');
  try {
    return (db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(n).fill('x')) as { detail: string }[]).map((r) => r.detail).join(' | ');
  } finally {
    closeDb(db);
  }
};

describe('query plans of per-write lookups', () => {
  it.each([
    ['a to-do\'s tag links (read)', 'select "tag_id" from "todo_tags" where ("todo_tags"."user_id" = ? and "todo_tags"."todo_id" = ?) order by "todo_tags"."position" asc', 2, /todo_tags_user \(user_id=\? AND todo_id=\?\)/],
    ['a to-do\'s tag links (delete)', 'delete from "todo_tags" where ("todo_tags"."user_id" = ? and "todo_tags"."todo_id" = ?)', 2, /todo_tags_user \(user_id=\? AND todo_id=\?\)|sqlite_autoindex_todo_tags_1 \(todo_id=\?\)/],
    ['a tag\'s to-dos', 'select "todo_id" from "todo_tags" where ("todo_tags"."user_id" = ? and "todo_tags"."tag_id" = ?)', 2, /todo_tags_tag \(tag_id=\? AND user_id=\?\)/],
    ['an attachment\'s chunks', 'SELECT count(*) AS n, coalesce(max(idx), -1) AS top FROM attachment_chunks WHERE attachment_id = ? AND user_id = ?', 2, /\(attachment_id=\?|user_id=\? AND attachment_id=\?\)/],
  ])('%s uses an index on both columns', (_name, sql, n, want) => {
    const p = plan(sql, n);
    expect(p).toMatch(want);
    expect(p).not.toMatch(/USING (COVERING )?INDEX \w+ \(user_id=\?\)$/);
  });
});
