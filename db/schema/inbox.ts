// Inbox items (spec §2.7, §4.11; DECISIONS §3, §6). Plaintext columns are the id, the owner and
// server times (capture order is `createdAt`, then id); the kind, text, url, fetched title,
// whenDate and status are one sealed blob bound to the row.
import { sqliteTable, text, integer, blob, index } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const inboxItems = sqliteTable(
  'inbox_items',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('inbox_items_user_order').on(t.userId, t.createdAt, t.id), index('inbox_items_user_updated').on(t.userId, t.updatedAt)],
);
