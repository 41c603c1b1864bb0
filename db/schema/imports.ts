// Imports (issue 33 item 3; docs/import.md): what an import has already created, so running the
// same import again creates nothing twice. One row per imported item: a blind index of
// (source, kind, source id) under the user's data key (nothing of the source is stored in the
// clear, not even its ids) and the id of what it became. Rows go with the user; a target deleted
// later leaves its link, so a re-run does not bring back what the user removed.
import { sqliteTable, text, integer, blob, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const importLinks = sqliteTable(
  'import_links',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sourceIndex: blob('source_index', { mode: 'buffer' }).notNull(),
    targetId: text('target_id').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('import_links_user_source').on(t.userId, t.sourceIndex)],
);
