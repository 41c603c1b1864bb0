// Saved filters (spec §2.8, §4.10). `name`, `criteria` and `symbol` are sealed; plaintext is the
// id, owner, sort key and server times (DECISIONS §3).
import { sqliteTable, text, integer, blob, index } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const filters = sqliteTable(
  'filters',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('filters_user_order').on(t.userId, t.sortKey, t.id), index('filters_user_updated').on(t.userId, t.updatedAt)],
);
