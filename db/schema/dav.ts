// The CalDAV door's own state (issue 30, docs/caldav.md "What is stored"). Plaintext here is only
// ids, the owner, the to-do relation, blind indexes and times (DECISIONS §3); a client's resource
// name, its UID, the iCalendar properties Cairn does not model and every sync snapshot are sealed.
import { sqliteTable, text, integer, blob, index } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';
import { todos } from './tasks.js';

/**
 * One row per to-do a CalDAV client wrote under a name or UID of its own, or with properties Cairn
 * does not model (VALARM, X-*, URL, GEO, CLASS, its original DTSTART/DUE values). A to-do without a
 * row is served as `<id>.ics` with UID = its id. `name_index` and `uid_index` are blind indexes
 * (HMAC under a key derived from the data key, as tag names are): a name is found without storing
 * it. The row goes with its to-do (cascade), so nothing lingers.
 */
export const davResources = sqliteTable(
  'dav_resources',
  {
    todoId: text('todo_id')
      .primaryKey()
      .references(() => todos.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Blind index of the client's resource name; null when the to-do is served as `<id>.ics`. */
    nameIndex: blob('name_index', { mode: 'buffer' }),
    /** Blind index of the client's UID; null when the UID is the to-do's id. */
    uidIndex: blob('uid_index', { mode: 'buffer' }),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('dav_resources_user_name').on(t.userId, t.nameIndex), index('dav_resources_user_uid').on(t.userId, t.uidIndex)],
);

/**
 * Sync tokens (RFC 6578): each names a sealed snapshot of one collection's membership (to-do ids,
 * their ETags, custom resource names). `collection` is a container id or `standalone`; `digest`
 * is a hash of the membership (itself made of ETags, which are hashes of ciphertext), so an
 * unchanged collection hands back the same token without opening anything.
 */
export const davSyncSnapshots = sqliteTable(
  'dav_sync_snapshots',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    collection: text('collection').notNull(),
    digest: text('digest').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('dav_sync_snapshots_user_collection').on(t.userId, t.collection, t.createdAt)],
);
