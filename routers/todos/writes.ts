// Creating and changing to-dos (routers/todos/model.ts): where a to-do may go, its tags, create,
// update, move, trash and delete, each with its event in the same transaction.
import { and, asc, eq, sql } from 'drizzle-orm';
import { headings, todoTags, todos } from '../../db/schema/index.js';
import type { Tx } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { removeAttachmentsOf } from '../attachments/remove.js';
import { recordEvent } from '../events.js';
import { bandIdTaken, bandKeyFor, type Band } from '../band.js';
import { canonicalRecurrenceRule, type RecurrenceBasis as Basis } from './recurrence.js';
import { containers } from '../../db/schema/index.js';
import { findContainerRow } from '../containers/model.js';
import { containerIsDead } from '../containers/live.js';
import { tagIdsForNames } from '../tags/model.js';
import type { TodoOut } from './schema.js';
import { indexTodo, unindexTodo } from '../todo-index/index.js';
import { checklistOf } from './checklist.js';
import { type Priority, type StoredRecurrence, type TodoRow, type TodoSealed, getRow, insertTodoRow, openTodo, presentTodo, sealTodo, toTodo, writeTodo } from './rows.js';

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

function setTags(deps: Deps, tx: Tx, p: Principal, todoId: string, names: readonly string[]): void {
  const ids = [...new Set(tagIdsForNames(deps, tx, p, names))];
  tx.delete(todoTags).where(and(eq(todoTags.userId, p.userId), eq(todoTags.todoId, todoId))).run();
  ids.forEach((tagId, position) => tx.insert(todoTags).values({ todoId, tagId, userId: p.userId, position }).run());
}

export function tagIdsOf(deps: Deps, userId: string, todoId: string): string[] {
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
