// Completing, canceling and reopening to-dos (routers/todos/model.ts), with recurrence: finishing a
// recurring to-do logs the occurrence as a completed copy and rolls the series on
// (routers/todos/recurrence.ts, docs/recurrence.md).
import { todoTags } from '../../db/schema/index.js';
import type { Tx } from '../../db/client.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { newId } from '../../core/ids.js';
import { recordEvent } from '../events.js';
import { bandKeyFor, type Band } from '../band.js';
import { nextOccurrence } from './recurrence.js';
import type { TodoOut } from './schema.js';
import { indexTodo } from '../todo-index/index.js';
import { tagIdsOf } from './writes.js';
import { type TodoRow, type TodoSealed, getRow, insertTodoRow, openTodo, presentTodo, sealTodo, todayOf, writeTodo } from './rows.js';

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
