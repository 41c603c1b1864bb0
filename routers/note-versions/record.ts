// Recording note versions (spec §2.5, §4.8). Saving a changed title or body records a version with
// the sealed text and what produced it. Rapid edits coalesce: an edit within COALESCE_MS of the
// creation of the note's newest version, when that version is itself an edit, rewrites it instead
// of adding one (so autosave every few seconds does not flood the history). Create and restore
// versions are never rewritten. A note keeps its newest VERSIONS_KEPT versions; older ones are
// deleted.
import { and, desc, eq, lte } from 'drizzle-orm';
import { noteVersions } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { newId } from '../../core/ids.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';

export const VERSION_SOURCES = ['create', 'edit', 'restore'] as const;
export type VersionSource = (typeof VERSION_SOURCES)[number];

/** Edits within this many milliseconds of the newest (edit) version's creation coalesce into it. */
export const COALESCE_MS = 60_000;
/** Versions kept per note; recording one more deletes the oldest. */
export const VERSIONS_KEPT = 100;

export type VersionRow = typeof noteVersions.$inferSelect;
export type VersionSealed = { title: string | null; body: string; source: VersionSource };

const aad = (userId: string, id: string) => rowAad(userId, 'note_versions', id);

export function openVersion(dek: Buffer, row: VersionRow): VersionSealed {
  return openJson<VersionSealed>(dek, aad(row.userId, row.id), row.sealed);
}

/**
 * Records the note's text as a version (inside the note's transaction). Returns the version id and
 * whether a new version was made (false when the edit coalesced into the newest one).
 */
export function recordVersion(
  deps: { db: Db },
  tx: Tx | Db,
  dek: Buffer,
  userId: string,
  noteId: string,
  text: { title: string | null; body: string },
  source: VersionSource,
  now: number,
): { id: string; created: boolean } {
  const newest = tx
    .select()
    .from(noteVersions)
    .where(and(eq(noteVersions.userId, userId), eq(noteVersions.noteId, noteId)))
    .orderBy(desc(noteVersions.seq))
    .limit(1)
    .get();
  if (source === 'edit' && newest && now - newest.createdAt < COALESCE_MS && openVersion(dek, newest).source === 'edit') {
    const sealed = sealJson(dek, aad(userId, newest.id), { title: text.title, body: text.body, source: 'edit' } satisfies VersionSealed);
    tx.update(noteVersions).set({ sealed, updatedAt: now }).where(and(eq(noteVersions.userId, userId), eq(noteVersions.id, newest.id))).run();
    return { id: newest.id, created: false };
  }
  const id = newId();
  const seq = (newest?.seq ?? 0) + 1;
  tx.insert(noteVersions)
    .values({
      id,
      userId,
      noteId,
      seq,
      sealed: sealJson(dek, aad(userId, id), { title: text.title, body: text.body, source } satisfies VersionSealed),
      createdAt: now,
      updatedAt: now,
    })
    .run();
  recordEvent(deps, { userId, type: 'note_version.created', id, at: now });
  tx.delete(noteVersions)
    .where(and(eq(noteVersions.userId, userId), eq(noteVersions.noteId, noteId), lte(noteVersions.seq, seq - VERSIONS_KEPT)))
    .run();
  return { id, created: true };
}
