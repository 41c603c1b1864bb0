// Note folders (spec §2.4, §3, §4.7). Two levels: a top-level folder holds folders and notes; a
// nested folder holds notes only. Trash marks only the folder; its subfolders and their notes leave
// live views with it but keep `trashedAt: null`, so a restore brings them back while a note
// trashed on its own stays trashed.
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { noteFolders, notes } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { keyBetween } from '../../db/order.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { decryptBudget } from '../../core/decrypt-budget.js';
import { removeNotes } from '../notes/remove.js';
import type { NoteFolderOut } from './schema.js';

export type FolderRow = typeof noteFolders.$inferSelect;
export type FolderSealed = { name: string; colorHex: string | null; symbol: string | null };

const aad = (userId: string, id: string) => rowAad(userId, 'note_folders', id);

export function openFolder(dek: Buffer, row: FolderRow): FolderSealed {
  return openJson<FolderSealed>(dek, aad(row.userId, row.id), row.sealed);
}

function toFolder(dek: Buffer, row: FolderRow, noteCount: number, s: FolderSealed = openFolder(dek, row)): NoteFolderOut {
  return {
    id: row.id,
    name: s.name,
    colorHex: s.colorHex,
    symbol: s.symbol,
    parentId: row.parentId,
    noteCount,
    sortKey: row.sortKey,
    trashedAt: isoOrNull(row.trashedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** Spec §2.4 `noteCount`: untrashed notes directly in the folder. */
function noteCountOf(tx: Tx | Db, userId: string, folderId: string): number {
  const r = tx
    .select({ n: sql<number>`count(*)` })
    .from(notes)
    .where(and(eq(notes.userId, userId), eq(notes.folderId, folderId), isNull(notes.trashedAt)))
    .get();
  return r?.n ?? 0;
}

export function findFolderRow(tx: Tx | Db, userId: string, id: string): FolderRow | undefined {
  return tx.select().from(noteFolders).where(and(eq(noteFolders.userId, userId), eq(noteFolders.id, id))).get();
}

function getRow(tx: Tx | Db, userId: string, id: string): FolderRow {
  const row = findFolderRow(tx, userId, id);
  if (!row) throw notFound('Note folder');
  return row;
}

/** Ids of the user's folders out of live views: trashed ones and the subfolders of trashed ones. */
export function deadFolderIds(userId: string): SQL {
  return sql`SELECT id FROM note_folders WHERE user_id = ${userId} AND (trashed_at IS NOT NULL OR parent_id IN (SELECT id FROM note_folders WHERE user_id = ${userId} AND trashed_at IS NOT NULL))`;
}

/** Whether the folder is in the trash, itself or through its parent. */
export function folderIsDead(tx: Tx | Db, row: FolderRow): boolean {
  if (row.trashedAt !== null) return true;
  if (row.parentId === null) return false;
  const parent = findFolderRow(tx, row.userId, row.parentId);
  return parent !== undefined && parent.trashedAt !== null;
}

/**
 * Checks a folder's parent (create, move): null, or a live top-level folder (spec §4.7: a parent
 * that is itself nested is refused at /parentId).
 */
function checkParent(tx: Tx, userId: string, parentId: string | null, movingId: string | null): void {
  if (parentId === null) return;
  if (parentId === movingId) throw invalid('/parentId', 'a folder cannot be its own parent');
  const parent = findFolderRow(tx, userId, parentId);
  if (!parent) throw invalid('/parentId', 'no note folder with this id');
  if (parent.parentId !== null) throw invalid('/parentId', 'folders nest one level only: this folder is itself inside a folder');
  if (parent.trashedAt !== null) throw invalid('/parentId', 'the folder is in the trash');
}

const sameParent = (parentId: string | null) => (parentId === null ? isNull(noteFolders.parentId) : eq(noteFolders.parentId, parentId));

function siblingExtreme(tx: Tx, userId: string, parentId: string | null, fn: 'min' | 'max', extra: SQL[]): string | null {
  const agg = fn === 'min' ? sql<string | null>`min(${noteFolders.sortKey})` : sql<string | null>`max(${noteFolders.sortKey})`;
  const r = tx.select({ k: agg }).from(noteFolders).where(and(eq(noteFolders.userId, userId), sameParent(parentId), ...extra)).get();
  return r?.k ?? null;
}

/** Sort key among the sibling folders under `parentId`: after/before a sibling, else at the end. */
function siblingKey(tx: Tx, userId: string, parentId: string | null, place: { after?: string | null | undefined; before?: string | null | undefined }, movingId: string | null): string {
  if (place.after != null && place.before != null) throw invalid('/before', 'give either after or before, not both');
  const notMoving = movingId ? [sql`${noteFolders.id} <> ${movingId}`] : [];
  const which = place.after != null ? 'after' : place.before != null ? 'before' : null;
  if (!which) return keyBetween(siblingExtreme(tx, userId, parentId, 'max', notMoving), null);
  const nid = (which === 'after' ? place.after : place.before)!;
  const pointer = `/${which}`;
  if (nid === movingId) throw invalid(pointer, 'a folder cannot be placed next to itself');
  const n = findFolderRow(tx, userId, nid);
  if (!n || n.parentId !== parentId) throw invalid(pointer, 'no sibling folder with this id under the destination parent');
  if (n.trashedAt !== null) throw invalid(pointer, 'the sibling folder is in the trash');
  if (which === 'after') {
    return keyBetween(n.sortKey, siblingExtreme(tx, userId, parentId, 'min', [sql`${noteFolders.sortKey} > ${n.sortKey}`, ...notMoving]));
  }
  return keyBetween(siblingExtreme(tx, userId, parentId, 'max', [sql`${noteFolders.sortKey} < ${n.sortKey}`, ...notMoving]), n.sortKey);
}

export type CreateNoteFolder = {
  name: string;
  colorHex?: string | null | undefined;
  symbol?: string | null | undefined;
  parentId?: string | null | undefined;
  id?: string | undefined;
};

export function createFolder(deps: Deps, p: Principal, input: CreateNoteFolder): NoteFolderOut {
  return deps.db.transaction((tx) => {
    const parentId = input.parentId ?? null;
    checkParent(tx, p.userId, parentId, null);
    if (input.id && tx.select({ id: noteFolders.id }).from(noteFolders).where(eq(noteFolders.id, input.id)).get()) {
      throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
    }
    const id = input.id ?? newId();
    const now = deps.clock();
    const s: FolderSealed = { name: input.name, colorHex: input.colorHex ?? null, symbol: input.symbol ?? null };
    const row: FolderRow = {
      id,
      userId: p.userId,
      parentId,
      sortKey: siblingKey(tx, p.userId, parentId, {}, null),
      sealed: sealJson(p.dek, aad(p.userId, id), s),
      trashedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(noteFolders).values(row).run();
    recordEvent(deps, { userId: p.userId, type: 'note_folder.created', id, at: now });
    return toFolder(p.dek, row, 0, s);
  });
}

/** Readable by id whether live, trashed or inside a trashed folder. */
export function getFolder(deps: Deps, p: Principal, id: string): NoteFolderOut {
  const row = getRow(deps.db, p.userId, id);
  return toFolder(p.dek, row, noteCountOf(deps.db, p.userId, id));
}

export type NoteFolderListQuery = ListQuery & { parent_id?: string | undefined; include_trashed?: boolean | undefined };

/**
 * Spec §4.7: ordered by `sortKey`. Without `parent_id` the whole tree comes in app order: each
 * top-level folder followed by its subfolders. Every folder opened counts against the request's
 * decrypt budget (spec §4.7: folder routes answer `account_too_large`).
 */
export function listFolders(deps: Deps, p: Principal, query: NoteFolderListQuery) {
  const parent = alias(noteFolders, 'parent');
  const conds: SQL[] = [eq(noteFolders.userId, p.userId)];
  if (query.parent_id !== undefined) conds.push(query.parent_id === 'null' ? isNull(noteFolders.parentId) : eq(noteFolders.parentId, query.parent_id));
  if (!query.include_trashed) conds.push(isNull(noteFolders.trashedAt), isNull(parent.trashedAt));
  const since = updatedSince(noteFolders.updatedAt, query);
  if (since) conds.push(since);
  // Tree order: (top-level sort key, top-level id, level, own sort key, id).
  const cols = [
    sql`coalesce(${parent.sortKey}, ${noteFolders.sortKey})`,
    sql`coalesce(${parent.id}, ${noteFolders.id})`,
    sql`CASE WHEN ${noteFolders.parentId} IS NULL THEN '0' ELSE '1' END`,
    sql`${noteFolders.sortKey}`,
  ];
  const count = sql<number>`(SELECT count(*) FROM notes n WHERE n.user_id = ${p.userId} AND n.folder_id = ${noteFolders.id} AND n.trashed_at IS NULL)`;
  const budget = decryptBudget(deps);
  return tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:note-folders`,
    query,
    arity: 4,
    fetch: (after, n) =>
      deps.db
        .select({ f: noteFolders, parentSortKey: parent.sortKey, noteCount: count })
        .from(noteFolders)
        .leftJoin(parent, and(eq(parent.id, noteFolders.parentId), eq(parent.userId, p.userId)))
        .where(and(...conds, ...(after ? [afterTuple(cols, noteFolders.id, after)] : [])))
        .orderBy(...cols, asc(noteFolders.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [r.parentSortKey ?? r.f.sortKey, r.f.parentId ?? r.f.id, r.f.parentId === null ? '0' : '1', r.f.sortKey], i: r.f.id }),
    map: (r) => {
      budget.spend();
      return toFolder(p.dek, r.f, r.noteCount);
    },
  });
}

function touch(deps: Deps, tx: Tx, p: Principal, row: FolderRow, set: Partial<Pick<FolderRow, 'sealed' | 'parentId' | 'sortKey' | 'trashedAt'>>): FolderRow {
  const now = deps.clock();
  const next: FolderRow = { ...row, ...set, updatedAt: now };
  tx.update(noteFolders)
    .set({ sealed: next.sealed, parentId: next.parentId, sortKey: next.sortKey, trashedAt: next.trashedAt, updatedAt: now })
    .where(and(eq(noteFolders.userId, p.userId), eq(noteFolders.id, row.id)))
    .run();
  recordEvent(deps, { userId: p.userId, type: 'note_folder.updated', id: row.id, at: now });
  return next;
}

export function updateFolder(
  deps: Deps,
  p: Principal,
  input: { id: string; name?: string | undefined; colorHex?: string | null | undefined; symbol?: string | null | undefined },
): NoteFolderOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, input.id);
    const s = openFolder(p.dek, row);
    const next: FolderSealed = { ...s };
    if (input.name !== undefined) next.name = input.name;
    if (input.colorHex !== undefined) next.colorHex = input.colorHex;
    if (input.symbol !== undefined) next.symbol = input.symbol;
    const count = noteCountOf(tx, p.userId, row.id);
    if (JSON.stringify(next) === JSON.stringify(s)) return toFolder(p.dek, row, count, s);
    return toFolder(p.dek, touch(deps, tx, p, row, { sealed: sealJson(p.dek, aad(p.userId, row.id), next) }), count, next);
  });
}

/** Spec §4.7: a folder holding folders may only sit at the top level. */
export function moveFolder(
  deps: Deps,
  p: Principal,
  input: { id: string; parentId: string | null; after?: string | null | undefined; before?: string | null | undefined },
): NoteFolderOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, input.id);
    checkParent(tx, p.userId, input.parentId, row.id);
    if (input.parentId !== null) {
      // Trashed subfolders count too: restoring them later would make a third level.
      const child = tx.select({ id: noteFolders.id }).from(noteFolders).where(and(eq(noteFolders.userId, p.userId), eq(noteFolders.parentId, row.id))).limit(1).get();
      if (child) throw invalid('/parentId', 'a folder holding folders may only sit at the top level');
    }
    const sortKey = siblingKey(tx, p.userId, input.parentId, input, row.id);
    const next = touch(deps, tx, p, row, { parentId: input.parentId, sortKey });
    return toFolder(p.dek, next, noteCountOf(tx, p.userId, row.id));
  });
}

/** Spec §3: trash marks only this folder; restore clears only its mark (contents keep theirs). */
export function trashFolder(deps: Deps, p: Principal, id: string, trashed: boolean): NoteFolderOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    const count = noteCountOf(tx, p.userId, row.id);
    if ((row.trashedAt !== null) === trashed) return toFolder(p.dek, row, count);
    return toFolder(p.dek, touch(deps, tx, p, row, { trashedAt: trashed ? deps.clock() : null }), count);
  });
}

/**
 * Removes the folder, its subfolders and every note in them (trashed or not), recording
 * `note.deleted` and `note_folder.deleted` for each. No data key needed (the purge runs without a
 * user present).
 */
export function removeFolderTree(deps: { db: Db }, tx: Tx | Db, userId: string, id: string, now: number): { deletedFolderIds: string[]; deletedNoteIds: string[] } {
  const subs = tx.select({ id: noteFolders.id }).from(noteFolders).where(and(eq(noteFolders.userId, userId), eq(noteFolders.parentId, id))).orderBy(asc(noteFolders.sortKey), asc(noteFolders.id)).all();
  const folderIds = [id, ...subs.map((s) => s.id)];
  const noteIds = tx
    .select({ id: notes.id })
    .from(notes)
    .where(and(eq(notes.userId, userId), inArray(notes.folderId, folderIds)))
    .orderBy(asc(notes.sortKey), asc(notes.id))
    .all()
    .map((n) => n.id);
  removeNotes(deps, tx, userId, noteIds, now);
  // Subfolders first, so nothing is removed by the foreign-key cascade behind the model's back.
  for (const fid of [...folderIds].reverse()) {
    recordEvent(deps, { userId, type: 'note_folder.deleted', id: fid, at: now });
    tx.delete(noteFolders).where(and(eq(noteFolders.userId, userId), eq(noteFolders.id, fid))).run();
  }
  return { deletedFolderIds: folderIds, deletedNoteIds: noteIds };
}

/** Spec §3: DELETE only when the folder is in the trash (itself or through its parent); live → `conflict`. */
export function deleteFolder(deps: Deps, p: Principal, id: string) {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    if (!folderIsDead(tx, row)) throw new AppError('conflict', 'Only a note folder in the trash can be deleted; trash it first.');
    return { id, ...removeFolderTree(deps, tx, p.userId, id, deps.clock()) };
  });
}

/** For notes: whether `folderId` may receive a note (a live folder of the user), else validation_failed. */
export function checkNoteFolder(tx: Tx | Db, userId: string, folderId: string): void {
  const f = findFolderRow(tx, userId, folderId);
  if (!f) throw invalid('/folderId', 'no note folder with this id');
  if (folderIsDead(tx, f)) throw invalid('/folderId', 'the folder is in the trash');
}
