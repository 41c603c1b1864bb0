// Removing attachments for good: a DELETE, or the removal of what holds or names them (a to-do, the
// containers of a deleted subtree, a note). Needs no data key (the 30-day purge runs key-less):
// nothing is opened. Each removed attachment records `attachment.deleted` in the caller's
// transaction, and a file's sealed chunks are deleted with it.
import { and, eq, inArray } from 'drizzle-orm';
import { attachmentChunks, attachments, type AttachmentParent } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { recordEvent } from '../events.js';

function removeWhere(deps: { db: Db }, tx: Tx | Db, userId: string, col: typeof attachments.id | typeof attachments.parentId | typeof attachments.noteId, ids: readonly string[], now: number, parentType?: AttachmentParent): void {
  // Chunked: SQLite limits bound parameters per statement.
  for (let i = 0; i < ids.length; i += 500) {
    const conds = [eq(attachments.userId, userId), inArray(col, ids.slice(i, i + 500)), ...(parentType ? [eq(attachments.parentType, parentType)] : [])];
    const gone = tx.select({ id: attachments.id }).from(attachments).where(and(...conds)).all();
    for (const a of gone) recordEvent(deps, { userId, type: 'attachment.deleted', id: a.id, at: now });
    if (!gone.length) continue;
    // A file's bytes go with it (no foreign key: chunks are staged before the row exists).
    tx.delete(attachmentChunks).where(and(eq(attachmentChunks.userId, userId), inArray(attachmentChunks.attachmentId, gone.map((a) => a.id)))).run();
    tx.delete(attachments).where(and(...conds)).run();
  }
}

/** These attachments (DELETE). */
export function removeAttachments(deps: { db: Db }, tx: Tx | Db, userId: string, ids: readonly string[], now: number): void {
  removeWhere(deps, tx, userId, attachments.id, ids, now);
}

/** The attachments of these parents (to-dos, containers) go with them. */
export function removeAttachmentsOf(deps: { db: Db }, tx: Tx | Db, userId: string, parentType: AttachmentParent, parentIds: readonly string[], now: number): void {
  removeWhere(deps, tx, userId, attachments.parentId, parentIds, now, parentType);
}

/** `note` attachments pointing at these notes go with the notes (a link to nothing is useless). */
export function removeAttachmentsToNotes(deps: { db: Db }, tx: Tx | Db, userId: string, noteIds: readonly string[], now: number): void {
  removeWhere(deps, tx, userId, attachments.noteId, noteIds, now);
}
