// Notes (spec §2.3, §3, §4.6). A note sits in the item band of its container, shared with to-dos
// (routers/band.ts: the band is (parentId, no heading)), or stands alone; a standalone note may sit
// in a note folder (`folderId`). Title and body are sealed; each saved change records a version.
import { and, asc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { containers, headings, notes } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { bandIdTaken, bandKeyFor, findBandItem, type Placement } from '../band.js';
import { findContainerRow } from '../containers/model.js';
import { containerIsDead, inLiveContainer } from '../containers/live.js';
import { checkNoteFolder, deadFolderIds } from '../note-folders/model.js';
import { recordVersion, type VersionSource } from '../note-versions/record.js';
import { removeNotes } from './remove.js';
import type { NoteOut } from './schema.js';

export type NoteRow = typeof notes.$inferSelect;
export type NoteSealed = { title: string | null; body: string };

const aad = (userId: string, id: string) => rowAad(userId, 'notes', id);

export function openNote(dek: Buffer, row: NoteRow): NoteSealed {
  return openJson<NoteSealed>(dek, aad(row.userId, row.id), row.sealed);
}

export function toNote(dek: Buffer, row: NoteRow, s: NoteSealed = openNote(dek, row)): NoteOut {
  return {
    id: row.id,
    title: s.title,
    body: s.body,
    parentId: row.parentId,
    folderId: row.folderId,
    sortKey: row.sortKey,
    trashedAt: isoOrNull(row.trashedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function findNoteRow(tx: Tx | Db, userId: string, id: string): NoteRow | undefined {
  return tx.select().from(notes).where(and(eq(notes.userId, userId), eq(notes.id, id))).get();
}

export function getNoteRow(tx: Tx | Db, userId: string, id: string): NoteRow {
  const row = findNoteRow(tx, userId, id);
  if (!row) throw notFound('Note');
  return row;
}

/** The note's band: its container, never a heading (docs/api.md "Notes"). */
const bandOf = (parentId: string | null) => ({ parentId, headingId: null });

/**
 * Spec §2.3: `parentId` is a live project or subproject, or null. Areas, to-dos and anything
 * unknown or in the trash are `validation_failed` at /parentId.
 */
function checkParent(deps: Deps, tx: Tx, userId: string, parentId: string | null): void {
  if (parentId === null) return;
  const c = findContainerRow(tx, userId, parentId);
  if (!c) {
    const item = findBandItem(deps.db.$client, userId, parentId);
    if (item?.kind === 'todo') throw invalid('/parentId', 'a to-do cannot hold notes; give a project or subproject');
    if (item) throw invalid('/parentId', 'a note cannot hold notes; give a project or subproject');
    throw invalid('/parentId', 'no project or subproject with this id');
  }
  if (c.kind === 'area') throw invalid('/parentId', 'an area holds projects only; a note goes in a project or subproject');
  if (containerIsDead(deps.db.$client, userId, parentId)) throw invalid('/parentId', 'the container is in the trash');
}

/** A note sits in a container or in a folder, never both. */
function checkPlace(deps: Deps, tx: Tx, userId: string, parentId: string | null, folderId: string | null): void {
  checkParent(deps, tx, userId, parentId);
  if (folderId === null) return;
  if (parentId !== null) throw invalid('/folderId', 'a note in a project or subproject cannot also sit in a folder; give parentId null to file it in a folder');
  checkNoteFolder(tx, userId, folderId);
}

/**
 * The sort key in the destination band (spec §4.6: `after`/`before` name a to-do or a note of the
 * band; neither = the end). In a folder the neighbour must be a note of that folder; outside
 * folders it must not be in one.
 */
function placeKey(deps: Deps, userId: string, parentId: string | null, folderId: string | null, place: Placement, movingId: string | null): string {
  const sqlite = deps.db.$client;
  const key = bandKeyFor(sqlite, userId, bandOf(parentId), place, movingId);
  const which = place.after != null ? 'after' : place.before != null ? 'before' : null;
  if (which) {
    const nid = (which === 'after' ? place.after : place.before)!;
    const n = findBandItem(sqlite, userId, nid)!;
    const nFolder = n.kind === 'note' ? (sqlite.prepare('SELECT folder_id AS f FROM notes WHERE user_id = ? AND id = ?').get(userId, nid) as { f: string | null }).f : null;
    if (nFolder !== folderId) {
      throw invalid(`/${which}`, folderId === null ? 'the neighbour is inside a note folder; give its folderId' : 'the neighbour is not a note of the destination folder');
    }
  }
  return key;
}

export type CreateNote = {
  body: string;
  title?: string | null | undefined;
  parentId?: string | null | undefined;
  folderId?: string | null | undefined;
  id?: string | undefined;
};

export function createNote(deps: Deps, p: Principal, input: CreateNote): NoteOut {
  return deps.db.transaction((tx) => {
    const parentId = input.parentId ?? null;
    const folderId = input.folderId ?? null;
    checkPlace(deps, tx, p.userId, parentId, folderId);
    if (input.id) {
      if (tx.select({ id: notes.id }).from(notes).where(eq(notes.id, input.id)).get()) {
        throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
      }
      const taken =
        bandIdTaken(deps.db.$client, input.id) ||
        tx.select({ id: containers.id }).from(containers).where(eq(containers.id, input.id)).get() !== undefined ||
        tx.select({ id: headings.id }).from(headings).where(eq(headings.id, input.id)).get() !== undefined;
      if (taken) throw new AppError('conflict', 'This id already names a to-do, container or heading.', { pointer: '/id' });
    }
    const id = input.id ?? newId();
    const now = deps.clock();
    const s: NoteSealed = { title: input.title ?? null, body: input.body };
    const row: NoteRow = {
      id,
      userId: p.userId,
      parentId,
      folderId,
      // Spec §4.6: created notes go to the end of the destination band.
      sortKey: placeKey(deps, p.userId, parentId, folderId, {}, null),
      sealed: sealJson(p.dek, aad(p.userId, id), s),
      trashedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(notes).values(row).run();
    recordEvent(deps, { userId: p.userId, type: 'note.created', id, at: now });
    recordVersion(deps, tx, p.dek, p.userId, id, s, 'create', now);
    return toNote(p.dek, row, s);
  });
}

/** Readable by id in any state (live, trashed, inside a trashed container or folder). */
export function getNote(deps: Deps, p: Principal, id: string): NoteOut {
  return toNote(p.dek, getNoteRow(deps.db, p.userId, id));
}

export type NoteListQuery = ListQuery & {
  parent_id?: string | undefined;
  folder_id?: string | undefined;
  include_trashed?: boolean | undefined;
};

/** Notes out of every live list: trashed, or in a trashed container or folder (spec §3). */
export function liveNoteConds(userId: string): SQL[] {
  return [
    isNull(notes.trashedAt),
    inLiveContainer(notes.parentId, userId),
    sql`(${notes.folderId} IS NULL OR ${notes.folderId} NOT IN (${deadFolderIds(userId)}))`,
  ];
}

/** Spec §4.6: app order (each band by sort key, bands grouped by container). */
export function listNotes(deps: Deps, p: Principal, query: NoteListQuery) {
  const conds: SQL[] = [eq(notes.userId, p.userId)];
  if (query.parent_id !== undefined) conds.push(query.parent_id === 'null' ? isNull(notes.parentId) : eq(notes.parentId, query.parent_id));
  if (query.folder_id !== undefined) conds.push(eq(notes.folderId, query.folder_id));
  if (!query.include_trashed) conds.push(...liveNoteConds(p.userId));
  const since = updatedSince(notes.updatedAt, query);
  if (since) conds.push(since);
  const cols = [sql`coalesce(${notes.parentId}, '')`, sql`${notes.sortKey}`];
  return tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:notes`,
    query,
    arity: 2,
    fetch: (after, n) =>
      deps.db
        .select()
        .from(notes)
        .where(and(...conds, ...(after ? [afterTuple(cols, notes.id, after)] : [])))
        .orderBy(sql`coalesce(${notes.parentId}, '')`, asc(notes.sortKey), asc(notes.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [r.parentId ?? '', r.sortKey], i: r.id }),
    map: (r) => toNote(p.dek, r),
  });
}

function writeRow(deps: Deps, tx: Tx, p: Principal, row: NoteRow, set: Partial<Pick<NoteRow, 'sealed' | 'parentId' | 'folderId' | 'sortKey' | 'trashedAt'>>, now = deps.clock()): NoteRow {
  const next: NoteRow = { ...row, ...set, updatedAt: now };
  tx.update(notes)
    .set({ sealed: next.sealed, parentId: next.parentId, folderId: next.folderId, sortKey: next.sortKey, trashedAt: next.trashedAt, updatedAt: now })
    .where(and(eq(notes.userId, p.userId), eq(notes.id, row.id)))
    .run();
  recordEvent(deps, { userId: p.userId, type: 'note.updated', id: row.id, at: now });
  return next;
}

/**
 * Saves new text for the note inside the caller's transaction and records a version (an `edit`
 * may coalesce into the newest one). Unchanged text writes nothing.
 */
export function saveNoteText(deps: Deps, tx: Tx, p: Principal, row: NoteRow, next: NoteSealed, source: VersionSource): NoteOut {
  const s = openNote(p.dek, row);
  if (s.title === next.title && s.body === next.body) return toNote(p.dek, row, s);
  const now = deps.clock();
  const written = writeRow(deps, tx, p, row, { sealed: sealJson(p.dek, aad(p.userId, row.id), next) }, now);
  recordVersion(deps, tx, p.dek, p.userId, row.id, next, source, now);
  return toNote(p.dek, written, next);
}

export function updateNote(deps: Deps, p: Principal, input: { id: string; title?: string | null | undefined; body?: string | undefined }): NoteOut {
  return deps.db.transaction((tx) => {
    const row = getNoteRow(tx, p.userId, input.id);
    const s = openNote(p.dek, row);
    const next: NoteSealed = {
      title: input.title !== undefined ? input.title : s.title,
      body: input.body !== undefined ? input.body : s.body,
    };
    return saveNoteText(deps, tx, p, row, next, 'edit');
  });
}

export function moveNote(
  deps: Deps,
  p: Principal,
  input: { id: string; parentId: string | null; folderId?: string | null | undefined; after?: string | null | undefined; before?: string | null | undefined },
): NoteOut {
  return deps.db.transaction((tx) => {
    const row = getNoteRow(tx, p.userId, input.id);
    // Omitted folderId keeps the current folder for a standalone destination.
    const folderId = input.folderId !== undefined ? input.folderId : input.parentId === null ? row.folderId : null;
    checkPlace(deps, tx, p.userId, input.parentId, folderId);
    const sortKey = placeKey(deps, p.userId, input.parentId, folderId, input, row.id);
    return toNote(p.dek, writeRow(deps, tx, p, row, { parentId: input.parentId, folderId, sortKey }));
  });
}

/** Spec §3: trash sets `trashedAt`, restore clears it. Repeating either changes nothing. */
export function trashNote(deps: Deps, p: Principal, id: string, trashed: boolean): NoteOut {
  return deps.db.transaction((tx) => {
    const row = getNoteRow(tx, p.userId, id);
    if ((row.trashedAt !== null) === trashed) return toNote(p.dek, row);
    return toNote(p.dek, writeRow(deps, tx, p, row, { trashedAt: trashed ? deps.clock() : null }));
  });
}

/** Spec §3: irreversible, in any state; no cascade (the versions belong to the note and go with it). */
export function deleteNote(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    getNoteRow(tx, p.userId, id);
    removeNotes(deps, tx, p.userId, [id], deps.clock());
  });
}
