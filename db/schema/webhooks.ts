// Webhook subscriptions and their delivery log (spec §2.12, §4.17, §6; docs/webhooks.md).
// Deliveries run with no user present, so what a send needs (the URL and the signing secrets) is
// sealed under the server master key's unattended-secrets key (DECISIONS §3: the one place it is
// allowed); the description is the user's words and stays sealed under the user's data key.
// Plaintext: ids, owner, the event types subscribed to, the active flag, times, and per delivery
// the thin envelope fields (event id, type, object kind and id: never content).
import { sqliteTable, text, integer, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

export const webhooks = sqliteTable(
  'webhooks',
  {
    /** `wh_…` */
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** JSON array of event types. */
    events: text('events').notNull(),
    /** `{url, secret, previous?: {secret, until}}` sealed under the unattended key, AAD = owner, table, id. */
    sealedTarget: blob('sealed_target', { mode: 'buffer' }).notNull(),
    /** The description, sealed under the user's data key (null when none). */
    sealedDescription: blob('sealed_description', { mode: 'buffer' }),
    active: integer('active', { mode: 'boolean' }).notNull(),
    /** Start of the current run of failed attempts (null after a success). */
    failingSince: integer('failing_since'),
    /**
     * Issue 28 (docs/webhooks.md "Receivers that hang"): attempts that timed out since the last
     * success, each one while the subscription was not held. Above 0, one send at a time (a probe).
     */
    timeouts: integer('timeouts').notNull().default(0),
    /** No attempt of this subscription starts before this time (null: not held). */
    heldUntil: integer('held_until'),
    disabledAt: integer('disabled_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhooks_user').on(t.userId, t.createdAt, t.id)],
);

export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    /** `whd_…` */
    id: text('id').primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The envelope (spec §6.1): the same on every attempt and redelivery. */
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    objectType: text('object_type').notNull(),
    objectId: text('object_id').notNull(),
    occurredAt: integer('occurred_at').notNull(),
    /** `pending` (an attempt is due at `nextAttemptAt`), `delivered`, `failed` (no attempt due). */
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull(),
    /** Failed attempts in the current retry series (picks the next delay). */
    failures: integer('failures').notNull(),
    nextAttemptAt: integer('next_attempt_at'),
    /** A redelivery: one attempt only, no retry series after it. */
    manual: integer('manual', { mode: 'boolean' }).notNull(),
    /** Issue 28: ended (`failed`) by the backlog cap of a failing subscription, never by an attempt. */
    dropped: integer('dropped', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event').on(t.webhookId, t.eventId),
    index('webhook_deliveries_due').on(t.status, t.nextAttemptAt),
    // The dispatcher's per-subscription questions: anything due, the next one due, how many pending.
    index('webhook_deliveries_sub_due').on(t.webhookId, t.status, t.nextAttemptAt),
    index('webhook_deliveries_log').on(t.webhookId, t.createdAt, t.id),
    index('webhook_deliveries_created').on(t.createdAt),
  ],
);

/** Each attempt of a delivery: time, status, latency, error class. Never the receiver's body. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    at: integer('at').notNull(),
    /** HTTP status of the answer, null when none came. */
    status: integer('status'),
    latencyMs: integer('latency_ms').notNull(),
    /** null on 2xx; else `http_status`, `redirect`, `timeout`, `refused_address`, `dns`, `tls`, `network`, `invalid_url`. */
    errorClass: text('error_class'),
  },
  (t) => [index('webhook_attempts_delivery').on(t.deliveryId, t.seq)],
);
