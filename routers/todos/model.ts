// To-dos (DECISIONS §5; spec §3 rule 4, §4.5 heading rows). Relations (container, heading, tags),
// the sort key and server times are plaintext; everything else sits in one sealed blob. Every
// change records its `todo.*` event in the same transaction (spec §6.2).
import { and, asc, eq, fillPlaceholders, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { headings, todoTags, todos } from '../../db/schema/index.js';
import type Database from 'better-sqlite3';
import type { Db, Tx } from '../../db/client.js';
import { inJsonIds, prepared } from '../../db/prepared.js';
import { afterTuplePlaceholders, tupleParams, tuplePage } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { removeAttachmentsOf } from '../attachments/remove.js';
import { recordEvent } from '../events.js';
import { bandIdTaken, bandKeyFor, type Band } from '../band.js';
import { DecryptBudget } from '../../core/decrypt-budget.js';
import { assertAccountSize } from '../account-size.js';
import { canonicalRecurrenceRule, nextOccurrence, type RecurrenceBasis as Basis } from './recurrence.js';
import { containers } from '../../db/schema/index.js';
import { findContainerRow } from '../containers/model.js';
import { containerIsDead, hasTrashedContainer, inLiveContainer } from '../containers/live.js';
import { tagIdsForNames } from '../tags/model.js';
import type { TodoOut } from './schema.js';
import { indexedAttrs, indexTodo, unindexTodo } from '../todo-index/index.js';

/** A to-do row as the application reads and writes it; the list-order columns are the database's (db/schema/tasks.ts). */
export type TodoRow = Omit<typeof todos.$inferSelect, 'parentKey' | 'headingRef' | 'headingKey'>;
type Priority = 'low' | 'medium' | 'high';
export type TodoStatus = 'open' | 'completed' | 'canceled';
type ChecklistItem = { id: string; title: string; done: boolean };
/** `done`: occurrences completed so far (COUNT); `anchor`: where a schedule series started (routers/todos/recurrence.ts). */
type StoredRecurrence = { rule: string; basis: Basis; done: number; anchor: string | null };

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

function sealTodo(dek: Buffer, userId: string, id: string, s: TodoSealed): Buffer {
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
function tagName(p: Principal, tagId: string, sealed: Buffer): string {
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
function getRow(deps: Deps, userId: string, id: string): TodoRow {
  const row = todoById(deps.db).get(userId, id);
  if (!row) throw notFound('To-do');
  return row;
}

/** The server's UTC date from the injected clock (default of `today`). */
export function todayOf(deps: Deps): string {
  return new Date(deps.clock()).toISOString().slice(0, 10);
}

/**
 * Where a to-do may go (DECISIONS §5): a live project or subproject (areas refused), and a heading
 * of that container. With a heading and no parentId, the parent is the heading's project.
 */
export function resolveBand(deps: Deps, tx: Tx, userId: string, parentId: string | null | undefined, headingId: string | null | undefined): Band {
  let parent = parentId ?? null;
  if (headingId) {
    const h = tx.select().from(headings).where(and(eq(headings.userId, userId), eq(headings.id, headingId))).get();
    if (!h) throw invalid('/headingId', 'no heading with this id');
    if (parentId === undefined) parent = h.projectId;
    else if (parentId !== h.projectId) throw invalid('/headingId', 'the heading is not in the container given as parentId');
    if (containerIsDead(deps.db.$client, userId, h.projectId)) throw invalid('/headingId', "the heading's project is in the trash");
  }
  if (parent !== null) {
    const c = findContainerRow(tx, userId, parent);
    if (!c) throw invalid('/parentId', 'no container with this id');
    if (c.kind === 'area') throw invalid('/parentId', 'a to-do sits in a project or subproject, not in an area');
    if (containerIsDead(deps.db.$client, userId, parent)) throw invalid('/parentId', 'the container is in the trash');
  }
  return { parentId: parent, headingId: headingId ?? null };
}

function checklistOf(items: { id?: string | undefined; title: string; done?: boolean | undefined }[]): ChecklistItem[] {
  const seen = new Set<string>();
  return items.map((it, i) => {
    const id = it.id ?? newId();
    if (seen.has(id)) throw invalid(`/checklist/${i}/id`, 'checklist item ids must be unique');
    seen.add(id);
    return { id, title: it.title, done: it.done ?? false };
  });
}

function setTags(deps: Deps, tx: Tx, p: Principal, todoId: string, names: readonly string[]): void {
  const ids = [...new Set(tagIdsForNames(deps, tx, p, names))];
  tx.delete(todoTags).where(and(eq(todoTags.userId, p.userId), eq(todoTags.todoId, todoId))).run();
  ids.forEach((tagId, position) => tx.insert(todoTags).values({ todoId, tagId, userId: p.userId, position }).run());
}

function tagIdsOf(deps: Deps, userId: string, todoId: string): string[] {
  const q = prepared(deps.db, 'todoTags.idsOfTodo', (db) =>
    db
      .select({ id: todoTags.tagId })
      .from(todoTags)
      .where(and(eq(todoTags.userId, sql.placeholder('userId')), eq(todoTags.todoId, sql.placeholder('todoId'))))
      .orderBy(asc(todoTags.position))
      .prepare(),
  );
  return q.all({ userId, todoId }).map((r) => r.id);
}

type RecurrenceIn = { rule: string; basis: Basis };

/** A new series: the rule in canonical form (upper case, no `RRULE:`), nothing completed yet. */
function freshRecurrence(r: RecurrenceIn): StoredRecurrence {
  return { rule: canonicalRecurrenceRule(r.rule), basis: r.basis, done: 0, anchor: null };
}

export type CreateTodo = {
  title: string;
  notes?: string | null | undefined;
  whenDate?: string | null | undefined;
  evening?: boolean | undefined;
  someday?: boolean | undefined;
  deadline?: string | null | undefined;
  priority?: Priority | null | undefined;
  tags?: string[] | undefined;
  checklist?: { id?: string | undefined; title: string; done?: boolean | undefined }[] | undefined;
  recurrence?: RecurrenceIn | null | undefined;
  parentId?: string | null | undefined;
  headingId?: string | null | undefined;
  id?: string | undefined;
};

/** A client id must be new: a to-do's id is `duplicate_id`; an id of another task-core row is `conflict`. */
function checkNewTodoId(deps: Deps, tx: Tx, id: string): void {
  if (tx.select({ id: todos.id }).from(todos).where(eq(todos.id, id)).get()) {
    throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
  }
  const other =
    bandIdTaken(deps.db.$client, id) ||
    tx.select({ id: containers.id }).from(containers).where(eq(containers.id, id)).get() ||
    tx.select({ id: headings.id }).from(headings).where(eq(headings.id, id)).get();
  if (other) throw new AppError('conflict', 'This id already names a container, heading or note.', { pointer: '/id' });
}

export function createTodo(deps: Deps, p: Principal, input: CreateTodo): TodoOut {
  return deps.db.transaction((tx) => {
    const band = resolveBand(deps, tx, p.userId, input.parentId, input.headingId);
    if (input.id) checkNewTodoId(deps, tx, input.id);
    const id = input.id ?? newId();
    const now = deps.clock();
    const s: TodoSealed = {
      title: input.title,
      notes: input.notes ?? null,
      status: 'open',
      completedAt: null,
      whenDate: input.whenDate ?? null,
      evening: input.evening ?? false,
      someday: input.someday ?? false,
      deadline: input.deadline ?? null,
      priority: input.priority ?? null,
      checklist: checklistOf(input.checklist ?? []),
      recurrence: input.recurrence ? freshRecurrence(input.recurrence) : null,
    };
    const row: TodoRow = {
      id,
      userId: p.userId,
      parentId: band.parentId,
      headingId: band.headingId,
      sortKey: bandKeyFor(deps.db.$client, p.userId, band, {}),
      sealed: sealTodo(p.dek, p.userId, id, s),
      trashedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    insertTodoRow(deps, row);
    indexTodo(deps.db.$client, p, row, s);
    if (input.tags?.length) setTags(deps, tx, p, id, input.tags);
    recordEvent(deps, { userId: p.userId, type: 'todo.created', id, at: now });
    // Without tags there are no tag links to read back.
    return input.tags?.length ? presentTodo(deps, p, row, s) : toTodo(row, s, []);
  });
}

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

/** Inserts a to-do row (prepared once; runs inside the caller's transaction on the one connection). */
function insertTodoRow(deps: Deps, row: TodoRow): void {
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
function writeTodo(deps: Deps, tx: Tx, p: Principal, row: TodoRow, s: TodoSealed, extra: Partial<Pick<TodoRow, 'parentId' | 'headingId' | 'sortKey' | 'trashedAt'>> = {}): TodoRow {
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

export type UpdateTodo = Omit<CreateTodo, 'title' | 'parentId' | 'headingId' | 'id'> & { id: string; title?: string | undefined };

export function updateTodo(deps: Deps, p: Principal, input: UpdateTodo): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, input.id);
    const s = openTodo(p.dek, row);
    const next: TodoSealed = { ...s };
    // Field by field: only what the client sent changes; null clears the nullable ones.
    if (input.title !== undefined) next.title = input.title;
    if (input.notes !== undefined) next.notes = input.notes;
    if (input.whenDate !== undefined) next.whenDate = input.whenDate;
    if (input.evening !== undefined) next.evening = input.evening;
    if (input.someday !== undefined) next.someday = input.someday;
    if (input.deadline !== undefined) next.deadline = input.deadline;
    if (input.priority !== undefined) next.priority = input.priority;
    if (input.checklist !== undefined) next.checklist = checklistOf(input.checklist);
    if (input.recurrence !== undefined) {
      const fresh = input.recurrence === null ? null : freshRecurrence(input.recurrence);
      const same = s.recurrence && fresh && s.recurrence.rule === fresh.rule && s.recurrence.basis === fresh.basis;
      next.recurrence = same ? s.recurrence : fresh;
    }
    // Moving the date that carries the series (whenDate, else the deadline) by hand restarts a
    // schedule series from the new date; its COUNT so far stays (docs/recurrence.md "Anchor").
    const carrier = (x: TodoSealed) => x.whenDate ?? x.deadline;
    if (next.recurrence && carrier(next) !== carrier(s)) next.recurrence = { ...next.recurrence, anchor: null };
    const tagsBefore = tagIdsOf(deps, p.userId, row.id);
    if (input.tags !== undefined) setTags(deps, tx, p, row.id, input.tags);
    const tagsAfter = input.tags !== undefined ? tagIdsOf(deps, p.userId, row.id) : tagsBefore;
    const tagsChanged = JSON.stringify(tagsAfter) !== JSON.stringify(tagsBefore);
    // An untagged to-do has no tag names to look up.
    const present = (r: TodoRow, t: TodoSealed) => (tagsAfter.length ? presentTodo(deps, p, r, t) : toTodo(r, t, []));
    if (!tagsChanged && JSON.stringify(next) === JSON.stringify(s)) return present(row, s);
    return present(writeTodo(deps, tx, p, row, next), next);
  });
}

/**
 * One change to a to-do's checklist (the item routes, docs/api.md "Checklist items"): the same
 * write path as PATCH (sealed state, `todo.updated` in the transaction), without resending the
 * list. `change` gets a copy of the items and returns the new list; an unchanged list writes nothing.
 */
function changeChecklist(deps: Deps, p: Principal, id: string, change: (items: ChecklistItem[]) => ChecklistItem[]): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, id);
    const s = openTodo(p.dek, row);
    const items = change(s.checklist.map((c) => ({ ...c })));
    if (JSON.stringify(items) === JSON.stringify(s.checklist)) return presentTodo(deps, p, row, s);
    const next: TodoSealed = { ...s, checklist: items };
    return presentTodo(deps, p, writeTodo(deps, tx, p, row, next), next);
  });
}

/** The index of an item, or 404 when the to-do has none with this id. */
function itemIndex(items: ChecklistItem[], itemId: string): number {
  const i = items.findIndex((c) => c.id === itemId);
  if (i < 0) throw notFound('Checklist item');
  return i;
}

type Placement = { after?: string | null | undefined; before?: string | null | undefined };

/** Inserts `item` after/before a sibling (422 at the pointer naming an unknown one), else at the end. */
function place(items: ChecklistItem[], item: ChecklistItem, at: Placement): ChecklistItem[] {
  if (at.after && at.before) throw invalid('/before', 'give after or before, not both');
  const ref = at.after ?? at.before;
  if (!ref) return [...items, item];
  const pointer = at.after ? '/after' : '/before';
  if (ref === item.id) throw invalid(pointer, 'an item cannot be placed next to itself');
  const i = items.findIndex((c) => c.id === ref);
  if (i < 0) throw invalid(pointer, 'no checklist item of this to-do has this id');
  return [...items.slice(0, at.after ? i + 1 : i), item, ...items.slice(at.after ? i + 1 : i)];
}

export function addChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId?: string | undefined; title: string; done?: boolean | undefined } & Placement): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    if (items.length >= LIMITS.todo.checklist) throw new AppError('conflict', `A to-do holds at most ${LIMITS.todo.checklist} checklist items.`);
    const itemId = input.itemId ?? newId();
    if (items.some((c) => c.id === itemId)) throw invalid('/itemId', 'the checklist already has an item with this id');
    return place(items, { id: itemId, title: input.title, done: input.done ?? false }, input);
  });
}

export function updateChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId: string; title?: string | undefined; done?: boolean | undefined }): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    const item = items[itemIndex(items, input.itemId)]!;
    if (input.title !== undefined) item.title = input.title;
    if (input.done !== undefined) item.done = input.done;
    return items;
  });
}

export function deleteChecklistItem(deps: Deps, p: Principal, id: string, itemId: string): TodoOut {
  return changeChecklist(deps, p, id, (items) => {
    const i = itemIndex(items, itemId);
    return [...items.slice(0, i), ...items.slice(i + 1)];
  });
}

export function moveChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId: string } & Placement): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    const i = itemIndex(items, input.itemId);
    return place([...items.slice(0, i), ...items.slice(i + 1)], items[i]!, input);
  });
}

export function moveTodo(
  deps: Deps,
  p: Principal,
  input: { id: string; parentId: string | null; headingId?: string | null | undefined; after?: string | null | undefined; before?: string | null | undefined },
): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, input.id);
    const band = resolveBand(deps, tx, p.userId, input.parentId, input.headingId ?? null);
    const sortKey = bandKeyFor(deps.db.$client, p.userId, band, input, row.id);
    const s = openTodo(p.dek, row);
    return presentTodo(deps, p, writeTodo(deps, tx, p, row, s, { parentId: band.parentId, headingId: band.headingId, sortKey }), s);
  });
}

export function trashTodo(deps: Deps, p: Principal, id: string, trashed: boolean): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, id);
    const s = openTodo(p.dek, row);
    if ((row.trashedAt !== null) === trashed) return presentTodo(deps, p, row, s);
    return presentTodo(deps, p, writeTodo(deps, tx, p, row, s, { trashedAt: trashed ? deps.clock() : null }), s);
  });
}

export function deleteTodo(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    const res = tx.delete(todos).where(and(eq(todos.userId, p.userId), eq(todos.id, id))).run();
    if (res.changes === 0) throw notFound('To-do');
    unindexTodo(deps.db.$client, p, id);
    const now = deps.clock();
    removeAttachmentsOf(deps, tx, p.userId, 'todo', [id], now);
    recordEvent(deps, { userId: p.userId, type: 'todo.deleted', id, at: now });
  });
}

export type Finished = { row: TodoRow; s: TodoSealed; copy: { row: TodoRow; s: TodoSealed } | null; changed: boolean };

/**
 * Completes (or cancels) one to-do inside the caller's transaction (spec §4.5 heading complete
 * uses the same step). A recurring open to-do logs a completed copy (new id, no recurrence) and
 * rolls to its next occurrence, staying open, its deadline moved by the same offset; when the rule
 * is exhausted (COUNT/UNTIL) the to-do itself completes for good.
 */
export function finishTodoTx(deps: Deps, tx: Tx, p: Principal, row: TodoRow, target: 'completed' | 'canceled', today: string): Finished {
  const s = openTodo(p.dek, row);
  if (s.status === target) return { row, s, copy: null, changed: false };
  const now = deps.clock();
  if (s.recurrence && s.status === 'open') {
    const next = nextOccurrence({
      rule: s.recurrence.rule,
      basis: s.recurrence.basis,
      whenDate: s.whenDate,
      deadline: s.deadline,
      today,
      // Completions of the series so far, counting this one (routers/todos/recurrence.ts).
      count: s.recurrence.done + 1,
      anchor: s.recurrence.anchor,
    });
    if (next) {
      const copyId = newId();
      const band: Band = { parentId: row.parentId, headingId: row.headingId };
      const copyS: TodoSealed = { ...s, status: target, completedAt: now, recurrence: null };
      const copyRow: TodoRow = {
        id: copyId,
        userId: p.userId,
        parentId: row.parentId,
        headingId: row.headingId,
        sortKey: bandKeyFor(deps.db.$client, p.userId, band, { before: row.trashedAt === null ? row.id : null }),
        sealed: sealTodo(p.dek, p.userId, copyId, copyS),
        trashedAt: row.trashedAt,
        createdAt: now,
        updatedAt: now,
      };
      insertTodoRow(deps, copyRow);
      indexTodo(deps.db.$client, p, copyRow, copyS);
      tagIdsOf(deps, p.userId, row.id).forEach((tagId, position) => tx.insert(todoTags).values({ todoId: copyId, tagId, userId: p.userId, position }).run());
      recordEvent(deps, { userId: p.userId, type: 'todo.created', id: copyId, at: now });
      const rolled: TodoSealed = {
        ...s,
        whenDate: next.whenDate,
        deadline: next.deadline,
        checklist: s.checklist.map((c) => ({ ...c, done: false })),
        recurrence: { ...s.recurrence, done: s.recurrence.done + 1, anchor: next.anchor },
      };
      return { row: writeTodo(deps, tx, p, row, rolled), s: rolled, copy: { row: copyRow, s: copyS }, changed: true };
    }
  }
  const done: TodoSealed = { ...s, status: target, completedAt: now };
  return { row: writeTodo(deps, tx, p, row, done), s: done, copy: null, changed: true };
}

export function finishTodo(deps: Deps, p: Principal, id: string, target: 'completed' | 'canceled', today: string | undefined) {
  return deps.db.transaction((tx) => {
    const f = finishTodoTx(deps, tx, p, getRow(deps, p.userId, id), target, today ?? todayOf(deps));
    return { ...presentTodo(deps, p, f.row, f.s), loggedCopyId: f.copy?.row.id ?? null };
  });
}

export function reopenTodo(deps: Deps, p: Principal, id: string): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, id);
    const s = openTodo(p.dek, row);
    if (s.status === 'open') return presentTodo(deps, p, row, s);
    const next: TodoSealed = { ...s, status: 'open', completedAt: null };
    return presentTodo(deps, p, writeTodo(deps, tx, p, row, next), next);
  });
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
