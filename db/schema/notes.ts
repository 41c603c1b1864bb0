// Notes, note folders and note versions (spec §2.3, §2.4, §2.5). Plaintext columns are ids, owner,
// relations (container, folder, note), sort keys and server times (DECISIONS §3); every title,
// body, name, colour, symbol and version text is in `sealed`.
import { sqliteTable, text, integer, blob, index, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';
import { containers } from './tasks.js';

/**
 * Note folders nest one level (spec §2.4): `parentId` is null (top level) or a top-level folder.
 * Only the trashed folder gets `trashedAt`; its subfolders and notes leave live views with it.
 * The foreign keys cascade as a safety net; the model deletes contents itself so every removed
 * row records its event.
 */
export const noteFolders = sqliteTable(
  'note_folders',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentId: text('parent_id').references((): AnySQLiteColumn => noteFolders.id, { onDelete: 'cascade' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    trashedAt: integer('trashed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('note_folders_user_parent_order').on(t.userId, t.parentId, t.sortKey, t.id),
    index('note_folders_user_updated').on(t.userId, t.updatedAt),
    index('note_folders_trashed').on(t.trashedAt),
  ],
);

/**
 * Notes share the item band of their container with to-dos (spec §2.3; routers/band.ts): the band
 * is (parentId, no heading), and `sortKey` is comparable with the to-dos' keys. A note sits in a
 * container (`parentId`) or in a folder (`folderId`), never both (docs/api.md "Notes").
 */
export const notes = sqliteTable(
  'notes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentId: text('parent_id').references(() => containers.id, { onDelete: 'cascade' }),
    folderId: text('folder_id').references(() => noteFolders.id, { onDelete: 'cascade' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    trashedAt: integer('trashed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('notes_user_band_order').on(t.userId, t.parentId, t.sortKey, t.id),
    index('notes_user_folder').on(t.userId, t.folderId),
    index('notes_user_updated').on(t.userId, t.updatedAt),
    index('notes_trashed').on(t.trashedAt),
  ],
);

/**
 * Saved versions of a note (spec §2.5): the sealed blob holds the title, the body and what
 * produced the version (`create`, `edit`, `restore`). `seq` orders a note's versions (newest =
 * highest); a version goes with its note.
 */
export const noteVersions = sqliteTable(
  'note_versions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    noteId: text('note_id')
      .notNull()
      .references(() => notes.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('note_versions_user_note_seq').on(t.userId, t.noteId, t.seq)],
);
