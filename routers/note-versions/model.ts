// Reading and restoring note versions (spec §4.6, §4.8). Versions are listed newest first; a
// version whose note is gone, or that was dropped past VERSIONS_KEPT, is `not_found`.
import { and, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import { noteVersions } from '../../db/schema/index.js';
import { decodeCursor, encodeCursor, type ListQuery, type Page } from '../../db/paging.js';
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { notFound } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import { getNoteRow, saveNoteText } from '../notes/model.js';
import type { NoteOut } from '../notes/schema.js';
import { openVersion, type VersionRow, type VersionSealed } from './record.js';
import type { NoteVersionOut, NoteVersionTextOut } from './schema.js';

function toVersion(row: VersionRow, s: VersionSealed): NoteVersionOut {
  return { id: row.id, noteId: row.noteId, source: s.source, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

function toVersionText(row: VersionRow, s: VersionSealed): NoteVersionTextOut {
  return { ...toVersion(row, s), title: s.title, body: s.body };
}

function versionRow(deps: Deps, userId: string, id: string, noteId?: string): VersionRow {
  const conds: SQL[] = [eq(noteVersions.userId, userId), eq(noteVersions.id, id)];
  if (noteId !== undefined) conds.push(eq(noteVersions.noteId, noteId));
  const row = deps.db.select().from(noteVersions).where(and(...conds)).get();
  if (!row) throw notFound('Note version');
  return row;
}

/** `GET /v1/notes/{id}/versions`: the note's history, newest first, without text. */
export function listVersions(deps: Deps, p: Principal, noteId: string, query: ListQuery): Page<NoteVersionOut> {
  getNoteRow(deps.db, p.userId, noteId);
  const scope = `${p.userId}:note-versions:${noteId}`;
  const limit = query.limit ?? LIMITS.page.defaultLimit;
  const conds: SQL[] = [eq(noteVersions.userId, p.userId), eq(noteVersions.noteId, noteId)];
  if (query.cursor) conds.push(lt(noteVersions.seq, Number(decodeCursor(deps.keys.cursor, scope, query.cursor).k)));
  if (query.updated_since) conds.push(gte(noteVersions.updatedAt, Date.parse(query.updated_since)));
  const rows = deps.db.select().from(noteVersions).where(and(...conds)).orderBy(desc(noteVersions.seq)).limit(limit + 1).all();
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map((r) => toVersion(r, openVersion(p.dek, r))),
    next_cursor: more && last ? encodeCursor(deps.keys.cursor, scope, { k: String(last.seq), i: last.id }) : null,
  };
}

/** `GET /v1/notes/{noteId}/versions/{id}`: one version with its text. */
export function getVersionText(deps: Deps, p: Principal, noteId: string, id: string): NoteVersionTextOut {
  const row = versionRow(deps, p.userId, id, noteId);
  return toVersionText(row, openVersion(p.dek, row));
}

/** `GET /v1/note-versions/{id}`: the note it belongs to and what produced it, no text. */
export function getVersion(deps: Deps, p: Principal, id: string): NoteVersionOut {
  const row = versionRow(deps, p.userId, id);
  return toVersion(row, openVersion(p.dek, row));
}

/**
 * Puts a version's title and body back on the note (a new `restore` version records it). The
 * note's place and trash state are untouched; unchanged text writes nothing.
 */
export function restoreVersion(deps: Deps, p: Principal, noteId: string, id: string): NoteOut {
  return deps.db.transaction((tx) => {
    const note = getNoteRow(tx, p.userId, noteId);
    const row = versionRow(deps, p.userId, id, noteId);
    const s = openVersion(p.dek, row);
    return saveNoteText(deps, tx, p, note, { title: s.title, body: s.body }, 'restore');
  });
}
