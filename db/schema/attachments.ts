// Attachments (spec §2.6, §4.9; DECISIONS §3). Plaintext columns are the id, the owner, the parent
// relation (`parentType` + `parentId`), the note relation of a `note` attachment, and server times;
// the kind, title, url and text are in `sealed`. The parent is polymorphic (a to-do, a container,
// later an inbox item), so there is no foreign key to it: the models that delete a parent remove
// its attachments explicitly, recording `attachment.deleted` (routers/attachments/remove.ts).
import { sqliteTable, text, integer, blob, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';
import { notes } from './notes.js';

export const ATTACHMENT_PARENTS = ['todo', 'container', 'inbox'] as const;
export type AttachmentParent = (typeof ATTACHMENT_PARENTS)[number];

export const attachments = sqliteTable(
  'attachments',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentType: text('parent_type', { enum: ATTACHMENT_PARENTS }).notNull(),
    parentId: text('parent_id').notNull(),
    /** The note a `note` attachment points to; the model removes such attachments with the note (the cascade is a safety net). */
    noteId: text('note_id').references(() => notes.id, { onDelete: 'cascade' }),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('attachments_user_order').on(t.userId, t.createdAt, t.id),
    index('attachments_user_parent').on(t.userId, t.parentType, t.parentId),
    index('attachments_user_note').on(t.userId, t.noteId),
    index('attachments_user_updated').on(t.userId, t.updatedAt),
  ],
);

/**
 * The bytes of a file attachment, one seal per 64 KiB chunk (docs/security.md
 * "Attachment files"). Chunks are written while the upload streams, before the attachment row
 * exists, so there is no foreign key to `attachments`: the upload's staging row below owns them
 * until the final transaction inserts the attachment, and every removal of an attachment deletes
 * its chunks explicitly (routers/attachments/remove.ts).
 */
export const attachmentChunks = sqliteTable(
  'attachment_chunks',
  {
    attachmentId: text('attachment_id').notNull(),
    idx: integer('idx').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.attachmentId, t.idx] }), index('attachment_chunks_user').on(t.userId, t.attachmentId)],
);

/**
 * An upload in progress: its chunks are staged under `id` (the future attachment id). The final
 * transaction deletes this row and inserts the attachment; a failed or aborted upload deletes it
 * with its chunks; a crash leaves it behind for the sweep (server/jobs/sweep-uploads.ts).
 */
export const pendingUploads = sqliteTable(
  'pending_uploads',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    startedAt: integer('started_at').notNull(),
  },
  (t) => [index('pending_uploads_started').on(t.startedAt)],
);
