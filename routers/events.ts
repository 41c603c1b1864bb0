// Thin events (spec §6): recorded in the durable outbox inside the caller's transaction, so the
// change and its event commit together (DECISIONS §6). An event names a type and an object id,
// never the object's content; `data.sub` is the user id.
import { newEventId } from '../core/ids.js';
import { asc, eq, and, sql } from 'drizzle-orm';
import { prepared } from '../db/prepared.js';
import type { Db, Tx } from '../db/client.js';
import { outbox } from '../db/schema/index.js';
import { iso } from '../core/clock.js';

/** Object kinds that carry `<object>.created|updated|deleted` events (spec §6.2, DECISIONS §6). */
export const EVENT_OBJECTS = ['todo', 'container', 'inbox', 'tag', 'filter', 'attachment', 'note', 'note_folder'] as const;
export type EventObject = (typeof EVENT_OBJECTS)[number] | 'heading' | 'note_version' | 'webhook';

export const EVENT_TYPES = [
  ...EVENT_OBJECTS.flatMap((o) => [`${o}.created`, `${o}.updated`, `${o}.deleted`] as const),
  'heading.deleted',
  'note_version.created',
  'webhook.ping',
  'webhook.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export type EventEnvelope = {
  id: string;
  type: string;
  occurredAt: string;
  data: { object: string; id: string; sub: string };
};

/**
 * Records one event. Call it inside the transaction that makes the change (better-sqlite3 has one
 * connection, so the statement joins that transaction); `occurredAt` is the change's time from
 * the injected clock.
 */
export function recordEvent(deps: { db: Db }, ev: { userId: string; type: EventType; id: string; at: number }): string {
  const object = ev.type.slice(0, ev.type.lastIndexOf('.'));
  const id = newEventId();
  // Prepared once on the one connection, so it runs inside the caller's open transaction.
  const q = prepared(deps.db, 'outbox.insert', (db) =>
    db
      .insert(outbox)
      .values({
        id: sql.placeholder('id'),
        userId: sql.placeholder('userId'),
        type: sql.placeholder('type'),
        objectType: sql.placeholder('objectType'),
        objectId: sql.placeholder('objectId'),
        occurredAt: sql.placeholder('occurredAt'),
      })
      .prepare(),
  );
  q.run({ id, userId: ev.userId, type: ev.type, objectType: object, objectId: ev.id, occurredAt: ev.at });
  return id;
}

type OutboxRow = typeof outbox.$inferSelect;

/** The wire envelope of a stored event (spec §6.1). */
export function toEnvelope(row: OutboxRow): EventEnvelope {
  return { id: row.id, type: row.type, occurredAt: iso(row.occurredAt), data: { object: row.objectType, id: row.objectId, sub: row.userId } };
}

/** A user's events in the order they were recorded (for the dispatcher and tests). */
export function eventsOf(db: Db, userId: string): EventEnvelope[] {
  return db.select().from(outbox).where(and(eq(outbox.userId, userId))).orderBy(asc(outbox.seq)).all().map(toEnvelope);
}
