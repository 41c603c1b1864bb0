// Imports (issue 33 item 3; docs/import.md): what an import has already created, so running the
// same import again creates nothing twice. One row per imported item: a blind index of
// (source, kind, source id) under the user's data key and the id of what it became. Rows go with
// the user; a target deleted later leaves its link, so a re-run does not bring back what the user
// removed.
//
// The source id itself is kept sealed beside its index (`sealed`, AAD = user, table, the link's
// own `id`): a key rotation opens it with the old key and writes the index again under the new
// one, in the rotation's transaction (routers/imports/links.ts), as tag names and idempotency keys
// are (db/sealed.ts `reindex`), so a re-run after a rotation still finds what it made. `id` and
// `sealed` are null only on links made before migration 0019: a re-run upgrades those it finds,
// and a rotation deletes those left (their index cannot be made again).
import { sqliteTable, text, integer, blob, uniqueIndex, index } from 'drizzle-orm/sqlite-core';
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
    id: text('id'),
    sealed: blob('sealed', { mode: 'buffer' }),
  },
  // By id: a rotation and `cairn reseal` rewrite each link by its id (null ids are distinct).
  (t) => [uniqueIndex('import_links_user_source').on(t.userId, t.sourceIndex), uniqueIndex('import_links_user_id').on(t.userId, t.id)],
);

// Import jobs (POST /v1/imports; routers/imports/jobs.ts): their status, kept so it survives a
// restart. Nothing of the file and no key: the source's kind, the counts, the problem code of a
// failure, the times. A job a restart cut off is marked `interrupted` at start.
export const importJobs = sqliteTable(
  'import_jobs',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    source: text('source').notNull(),
    dryRun: integer('dry_run', { mode: 'boolean' }).notNull(),
    /** running | succeeded | failed | interrupted */
    status: text('status').notNull(),
    done: integer('done').notNull(),
    total: integer('total').notNull(),
    /** Once succeeded: the report's numbers (JSON: created and existing by kind, failed, unmapped). */
    counts: text('counts'),
    /** Once failed: the problem code (its detail may quote the file, so it is not kept). */
    errorCode: text('error_code'),
    createdAt: integer('created_at').notNull(),
    /** The last progress written: when an interrupted job was last seen running. */
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [index('import_jobs_user').on(t.userId, t.createdAt), index('import_jobs_status').on(t.status)],
);
