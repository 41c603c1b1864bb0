// Tags (spec §2.9, §4.13). Names are sealed; uniqueness (case-insensitive) is a blind index.
import { restampTodos } from '../todo-index/index.js';
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { inJsonIds, prepared } from '../../db/prepared.js';
import { tags, todoTags, todos } from '../../db/schema/index.js';
import type { Tx } from '../../db/client.js';
import { finishPage, pageConditions, type ListQuery, type PageSpec } from '../../db/paging.js';
import { keyAfter } from '../../db/order.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { tagNameIndex } from '../../core/crypto/blind-index.js';
import { recordEvent } from '../events.js';

type Row = typeof tags.$inferSelect;
type Sealed = { name: string; colorHex: string | null };

const aad = (userId: string, id: string) => rowAad(userId, 'tags', id);

function toTag(dek: Buffer, row: Row) {
  const s = openJson<Sealed>(dek, aad(row.userId, row.id), row.sealed);
  return { id: row.id, name: s.name, colorHex: s.colorHex, sortKey: row.sortKey, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

/** The tag row by (user, id), prepared once per database; it also runs inside a caller's transaction. */
function getRow(deps: Deps, userId: string, id: string): Row {
  const q = prepared(deps.db, 'tags.byId', (db) =>
    db.select().from(tags).where(and(eq(tags.userId, sql.placeholder('userId')), eq(tags.id, sql.placeholder('id')))).prepare(),
  );
  const row = q.get({ userId, id });
  if (!row) throw notFound('Tag');
  return row;
}

export function listTags(deps: Deps, p: Principal, query: ListQuery) {
  const spec: PageSpec = { key: deps.keys.cursor, scope: `${p.userId}:tags`, query, sortCol: tags.sortKey, idCol: tags.id, updatedCol: tags.updatedAt };
  const { where, fetch, limit } = pageConditions(spec);
  const rows = deps.db
    .select()
    .from(tags)
    .where(and(eq(tags.userId, p.userId), ...where))
    .orderBy(asc(tags.sortKey), asc(tags.id))
    .limit(fetch)
    .all();
  return finishPage(spec, rows, limit, (r) => ({ k: r.sortKey, i: r.id }), (r) => toTag(p.dek, r));
}

export function getTag(deps: Deps, p: Principal, id: string) {
  return toTag(p.dek, getRow(deps, p.userId, id));
}

type CreateTag = { name: string; colorHex?: string | null | undefined; id?: string | undefined };

/** Inside the caller's transaction: the tag with this name, or a new one (recording `tag.created`). */
export function findOrCreateTag(deps: Deps, tx: Tx, p: Principal, input: CreateTag): { created: boolean; row: Row } {
  const index = tagNameIndex(p.dek, input.name);
  const existing = tx.select().from(tags).where(and(eq(tags.userId, p.userId), eq(tags.nameIndex, index))).get();
  if (existing) return { created: false, row: existing };
  const id = input.id ?? newId();
  if (input.id && tx.select({ id: tags.id }).from(tags).where(eq(tags.id, input.id)).get()) {
    throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
  }
  const last = tx.select({ k: tags.sortKey }).from(tags).where(eq(tags.userId, p.userId)).orderBy(desc(tags.sortKey)).limit(1).get();
  const now = deps.clock();
  const row: Row = {
    id,
    userId: p.userId,
    nameIndex: index,
    sortKey: keyAfter(last?.k ?? null),
    sealed: sealJson(p.dek, aad(p.userId, id), { name: input.name, colorHex: input.colorHex ?? null } satisfies Sealed),
    createdAt: now,
    updatedAt: now,
  };
  tx.insert(tags).values(row).run();
  recordEvent(deps, { userId: p.userId, type: 'tag.created', id, at: now });
  return { created: true, row };
}

/** Creates the tag, or returns the one that already has this name (`created: false`). */
export function createTag(deps: Deps, p: Principal, input: CreateTag) {
  return deps.db.transaction((tx) => {
    const { created, row } = findOrCreateTag(deps, tx, p, input);
    return { created, tag: toTag(p.dek, row) };
  });
}

/** The ids of tags with these names, creating the missing ones (DECISIONS §5: an unknown name creates the tag). */
export function tagIdsForNames(deps: Deps, tx: Tx, p: Principal, names: readonly string[]): string[] {
  return names.map((name) => findOrCreateTag(deps, tx, p, { name }).row.id);
}

/** Tag names by id (decrypted), for showing a to-do's tags. */
export function tagNamesById(deps: Deps, p: Principal, ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (!ids.length) return out;
  const q = prepared(deps.db, 'tags.byIds', (db) =>
    db.select().from(tags).where(and(eq(tags.userId, sql.placeholder('userId')), inJsonIds(tags.id, 'ids'))).prepare(),
  );
  const rows = q.all({ userId: p.userId, ids: JSON.stringify([...new Set(ids)]) });
  for (const r of rows) out.set(r.id, openJson<Sealed>(p.dek, aad(r.userId, r.id), r.sealed).name);
  return out;
}

export function updateTag(deps: Deps, p: Principal, input: { id: string; colorHex: string | null }) {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, input.id);
    const s = openJson<Sealed>(p.dek, aad(p.userId, row.id), row.sealed);
    const next: Row = { ...row, sealed: sealJson(p.dek, aad(p.userId, row.id), { name: s.name, colorHex: input.colorHex }), updatedAt: deps.clock() };
    tx.update(tags).set({ sealed: next.sealed, updatedAt: next.updatedAt }).where(and(eq(tags.userId, p.userId), eq(tags.id, row.id))).run();
    recordEvent(deps, { userId: p.userId, type: 'tag.updated', id: row.id, at: next.updatedAt });
    return toTag(p.dek, next);
  });
}

/**
 * Deletes the tag; its links to to-dos go with it (todo_tags cascades). Each to-do that carried it
 * changed, so it gets a new `updatedAt` and a `todo.updated` event (spec §4.13).
 */
export function deleteTag(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    const now = deps.clock();
    const carriers = tx.select({ id: todoTags.todoId }).from(todoTags).where(and(eq(todoTags.userId, p.userId), eq(todoTags.tagId, id))).all().map((r) => r.id);
    const res = tx.delete(tags).where(and(eq(tags.userId, p.userId), eq(tags.id, id))).run();
    if (res.changes === 0) throw notFound('Tag');
    if (carriers.length) {
      tx.update(todos).set({ updatedAt: now }).where(and(eq(todos.userId, p.userId), inArray(todos.id, carriers))).run();
      for (const todoId of carriers) recordEvent(deps, { userId: p.userId, type: 'todo.updated', id: todoId, at: now });
      restampTodos(deps.db.$client, p, carriers, now);
    }
    recordEvent(deps, { userId: p.userId, type: 'tag.deleted', id, at: now });
  });
}
