// The durable event outbox (spec §6, DECISIONS §6): every change records its event here in the
// same transaction, so none is lost on a crash. The webhook dispatcher delivers from it in `seq`
// order. Events are thin: a type and the id of the object, never its content.
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const outbox = sqliteTable(
  'outbox',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    /** `evt_…`, the envelope id (spec §6.1). */
    id: text('id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    objectType: text('object_type').notNull(),
    objectId: text('object_id').notNull(),
    occurredAt: integer('occurred_at').notNull(),
    /** Set by the dispatcher once the event has been fanned out to subscriptions. */
    dispatchedAt: integer('dispatched_at'),
  },
  (t) => [uniqueIndex('outbox_id').on(t.id), index('outbox_pending').on(t.dispatchedAt, t.seq), index('outbox_user').on(t.userId, t.seq)],
);
