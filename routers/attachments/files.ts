// File attachments (spec §4.9, DECISIONS §3, §4, §6; docs/security.md "Attachment files"). The
// bytes are sealed in chunks of LIMITS.fileChunkBytes, each its own seal (docs/sealed-format.md) under the
// user's data key, its AAD binding the user, the attachment id, the chunk index and whether it is
// the last chunk: a chunk moved to another place, to another file, or a file cut short fails to
// open. Chunks live in SQLite (`attachment_chunks`).
//
// Upload: better-sqlite3 is synchronous and other requests run between the body's data events,
// so no transaction is held across the stream. Chunks are staged under a `pending_uploads` row
// (one auto-committed INSERT per chunk, so memory stays at about one chunk); nothing is visible
// until `finish` deletes the staging row and inserts the attachment in one transaction. A failed
// or aborted upload deletes its staging row and chunks (`abort`); a crash mid-upload leaves them
// for the sweep (sweepUploads), never as an attachment.
import { and, eq, sql } from 'drizzle-orm';
import { attachmentChunks, attachments, pendingUploads, type AttachmentParent } from '../../db/schema/index.js';
import type { Deps } from '../deps.js';
import type { Tx } from '../../db/client.js';
import { credentialIsLive, unauthorized, type Principal } from '../auth/credentials.js';
import { notFound } from '../../core/errors.js';
import { LIMITS } from '../../core/config.js';
import { newId } from '../../core/ids.js';
import { open, rowAad, seal, SealError, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { chunkAad } from '../../db/sealed.js';
import { checkParent, getAttachmentRow, openAttachment, toAttachment, type AttachmentSealed } from './model.js';
import type { AttachmentOut } from './schema.js';

const CHUNK = LIMITS.fileChunkBytes;

/** How many chunks a file of `size` bytes has (an empty file has one empty chunk). */
export const chunkCount = (size: number) => Math.max(1, Math.ceil(size / CHUNK));

export type UploadQuery = { parentType: AttachmentParent; parentId: string; title?: string | null | undefined };

/**
 * A parent that comes into being with its file (an inbox file capture, routers/inbox/model.ts):
 * not checked when the upload starts; `create` runs in the finish transaction, before the
 * attachment row, and its answer is what `finish` returns alongside the attachment.
 */
export type NewParent<P> = { create: (tx: Tx, now: number, attachmentId: string) => P };

export type Upload<P = undefined> = {
  id: string;
  /** Takes the next piece of the body; seals and stores every full chunk that is not the last. */
  write(data: Buffer): void;
  /** Bytes received so far. */
  readonly size: number;
  /** Seals the last chunk and makes the attachment (and a new parent) visible, in one transaction. */
  finish(): AttachmentOut & { parent: P };
  /** Removes the staged chunks (failed, refused or aborted upload). Safe to call more than once. */
  abort(): void;
};

/** Checks the parent and opens the staging row. Throws a problem before any byte is read. */
export function startUpload<P = undefined>(deps: Deps, p: Principal, q: UploadQuery, contentType: string, newParent?: NewParent<P>): Upload<P> {
  const id = newId();
  deps.db.transaction((tx) => {
    if (!newParent) checkParent(tx, p.userId, q.parentType, q.parentId);
    tx.insert(pendingUploads).values({ id, userId: p.userId, startedAt: deps.clock() }).run();
  });
  const sqlite = deps.db.$client;
  const insert = sqlite.prepare('INSERT INTO attachment_chunks (attachment_id, idx, user_id, sealed) VALUES (?, ?, ?, ?)');
  // The not-yet-sealed tail: at most one chunk plus the piece that overflowed it.
  let held: Buffer[] = [];
  let heldBytes = 0;
  let idx = 0;
  let size = 0;
  let done = false;

  const abort = () => {
    if (done) return;
    done = true;
    held = [];
    deps.db.transaction(() => {
      sqlite.prepare('DELETE FROM attachment_chunks WHERE attachment_id = ? AND user_id = ?').run(id, p.userId);
      sqlite.prepare('DELETE FROM pending_uploads WHERE id = ? AND user_id = ?').run(id, p.userId);
    });
  };

  const put = (bytes: Buffer, last: boolean) => {
    insert.run(id, idx, p.userId, seal(p.dek, chunkAad(p.userId, id, idx, last), bytes));
    idx++;
  };

  return {
    id,
    get size() {
      return size;
    },
    write(data) {
      if (done) throw new Error('upload already finished');
      size += data.length;
      held.push(data);
      heldBytes += data.length;
      // A full chunk is known not to be the last only once a byte beyond it has arrived.
      if (heldBytes <= CHUNK) return;
      let buf = Buffer.concat(held, heldBytes);
      while (buf.length > CHUNK) {
        put(buf.subarray(0, CHUNK), false);
        buf = buf.subarray(CHUNK);
      }
      // Copied so the pieces the tail came from are not kept alive by the view.
      held = [Buffer.from(buf)];
      heldBytes = buf.length;
    },
    finish() {
      if (done) throw new Error('upload already finished');
      try {
        return deps.db.transaction((tx) => {
          // A key rotation or password change while the body streamed ends every credential and
          // drops the user's staged uploads (db/sealed.ts): the chunks were sealed under the old key.
          const staged = tx.select({ id: pendingUploads.id }).from(pendingUploads).where(and(eq(pendingUploads.id, id), eq(pendingUploads.userId, p.userId))).get();
          if (!staged || !credentialIsLive(deps, p)) throw unauthorized(deps, 'The credential was revoked or replaced while this upload ran.', true);
          // The parent may have gone while the body streamed.
          if (!newParent) checkParent(tx, p.userId, q.parentType, q.parentId);
          put(Buffer.concat(held, heldBytes), true);
          held = [];
          tx.delete(pendingUploads).where(eq(pendingUploads.id, id)).run();
          const now = deps.clock();
          const parent = newParent ? newParent.create(tx, now, id) : (undefined as P);
          const s: AttachmentSealed = { kind: 'file', title: q.title ?? null, url: null, text: null, contentType, size };
          const row = {
            id,
            userId: p.userId,
            parentType: q.parentType,
            parentId: q.parentId,
            noteId: null,
            sealed: sealJson(p.dek, rowAad(p.userId, 'attachments', id), s),
            createdAt: now,
            updatedAt: now,
          };
          tx.insert(attachments).values(row).run();
          recordEvent(deps, { userId: p.userId, type: 'attachment.created', id, at: now });
          done = true;
          return { ...toAttachment(row, s), parent };
        });
      } catch (e) {
        abort();
        throw e;
      }
    },
    abort,
  };
}

export type FileDownload = {
  contentType: string;
  size: number;
  /** The opened chunks in order; throws SealError when one is missing, moved or altered. */
  chunks(): Generator<Buffer>;
};

/**
 * A file attachment ready to stream. Before anything is sent it checks that the stored chunks are
 * exactly the ones the size calls for and that the first opens, so a cut-short or tampered file
 * is usually refused with a 500 before headers; a chunk further in that fails stops the stream.
 */
export function openFile(deps: Deps, p: Principal, id: string): FileDownload {
  const row = getAttachmentRow(deps.db, p.userId, id);
  const s = openAttachment(p.dek, row);
  if (s.kind !== 'file' || s.size === undefined || s.contentType === undefined) throw notFound('File');
  const size = s.size;
  const count = chunkCount(size);
  const sqlite = deps.db.$client;
  const stats = sqlite.prepare('SELECT count(*) AS n, coalesce(max(idx), -1) AS top FROM attachment_chunks WHERE attachment_id = ? AND user_id = ?').get(id, p.userId) as { n: number; top: number };
  if (stats.n !== count || stats.top !== count - 1) throw new SealError();
  const one = sqlite.prepare('SELECT sealed FROM attachment_chunks WHERE attachment_id = ? AND user_id = ? AND idx = ?').pluck();
  const read = (idx: number): Buffer => {
    const blob = one.get(id, p.userId, idx) as Buffer | undefined;
    if (!blob) throw new SealError();
    return open(p.dek, chunkAad(p.userId, id, idx, idx === count - 1), blob);
  };
  const first = read(0);
  return {
    contentType: s.contentType,
    size,
    *chunks() {
      let sent = 0;
      for (let idx = 0; idx < count; idx++) {
        const bytes = idx === 0 ? first : read(idx);
        sent += bytes.length;
        yield bytes;
      }
      if (sent !== size) throw new SealError();
    },
  };
}

/** Staged uploads older than this are left by a crash; the sweep removes them. */
export const STALE_UPLOAD_MS = 60 * 60_000;

/** Removes the staging rows and chunks of uploads started before `now - STALE_UPLOAD_MS`. */
export function sweepUploads(deps: Deps): number {
  const cutoff = deps.clock() - STALE_UPLOAD_MS;
  return deps.db.transaction((tx) => {
    const stale = tx.select({ id: pendingUploads.id }).from(pendingUploads).where(sql`${pendingUploads.startedAt} < ${cutoff}`).all();
    for (const u of stale) {
      tx.delete(attachmentChunks).where(eq(attachmentChunks.attachmentId, u.id)).run();
      tx.delete(pendingUploads).where(eq(pendingUploads.id, u.id)).run();
    }
    return stale.length;
  });
}

