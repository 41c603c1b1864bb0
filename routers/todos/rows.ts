// The to-do row and its sealed content (routers/todos/model.ts): types, opening and sealing,
// presenting rows with their tags, reading one row, and writing a changed row with its index entry
// and `todo.updated` event. Every other part of the model stands on this one.
import { and, eq, sql } from 'drizzle-orm';
import { todos } from '../../db/schema/index.js';
import type Database from 'better-sqlite3';
import type { Db, Tx } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { notFound } from '../../core/errors.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { type RecurrenceBasis as Basis } from './recurrence.js';
import type { TodoOut } from './schema.js';
import { indexTodo } from '../todo-index/index.js';

/** A to-do row as the application reads and writes it; the list-order columns are the database's (db/schema/tasks.ts). */
export type TodoRow = Omit<typeof todos.$inferSelect, 'parentKey' | 'headingRef' | 'headingKey'>;
export type Priority = 'low' | 'medium' | 'high';
export type TodoStatus = 'open' | 'completed' | 'canceled';
export type ChecklistItem = { id: string; title: string; done: boolean };
/** `done`: occurrences completed so far (COUNT); `anchor`: where a schedule series started (routers/todos/recurrence.ts). */
export type StoredRecurrence = { rule: string; basis: Basis; done: number; anchor: string | null };

export type TodoSealed = {
  title: string;
  notes: string | null;
  status: TodoStatus;
  completedAt: number | null;
  whenDate: string | null;
  evening: boolean;
  someday: boolean;
  deadline: string | null;
  priority: Priority | null;
  checklist: ChecklistItem[];
  recurrence: StoredRecurrence | null;
};

const aad = (userId: string, id: string) => rowAad(userId, 'todos', id);

export function openTodo(dek: Buffer, row: TodoRow): TodoSealed {
  return openJson<TodoSealed>(dek, aad(row.userId, row.id), row.sealed);
}

export function sealTodo(dek: Buffer, userId: string, id: string, s: TodoSealed): Buffer {
  return sealJson(dek, aad(userId, id), s);
}

export function toTodo(row: TodoRow, s: TodoSealed, tagNames: string[]): TodoOut {
  return {
    id: row.id,
    title: s.title,
    notes: s.notes,
    status: s.status,
    completedAt: isoOrNull(s.completedAt),
    whenDate: s.whenDate,
    evening: s.evening,
    someday: s.someday,
    deadline: s.deadline,
    priority: s.priority,
    tags: tagNames,
    checklist: s.checklist,
    recurrence: s.recurrence ? { rule: s.recurrence.rule, basis: s.recurrence.basis } : null,
    parentId: row.parentId,
    headingId: row.headingId,
    sortKey: row.sortKey,
    trashedAt: isoOrNull(row.trashedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

type TagLink = { todoId: string; tagId: string; sealed: Buffer };

// Tag names of to-dos (issue 12), on raw prepared statements (no query builder per request).
// `+tt.user_id` keeps SQLite on the link table's primary key (todo_id, tag_id) rather than
// scanning every link of the user; the join and the WHERE still scope every row to the user.
const LINKS_SELECT = `SELECT tt.todo_id AS todoId, t.id AS tagId, t.sealed AS sealed
   FROM todo_tags tt JOIN tags t ON t.id = tt.tag_id AND t.user_id = tt.user_id`;

/** One to-do: its links joined with their tags, in position order (one statement). */
function linksOfOne(db: Db) {
  return prepared(db, 'todoTags.withTags.one', (d) =>
    d.$client.prepare<[string, string], TagLink>(`${LINKS_SELECT} WHERE +tt.user_id = ? AND tt.todo_id = ? ORDER BY tt.position`),
  );
}

/**
 * Many to-dos: the links of the page's ids (json_each drives the join, one primary-key seek per
 * id) joined with their tags, raw rows with the position and no ORDER BY (it cost a temp B-tree
 * per page); each to-do's few links are put in position order here.
 */
export function linksOfMany(db: Db): Database.Statement<[string, string], [todoId: string, tagId: string, sealed: Buffer, position: number]> {
  return prepared(db, 'todoTags.withTags.many.raw', (d) =>
    d.$client.prepare<[string, string], [todoId: string, tagId: string, sealed: Buffer, position: number]>(
      `SELECT tt.todo_id, t.id, t.sealed, tt.position
         FROM json_each(?) j CROSS JOIN todo_tags tt ON tt.todo_id = j.value
         JOIN tags t ON t.id = tt.tag_id AND t.user_id = tt.user_id
        WHERE +tt.user_id = ?`,
    ),
  );
}

/** A tag's name: its sealed content, as routers/tags/model.ts seals it (AAD table 'tags'). */
export function tagName(p: Principal, tagId: string, sealed: Buffer): string {
  return openJson<{ name: string }>(p.dek, rowAad(p.userId, 'tags', tagId), sealed).name;
}

/** Tag names of each to-do, in the order the client gave them. */
export function tagsOf(deps: Deps, p: Principal, todoIds: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!todoIds.length) return out;
  if (todoIds.length === 1) {
    const links = linksOfOne(deps.db).all(p.userId, todoIds[0]!);
    if (links.length) out.set(todoIds[0]!, links.map((l) => tagName(p, l.tagId, l.sealed)));
    return out;
  }
  // json_each drives the join, so an id given twice would give its links twice: ids are made unique.
  const unique = new Set(todoIds);
  const ids = unique.size === todoIds.length ? todoIds : [...unique];
  // raw(true) on every call: the statement cache of db/client.ts resets a shared statement to object rows.
  const links = linksOfMany(deps.db).raw(true).all(JSON.stringify(ids), p.userId);
  if (!links.length) return out;
  // Each tag opened once per call (a local map: nothing outlives the request).
  const names = new Map<string, string>();
  const byTodo = new Map<string, [position: number, name: string][]>();
  for (const [todoId, tagId, sealed, position] of links) {
    let name = names.get(tagId);
    if (name === undefined) {
      name = tagName(p, tagId, sealed);
      names.set(tagId, name);
    }
    const list = byTodo.get(todoId);
    if (list) list.push([position, name]);
    else byTodo.set(todoId, [[position, name]]);
  }
  for (const [todoId, list] of byTodo) {
    if (list.length > 1) list.sort((a, b) => a[0] - b[0]);
    out.set(todoId, list.map((l) => l[1]));
  }
  return out;
}

/** Wire form of rows whose sealed content is already open. */
export function presentTodos(deps: Deps, p: Principal, items: { row: TodoRow; s: TodoSealed }[]): TodoOut[] {
  const tags = tagsOf(deps, p, items.map((i) => i.row.id));
  return items.map((i) => toTodo(i.row, i.s, tags.get(i.row.id) ?? []));
}

export function presentTodo(deps: Deps, p: Principal, row: TodoRow, s: TodoSealed = openTodo(p.dek, row)): TodoOut {
  return presentTodos(deps, p, [{ row, s }])[0]!;
}

/** The to-do row by (user, id): one raw prepared statement per database (db/prepared.ts). */
function todoById(db: Db) {
  return prepared(db, 'todos.byId.raw', (d) =>
    d.$client.prepare<[string, string], TodoRow>(
      `SELECT id, user_id AS userId, parent_id AS parentId, heading_id AS headingId, sort_key AS sortKey, sealed, trashed_at AS trashedAt, created_at AS createdAt, updated_at AS updatedAt
         FROM todos WHERE user_id = ? AND id = ?`,
    ),
  );
}

/** Prepared statements run on the one connection, so inside a caller's transaction too. */
export function getRow(deps: Deps, userId: string, id: string): TodoRow {
  const row = todoById(deps.db).get(userId, id);
  if (!row) throw notFound('To-do');
  return row;
}

/** The server's UTC date from the injected clock (default of `today`). */
export function todayOf(deps: Deps): string {
  return new Date(deps.clock()).toISOString().slice(0, 10);
}

/** Inserts a to-do row (prepared once; runs inside the caller's transaction on the one connection). */
export function insertTodoRow(deps: Deps, row: TodoRow): void {
  const q = prepared(deps.db, 'todos.insert', (db) =>
    db
      .insert(todos)
      .values({
        id: sql.placeholder('id'),
        userId: sql.placeholder('userId'),
        parentId: sql.placeholder('parentId'),
        headingId: sql.placeholder('headingId'),
        sortKey: sql.placeholder('sortKey'),
        sealed: sql.placeholder('sealed'),
        trashedAt: sql.placeholder('trashedAt'),
        createdAt: sql.placeholder('createdAt'),
        updatedAt: sql.placeholder('updatedAt'),
      })
      .prepare(),
  );
  q.run(row);
}

/** Writes the row's new state and records `todo.updated`. */
export function writeTodo(deps: Deps, tx: Tx, p: Principal, row: TodoRow, s: TodoSealed, extra: Partial<Pick<TodoRow, 'parentId' | 'headingId' | 'sortKey' | 'trashedAt'>> = {}): TodoRow {
  const now = deps.clock();
  const next: TodoRow = { ...row, ...extra, sealed: sealTodo(p.dek, p.userId, row.id, s), updatedAt: now };
  const moved = next.parentId !== row.parentId || next.headingId !== row.headingId || next.sortKey !== row.sortKey || next.trashedAt !== row.trashedAt;
  if (moved) {
    const q = prepared(deps.db, 'todos.write', (db) =>
      db
        .update(todos)
        .set({
          sealed: sql`${sql.placeholder('sealed')}`,
          parentId: sql`${sql.placeholder('parentId')}`,
          headingId: sql`${sql.placeholder('headingId')}`,
          sortKey: sql`${sql.placeholder('sortKey')}`,
          trashedAt: sql`${sql.placeholder('trashedAt')}`,
          updatedAt: sql`${sql.placeholder('updatedAt')}`,
        })
        .where(and(eq(todos.userId, sql.placeholder('userId')), eq(todos.id, sql.placeholder('id'))))
        .prepare(),
    );
    q.run({ sealed: next.sealed, parentId: next.parentId, headingId: next.headingId, sortKey: next.sortKey, trashedAt: next.trashedAt, updatedAt: now, userId: p.userId, id: row.id });
  } else {
    // Content only: SQLite rewrites the entry of every index holding a column named in SET, even
    // when its value is unchanged, so the placement columns are left out (a PATCH of the title
    // then writes 3 of the row's b-tree pages instead of 7; docs/performance.md).
    const q = prepared(deps.db, 'todos.writeContent', (db) =>
      db
        .update(todos)
        .set({ sealed: sql`${sql.placeholder('sealed')}`, updatedAt: sql`${sql.placeholder('updatedAt')}` })
        .where(and(eq(todos.userId, sql.placeholder('userId')), eq(todos.id, sql.placeholder('id'))))
        .prepare(),
    );
    q.run({ sealed: next.sealed, updatedAt: now, userId: p.userId, id: row.id });
  }
  recordEvent(deps, { userId: p.userId, type: 'todo.updated', id: row.id, at: now });
  indexTodo(deps.db.$client, p, next, s);
  return next;
}
