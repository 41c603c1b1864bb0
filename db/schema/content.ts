// Content tables. One sealed blob per row holds every content field (DECISIONS §3); plaintext
// columns are ids, owner, relations, sort keys and server times only.
import { sqliteTable, text, integer, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const tags = sqliteTable(
  'tags',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Blind index of the normalised name: HMAC under a key derived from the data key. */
    nameIndex: blob('name_index', { mode: 'buffer' }).notNull(),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('tags_user_name').on(t.userId, t.nameIndex),
    index('tags_user_order').on(t.userId, t.sortKey, t.id),
    index('tags_user_updated').on(t.userId, t.updatedAt),
  ],
);

export const settings = sqliteTable(
  'settings',
  {
    userId: text('user_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
);
