// Reading to-dos (routers/todos/model.ts): one to-do with its tags, the list with its filters and
// paging, the to-dos under a heading, open counts, and the account's index for views.
import { and, asc, eq, fillPlaceholders, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { todos } from '../../db/schema/index.js';
import type Database from 'better-sqlite3';
import type { Db, Tx } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';
import { afterTuplePlaceholders, tupleParams, tuplePage } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { notFound } from '../../core/errors.js';
import { DecryptBudget } from '../../core/decrypt-budget.js';
import { assertAccountSize } from '../account-size.js';
import { hasTrashedContainer, inLiveContainer } from '../containers/live.js';
import type { TodoOut } from './schema.js';
import { indexedAttrs } from '../todo-index/index.js';
import { type TodoRow, type TodoStatus, openTodo, presentTodos, tagName, toTodo } from './rows.js';

/**
 * One to-do with its tags in one statement (issue 12: a read is two statements otherwise, the row
 * and its links): the row left-joined with its links and their tags, one result row per tag (one
 * row with null tag columns when it has none). The links and tags are scoped
 * to the row's user as in `linksOfOne`.
 */
export function todoWithTags(db: Db): Database.Statement<[string, string], RawTodoWithTag> {
  return prepared(db, 'todos.byIdWithTags.raw', (d) =>
    d.$client.prepare<[string, string], RawTodoWithTag>(
      `SELECT t.id, t.parent_id, t.heading_id, t.sort_key, t.sealed, t.trashed_at, t.created_at, t.updated_at, g.id, g.sealed, tt.position
         FROM todos t
         LEFT JOIN todo_tags tt ON tt.todo_id = t.id AND tt.user_id = t.user_id
         LEFT JOIN tags g ON g.id = tt.tag_id AND g.user_id = tt.user_id
        WHERE t.user_id = ? AND t.id = ?`,
    ),
  );
}
type RawTodoWithTag = [string, string | null, string | null, string, Buffer, number | null, number, number, string | null, Buffer | null, number | null];

export function getTodo(deps: Deps, p: Principal, id: string): TodoOut {
  // raw(true) on every call: the statement cache of db/client.ts resets a shared statement to object rows.
  const rows = todoWithTags(deps.db).raw(true).all(p.userId, id);
  const r = rows[0];
  if (!r) throw notFound('To-do');
  const row: TodoRow = { id: r[0], userId: p.userId, parentId: r[1], headingId: r[2], sortKey: r[3], sealed: r[4], trashedAt: r[5], createdAt: r[6], updatedAt: r[7] };
  // No ORDER BY (a sorter per read): a to-do's few links are put in position order here. A link
  // whose tag row is missing has null tag columns and is left out, as the inner join of
  // `linksOfOne` does.
  if (rows.length > 1) rows.sort((a, b) => a[10]! - b[10]!);
  const tags: string[] = [];
  for (const t of rows) if (t[8] !== null && t[9] !== null) tags.push(tagName(p, t[8], t[9]));
  return toTodo(row, openTodo(p.dek, row), tags);
}

export type TodoListQuery = ListQuery & {
  parent_id?: string | undefined;
  heading_id?: string | undefined;
  status?: TodoStatus | undefined;
  include_trashed?: boolean | undefined;
};

/**
 * App order: grouped by container; inside one, the to-dos under no heading first, then each
 * heading's to-dos in heading order; inside a band, by sort key. `status` is sealed, so that
 * filter reads the sealed index (account_too_large past CAIRN_MAX_ACCOUNT_ITEMS).
 */
/**
 * The columns a list page reads, in this order (the statement runs in raw mode: one array per
 * row): the row without `user_id` (the WHERE fixes it to the caller) and its heading key, not the
 * generated key columns.
 */
const LIST_COLUMNS = {
  id: todos.id,
  parentId: todos.parentId,
  headingId: todos.headingId,
  sortKey: todos.sortKey,
  sealed: todos.sealed,
  trashedAt: todos.trashedAt,
  createdAt: todos.createdAt,
  updatedAt: todos.updatedAt,
  headingKey: todos.headingKey,
};
type ListRow = TodoRow & { headingKey: string };
type RawListRow = [string, string | null, string | null, string, Buffer, number | null, number, number, string];

export type ListShape = {
  parent_id?: string | undefined;
  heading_id?: string | undefined;
  include_trashed?: boolean | undefined;
  updated_since?: string | undefined;
  after: boolean;
  /** Whether the live-container clause is needed: false when the account has no trashed container (then it holds for every row). */
  live: boolean;
};

/**
 * The list query, prepared once per shape (which filters, whether a cursor is given, whether the
 * live-container clause is needed) with every value a placeholder: building a drizzle query costs
 * more than running this one. The order is the list index's (todos_user_list_order), so a page is
 * read from the index, and the cursor's row-value comparison seeks into it. `parent_id` filters on
 * the key column ('' = none; ids are never empty) so it is a prefix of that index; one heading's
 * to-dos come from todos_user_heading. drizzle writes the SQL; it runs on the raw better-sqlite3
 * statement in raw mode (arrays, no per-row mapping by drizzle; issue 12).
 */
export function todoListQuery(db: Db, shape: ListShape): { stmt: Database.Statement<unknown[], RawListRow>; params: unknown[] } {
  const key = [
    shape.parent_id === undefined ? '-' : 'p',
    shape.heading_id === undefined ? '-' : shape.heading_id === 'null' ? 'n' : 'h',
    shape.include_trashed ? 't' : shape.live ? 'l' : '-',
    shape.updated_since ? 's' : '-',
    shape.after ? 'a' : '-',
  ].join('');
  return prepared(db, `todos.list.raw.${key}`, (d) => {
    const cols = [sql`${todos.parentKey}`, sql`${todos.headingKey}`, sql`${todos.headingRef}`, sql`${todos.sortKey}`];
    const conds: SQL[] = [eq(todos.userId, sql.placeholder('userId'))];
    if (shape.parent_id !== undefined) conds.push(eq(todos.parentKey, sql.placeholder('parentKey')));
    if (shape.heading_id !== undefined) conds.push(shape.heading_id === 'null' ? eq(todos.headingRef, '') : eq(todos.headingId, sql.placeholder('headingId')));
    if (!shape.include_trashed) {
      conds.push(isNull(todos.trashedAt));
      if (shape.live) conds.push(inLiveContainer(todos.parentId, sql.placeholder('userId')));
    }
    if (shape.updated_since) conds.push(sql`${todos.updatedAt} >= ${sql.placeholder('since')}`);
    if (shape.after) conds.push(afterTuplePlaceholders(cols, todos.id));
    const q = d
      .select(LIST_COLUMNS)
      .from(todos)
      .where(and(...conds))
      .orderBy(...cols, asc(todos.id))
      .limit(sql.placeholder('n'))
      .toSQL();
    return { stmt: d.$client.prepare<unknown[], RawListRow>(q.sql), params: q.params };
  });
}

export function listTodos(deps: Deps, p: Principal, query: TodoListQuery) {
  const status = query.status;
  if (status) assertAccountSize(deps, p.userId);
  // With a sealed-field filter tuplePage scans on until the page is full; the account-size check
  // above bounds it, so the scan itself is not capped.
  const budget = status ? new DecryptBudget(Number.POSITIVE_INFINITY) : undefined;
  let index: Map<string, { status: TodoStatus }> | undefined;
  const statusOf = (id: string) => (index ??= accountIndex(deps, p)).get(id)?.status;
  const userId = p.userId;
  // Trashed containers hide their to-dos and those of their subprojects (DECISIONS §6). With no
  // trashed container in the account nothing is hidden that way, so the query without the
  // (recursive, per-query) clause gives the same rows; one indexed probe decides. The probe and
  // the list run in the same synchronous turn on the one connection, so no write comes between.
  const live = !query.include_trashed && hasTrashedContainer(deps.db, userId);
  const page = tuplePage({
    key: deps.keys.cursor,
    scope: `${userId}:todos`,
    query,
    arity: 4,
    fetch: (after, n): ListRow[] => {
      const params: Record<string, unknown> = { userId, n, ...(after ? tupleParams(after) : {}) };
      if (query.parent_id !== undefined) params.parentKey = query.parent_id === 'null' ? '' : query.parent_id;
      if (query.heading_id !== undefined) params.headingId = query.heading_id === 'null' ? '' : query.heading_id;
      if (query.updated_since) params.since = Date.parse(query.updated_since);
      const q = todoListQuery(deps.db, { ...query, after: after !== null, live });
      // raw(true) on every call: the statement cache of db/client.ts resets a shared statement to object rows.
      const raw = q.stmt.raw(true).all(fillPlaceholders(q.params, params));
      const rows = new Array<ListRow>(raw.length);
      for (let i = 0; i < raw.length; i++) {
        const r = raw[i]!;
        rows[i] = { id: r[0], userId, parentId: r[1], headingId: r[2], sortKey: r[3], sealed: r[4], trashedAt: r[5], createdAt: r[6], updatedAt: r[7], headingKey: r[8] };
      }
      return rows;
    },
    posOf: (r) => ({ k: [r.parentId ?? '', r.headingKey, r.headingId ?? '', r.sortKey], i: r.id }),
    map: (r) => {
      // The status comes from the sealed index (routers/todo-index/index.ts): only kept rows are opened.
      if (status && statusOf(r.id) !== status) return null;
      return { row: r as TodoRow, s: openTodo(p.dek, r) };
    },
    ...(budget ? { budget } : {}),
  });
  return { data: presentTodos(deps, p, page.data), next_cursor: page.next_cursor };
}

/** Live to-dos under a heading in band order (not trashed). */
export function todosUnderHeading(tx: Tx | Db, userId: string, headingId: string, opts: { includeTrashed?: boolean } = {}): TodoRow[] {
  const conds: SQL[] = [eq(todos.userId, userId), eq(todos.headingId, headingId)];
  if (!opts.includeTrashed) conds.push(isNull(todos.trashedAt));
  return tx.select().from(todos).where(and(...conds)).orderBy(asc(todos.sortKey), asc(todos.id)).all();
}

/** Open, untrashed to-dos under each heading (spec §2.2 `openCount`), from the sealed index. */
export function openCounts(deps: Deps, p: Principal, headingIds: readonly string[]): Map<string, number> {
  const out = new Map<string, number>(headingIds.map((id) => [id, 0]));
  if (!headingIds.length) return out;
  const rows = deps.db
    .select({ id: todos.id, updatedAt: todos.updatedAt, headingId: todos.headingId })
    .from(todos)
    .where(and(eq(todos.userId, p.userId), inArray(todos.headingId, [...headingIds]), isNull(todos.trashedAt)))
    .all();
  assertAccountSize(deps, p.userId);
  // Statuses from the sealed index: no to-do row is opened.
  const attrs = indexedAttrs(deps.db.$client, p, rows);
  for (const r of rows) if (attrs.get(r.id)?.status === 'open') out.set(r.headingId!, (out.get(r.headingId!) ?? 0) + 1);
  return out;
}

/** The indexed attributes of every to-do of the account (checked against each row's stamp). */
export function accountIndex(deps: Deps, p: Principal) {
  const stamps = prepared(deps.db, 'todos.stamps', (db) =>
    db.select({ id: todos.id, updatedAt: todos.updatedAt }).from(todos).where(eq(todos.userId, sql.placeholder('userId'))).prepare(),
  );
  return indexedAttrs(deps.db.$client, p, stamps.all({ userId: p.userId }), { wholeAccount: true });
}
