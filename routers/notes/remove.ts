// Removing notes for good (DELETE, a folder's DELETE, emptying the trash, the 30-day purge).
// Needs no data key: nothing is opened. Each removed note records `note.deleted` in the caller's
// transaction; its versions go with it (foreign key cascade, spec §4.8: a version of a vanished
// note is not_found).
// `note` attachments pointing at a removed note go with it (routers/attachments/remove.ts).
import { and, eq, inArray } from 'drizzle-orm';
import { notes } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { recordEvent } from '../events.js';
import { removeAttachmentsToNotes } from '../attachments/remove.js';

export function removeNotes(deps: { db: Db }, tx: Tx | Db, userId: string, ids: string[], now: number): void {
  for (const id of ids) recordEvent(deps, { userId, type: 'note.deleted', id, at: now });
  removeAttachmentsToNotes(deps, tx, userId, ids, now);
  // Chunked: SQLite limits bound parameters per statement.
  for (let i = 0; i < ids.length; i += 500) {
    tx.delete(notes).where(and(eq(notes.userId, userId), inArray(notes.id, ids.slice(i, i + 500)))).run();
  }
}
