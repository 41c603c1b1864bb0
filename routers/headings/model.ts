// Headings (spec §2.2, §3 heading rows and rules, §4.5). A heading has no trash; writes to a
// heading of a trashed project (or of one inside a trashed container) are `validation_failed`
// until the project is restored, and lists leave such headings out (spec §3 rule 1).
import { createHash } from 'node:crypto';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { containers, headings, todos } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { keyBetween } from '../../db/order.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { bandIdTaken, bandKeysAtEnd } from '../band.js';
import { assertAccountSize } from '../account-size.js';
import { findContainerRow, insertContainer, openContainer, toContainer, type ContainerRow } from '../containers/model.js';
import { containerIsDead, inLiveContainer } from '../containers/live.js';
import { restampTodos } from '../todo-index/index.js';
import { finishTodoTx, openCounts, openTodo, presentTodos, todayOf, todosUnderHeading, type TodoRow, type TodoSealed } from '../todos/model.js';
import type { HeadingOut } from './schema.js';

type Row = typeof headings.$inferSelect;
type Sealed = { name: string };

const aad = (userId: string, id: string) => rowAad(userId, 'headings', id);
const nameOf = (dek: Buffer, row: Row) => openJson<Sealed>(dek, aad(row.userId, row.id), row.sealed).name;

function toHeading(dek: Buffer, row: Row, openCount: number): HeadingOut {
  return { id: row.id, projectId: row.projectId, name: nameOf(dek, row), sortKey: row.sortKey, openCount, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

function present(deps: Deps, p: Principal, row: Row): HeadingOut {
  return toHeading(p.dek, row, openCounts(deps, p, [row.id]).get(row.id) ?? 0);
}

function getRow(tx: Tx | Db, userId: string, id: string): Row {
  const row = tx.select().from(headings).where(and(eq(headings.userId, userId), eq(headings.id, id))).get();
  if (!row) throw notFound('Heading');
  return row;
}

/** Spec §3 rule 1: every write to a heading of a trashed project is refused until it is restored. */
function assertWritable(deps: Deps, row: Row): void {
  if (containerIsDead(deps.db.$client, row.userId, row.projectId)) {
    throw new AppError('validation_failed', "The heading's project is in the trash; restore the project first.");
  }
}

function projectKeys(tx: Tx, userId: string, projectId: string, excludeId: string | null) {
  const base: SQL[] = [eq(headings.userId, userId), eq(headings.projectId, projectId)];
  if (excludeId) base.push(sql`${headings.id} <> ${excludeId}`);
  return base;
}

/**
 * Spec §2.2 `after`: omitted = last, null = first, a heading id = right after it (a heading of the
 * same project, else `validation_failed` at /after).
 */
function headingKey(tx: Tx, userId: string, projectId: string, after: string | null | undefined, movingId: string | null): string {
  const conds = projectKeys(tx, userId, projectId, movingId);
  const agg = (fn: 'min' | 'max', extra?: SQL) =>
    tx.select({ k: sql<string | null>`${sql.raw(fn)}(${headings.sortKey})` }).from(headings).where(and(...conds, ...(extra ? [extra] : []))).get()?.k ?? null;
  if (after === undefined) return keyBetween(agg('max'), null);
  if (after === null) return keyBetween(null, agg('min'));
  if (after === movingId) throw invalid('/after', 'a heading cannot be placed after itself');
  const n = tx.select().from(headings).where(and(eq(headings.userId, userId), eq(headings.id, after))).get();
  if (!n || n.projectId !== projectId) throw invalid('/after', 'no heading with this id in the project');
  return keyBetween(n.sortKey, agg('min', sql`${headings.sortKey} > ${n.sortKey}`));
}

export function createHeading(deps: Deps, p: Principal, input: { projectId: string; name: string; after?: string | null | undefined; id?: string | undefined }): HeadingOut {
  return deps.db.transaction((tx) => {
    const project = findContainerRow(tx, p.userId, input.projectId);
    if (!project) throw invalid('/projectId', 'no project with this id');
    if (project.kind === 'area') throw invalid('/projectId', 'an area cannot hold headings; give a project');
    if (containerIsDead(deps.db.$client, p.userId, project.id)) throw invalid('/projectId', 'the project is in the trash');
    if (input.id) {
      if (tx.select({ id: headings.id }).from(headings).where(eq(headings.id, input.id)).get()) {
        throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
      }
      if (bandIdTaken(deps.db.$client, input.id) || tx.select({ id: containers.id }).from(containers).where(eq(containers.id, input.id)).get()) {
        throw new AppError('conflict', 'This id already names a container, to-do or note.', { pointer: '/id' });
      }
    }
    const id = input.id ?? newId();
    const now = deps.clock();
    const row: Row = {
      id,
      userId: p.userId,
      projectId: project.id,
      sortKey: headingKey(tx, p.userId, project.id, input.after, null),
      sealed: sealJson(p.dek, aad(p.userId, id), { name: input.name } satisfies Sealed),
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(headings).values(row).run();
    return toHeading(p.dek, row, 0);
  });
}

export function getHeading(deps: Deps, p: Principal, id: string): HeadingOut {
  return present(deps, p, getRow(deps.db, p.userId, id));
}

export function updateHeading(deps: Deps, p: Principal, input: { id: string; name?: string | undefined; after?: string | null | undefined }): HeadingOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, input.id);
    assertWritable(deps, row);
    const next: Row = { ...row };
    if (input.name !== undefined) next.sealed = sealJson(p.dek, aad(p.userId, row.id), { name: input.name } satisfies Sealed);
    if (input.after !== undefined) next.sortKey = headingKey(tx, p.userId, row.projectId, input.after, row.id);
    if (input.name === undefined && input.after === undefined) return present(deps, p, row);
    next.updatedAt = deps.clock();
    tx.update(headings).set({ sealed: next.sealed, sortKey: next.sortKey, updatedAt: next.updatedAt }).where(and(eq(headings.userId, p.userId), eq(headings.id, row.id))).run();
    return present(deps, p, next);
  });
}

export type HeadingListQuery = ListQuery & { project_id?: string | undefined; projectId?: string | undefined };

/**
 * Spec §4.5: with a project, its headings in order; without, every heading of the account grouped
 * by project; headings of trashed projects (or inside a trashed container) are left out.
 */
export function listHeadings(deps: Deps, p: Principal, query: HeadingListQuery) {
  if (query.project_id !== undefined && query.projectId !== undefined && query.project_id !== query.projectId) {
    throw invalid('/projectId', 'project_id and projectId disagree; give one');
  }
  const projectId = query.project_id ?? query.projectId;
  const conds: SQL[] = [eq(headings.userId, p.userId), inLiveContainer(headings.projectId, p.userId)];
  if (projectId !== undefined) conds.push(eq(headings.projectId, projectId));
  const since = updatedSince(headings.updatedAt, query);
  if (since) conds.push(since);
  const cols = [sql`${headings.projectId}`, sql`${headings.sortKey}`];
  const page = tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:headings`,
    query,
    arity: 2,
    fetch: (after, n) =>
      deps.db
        .select()
        .from(headings)
        .where(and(...conds, ...(after ? [afterTuple(cols, headings.id, after)] : [])))
        .orderBy(asc(headings.projectId), asc(headings.sortKey), asc(headings.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [r.projectId, r.sortKey], i: r.id }),
    map: (r) => r,
  });
  const counts = openCounts(deps, p, page.data.map((r) => r.id));
  return { data: page.data.map((r) => toHeading(p.dek, r, counts.get(r.id) ?? 0)), next_cursor: page.next_cursor };
}

/**
 * Spec §3: DELETE leaves every to-do of the heading in the project with `headingId: null`, in its
 * order (appended after the project's heading-less to-dos); emits `heading.deleted` and a
 * `todo.updated` per cleared to-do.
 */
export function deleteHeading(deps: Deps, p: Principal, id: string) {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    assertWritable(deps, row);
    const now = deps.clock();
    const under = todosUnderHeading(tx, p.userId, row.id, { includeTrashed: true });
    const keys = bandKeysAtEnd(deps.db.$client, p.userId, { parentId: row.projectId, headingId: null }, under.length);
    recordEvent(deps, { userId: p.userId, type: 'heading.deleted', id: row.id, at: now });
    under.forEach((t, i) => {
      tx.update(todos).set({ headingId: null, sortKey: keys[i]!, updatedAt: now }).where(and(eq(todos.userId, p.userId), eq(todos.id, t.id))).run();
      recordEvent(deps, { userId: p.userId, type: 'todo.updated', id: t.id, at: now });
    });
    restampTodos(deps.db.$client, p, under.map((t) => t.id), now);
    tx.delete(headings).where(and(eq(headings.userId, p.userId), eq(headings.id, row.id))).run();
    return { id: row.id, projectId: row.projectId, clearedTodoIds: under.map((t) => t.id) };
  });
}

/**
 * The id of the subproject a convert without `id` creates: derived from the user and the heading
 * (SHA-256, shaped as an UPPERCASE version-8 UUID), so a retry after a partial failure finds it.
 */
export function derivedSubprojectId(userId: string, headingId: string): string {
  const h = createHash('sha256').update(`cairn heading convert v1\0${userId}\0${headingId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex').toUpperCase();
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * Convert is one transaction (issue 10): the subproject, the moved to-dos, the removed heading and
 * their events commit together or not at all, so no crash leaves an empty subproject beside the
 * heading. The steps are named (and live on an object, so a test can make the second fail and see
 * that nothing of the first remains). The spec's id rules (§4.5) still hold for what a client can
 * see: without `id` the subproject id is derived from the heading, and a container already holding
 * that id (one a client created with it) is reused when it is a live subproject of the project,
 * else `conflict`; a supplied `id` that exists is `duplicate_id`.
 */
export const convertSteps = {
  /** Step 1: the target subproject (created, or the one already holding the derived id). */
  ensureSubproject(deps: Deps, tx: Tx, p: Principal, heading: Row, suppliedId: string | undefined): ContainerRow {
    const name = nameOf(p.dek, heading);
    if (suppliedId) {
      const taken =
        tx.select({ id: containers.id }).from(containers).where(eq(containers.id, suppliedId)).get() ||
        tx.select({ id: headings.id }).from(headings).where(eq(headings.id, suppliedId)).get() ||
        bandIdTaken(deps.db.$client, suppliedId);
      if (taken) throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
      return insertContainer(deps, tx, p, { kind: 'subproject', name, parentId: heading.projectId, id: suppliedId });
    }
    const derived = derivedSubprojectId(p.userId, heading.id);
    const existing = findContainerRow(tx, p.userId, derived);
    if (existing) {
      if (existing.kind !== 'subproject' || existing.parentId !== heading.projectId || containerIsDead(deps.db.$client, p.userId, existing.id)) {
        throw new AppError('conflict', 'The subproject with the id this convert derives has been trashed or moved; restore or move it back, or convert with an explicit id.');
      }
      return existing;
    }
    return insertContainer(deps, tx, p, { kind: 'subproject', name, parentId: heading.projectId, id: derived });
  },

  /** Step 2: moves the heading's to-dos (in order, `headingId` cleared) and removes the heading. */
  moveAndFinish(deps: Deps, tx: Tx, p: Principal, heading: Row, sub: ContainerRow) {
    const now = deps.clock();
    const under = todosUnderHeading(tx, p.userId, heading.id, { includeTrashed: true });
    const keys = bandKeysAtEnd(deps.db.$client, p.userId, { parentId: sub.id, headingId: null }, under.length);
    const moved: { row: TodoRow; s: TodoSealed }[] = [];
    under.forEach((t, i) => {
      tx.update(todos).set({ parentId: sub.id, headingId: null, sortKey: keys[i]!, updatedAt: now }).where(and(eq(todos.userId, p.userId), eq(todos.id, t.id))).run();
      recordEvent(deps, { userId: p.userId, type: 'todo.updated', id: t.id, at: now });
      moved.push({ row: { ...t, parentId: sub.id, headingId: null, sortKey: keys[i]!, updatedAt: now }, s: openTodo(p.dek, t) });
    });
    restampTodos(deps.db.$client, p, under.map((t) => t.id), now);
    tx.delete(headings).where(and(eq(headings.userId, p.userId), eq(headings.id, heading.id))).run();
    recordEvent(deps, { userId: p.userId, type: 'heading.deleted', id: heading.id, at: now });
    const current = findContainerRow(tx, p.userId, sub.id)!;
    return { headingId: heading.id, subproject: toContainer(p.dek, current, openContainer(p.dek, current)), todos: presentTodos(deps, p, moved) };
  },
};

/** Spec §4.5 convert, with its id-derivation rules, in one transaction. */
export function convertHeading(deps: Deps, p: Principal, headingId: string, suppliedId: string | undefined) {
  return deps.db.transaction((tx) => {
    const heading = getRow(tx, p.userId, headingId);
    const project = findContainerRow(tx, p.userId, heading.projectId)!;
    if (project.kind !== 'project') throw new AppError('validation_failed', 'A heading inside a subproject cannot be converted (a subproject cannot hold subprojects).');
    assertWritable(deps, heading);
    const sub = convertSteps.ensureSubproject(deps, tx, p, heading, suppliedId);
    return convertSteps.moveAndFinish(deps, tx, p, heading, sub);
  });
}

/**
 * Spec §4.5 complete: completes each open, untrashed to-do under the heading as
 * /todos/{id}/complete does; a recurring one logs a copy and rolls to its next occurrence.
 */
export function completeHeading(deps: Deps, p: Principal, id: string, today: string | undefined) {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    assertWritable(deps, row);
    assertAccountSize(deps, p.userId);
    const day = today ?? todayOf(deps);
    const under = todosUnderHeading(tx, p.userId, row.id);
    const completed: { row: TodoRow; s: TodoSealed }[] = [];
    const rolled: { row: TodoRow; s: TodoSealed }[] = [];
    for (const t of under) {
      if (openTodo(p.dek, t).status !== 'open') continue;
      const f = finishTodoTx(deps, tx, p, t, 'completed', day);
      if (f.copy) {
        completed.push(f.copy);
        rolled.push({ row: f.row, s: f.s });
      } else completed.push({ row: f.row, s: f.s });
    }
    return { heading: present(deps, p, row), completed: presentTodos(deps, p, completed), rolled: presentTodos(deps, p, rolled) };
  });
}
