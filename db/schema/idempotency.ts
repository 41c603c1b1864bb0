// Stored answers of Idempotent routes (spec §4.2, docs/api.md "Idempotency"). One row per user,
// procedure and key. The key is found through a blind index under the user's data key; the key
// itself, the request fingerprint and the stored answer (status, headers, body: content) are
// sealed under the data key (DECISIONS §3). Rows expire 24 hours after the first request and are
// purged by server/jobs/purge.ts.
import { sqliteTable, text, integer, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The procedure path (e.g. `tags.create`): the same key on another route is another row. */
    route: text('route').notNull(),
    /** HMAC of the Idempotency-Key under a key derived from the data key. */
    keyIndex: blob('key_index', { mode: 'buffer' }).notNull(),
    /**
     * Always `done` since issue 10: the answer is stored in the change's own transaction, so no
     * row is ever pending. Kept (with `owner`, now always '') so databases of earlier versions,
     * whose pending rows the 0005 migration removed, keep their shape.
     */
    state: text('state', { enum: ['pending', 'done'] }).notNull(),
    owner: text('owner').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_user_route_key').on(t.userId, t.route, t.keyIndex),
    index('idempotency_keys_expires').on(t.expiresAt),
  ],
);
