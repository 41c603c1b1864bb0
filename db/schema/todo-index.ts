// The sealed per-account to-do index (issue 14, routers/todo-index/index.ts): a few chunks per
// account, each one sealed blob under the user's data key (AAD user id + table + chunk id), holding
// the sealed attributes the views, filters, open counts and the status filter read. Plaintext:
// owner and chunk number only (DECISIONS §3); a chunk's number is a bucket of to-do ids.
import { sqliteTable, text, blob, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const todoIndexChunks = sqliteTable(
  'todo_index_chunks',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The chunk: a bucket number ('0'..'63', a hash of the to-do id, routers/todo-index/index.ts bucketOf), with a layer prefix ('t': search text) and '+' for a bucket's delta chunk. */
    id: text('id').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] })],
);
