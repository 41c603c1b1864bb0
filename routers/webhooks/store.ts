// Webhook rows shared by the routes (routers/webhooks) and the dispatcher (dispatcher.ts): the
// sealed target, delivery creation with the 100-entry cap, and what one attempt's outcome does
// (retry schedule, end of a failure streak, disablement with its `webhook.disabled` fan-out).
// Every function here runs synchronously inside the caller's transaction.
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { users, webhookAttempts, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import type { Deps } from '../deps.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { randomSlice } from '../../core/crypto/random-pool.js';
import { newEventId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { DISABLE_AFTER_MS, ROTATION_OVERLAP_MS, retryDelay } from './constants.js';

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** What a send needs with no user present, sealed under the master key's unattended key. */
export type Target = { url: string; secret: string; previous: { secret: string; until: number } | null };

export type EventRef = { id: string; type: string; objectType: string; objectId: string; occurredAt: number };

export const newWebhookId = () => 'wh_' + randomSlice(16).toString('hex');
export const newDeliveryId = () => 'whd_' + randomSlice(16).toString('hex');
/** `whsec_` + 32 random bytes, base64url (spec §2.12: at least 24). */
export const newWebhookSecret = () => 'whsec_' + randomBytes(32).toString('base64url');

const targetAad = (userId: string, id: string) => rowAad(userId, 'webhooks.target', id);

export function sealTarget(deps: Pick<Deps, 'keys'>, userId: string, id: string, t: Target): Buffer {
  return sealJson(deps.keys.unattended, targetAad(userId, id), t);
}

export function openTarget(deps: Pick<Deps, 'keys'>, row: Pick<WebhookRow, 'userId' | 'id' | 'sealedTarget'>): Target {
  return openJson<Target>(deps.keys.unattended, targetAad(row.userId, row.id), row.sealedTarget);
}

/** The secrets an attempt at `now` signs with: the current one, and a rotated-out one for 24 h. */
export function signingSecrets(t: Target, now: number): string[] {
  return t.previous && now < t.previous.until ? [t.secret, t.previous.secret] : [t.secret];
}

/** A rotation: the current secret stays valid (signing too) for 24 hours; an older one is dropped. */
export function rotated(t: Target, secret: string, now: number): Target {
  return { url: t.url, secret, previous: { secret: t.secret, until: now + ROTATION_OVERLAP_MS } };
}

export function parseEvents(row: Pick<WebhookRow, 'events'>): string[] {
  return JSON.parse(row.events) as string[];
}

/**
 * One delivery of an event to one subscription, due now; the log is capped (capLog).
 * Returns false when this subscription already has this event (the fan-out is exactly once).
 */
export function insertDelivery(db: Db, webhook: Pick<WebhookRow, 'id' | 'userId'>, ev: EventRef, now: number, id = newDeliveryId()): boolean {
  const res = db
    .insert(webhookDeliveries)
    .values({
      id,
      webhookId: webhook.id,
      userId: webhook.userId,
      eventId: ev.id,
      eventType: ev.type,
      objectType: ev.objectType,
      objectId: ev.objectId,
      occurredAt: ev.occurredAt,
      status: 'pending',
      attempts: 0,
      failures: 0,
      nextAttemptAt: now,
      manual: false,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .run();
  if (res.changes === 0) return false;
  capLog(db, webhook.id);
  return true;
}

/**
 * The 100-entry log (spec §6.5.4): finished deliveries outside a subscription's newest 100 are
 * dropped. A pending one is never dropped (that would lose an event); it is capped once it ends.
 */
export function capLog(db: Db, webhookId: string): void {
  db.run(sql`DELETE FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND status != 'pending' AND rowid NOT IN (
    SELECT rowid FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY created_at DESC, rowid DESC LIMIT ${LIMITS.webhookDeliveries.kept})`);
}

export type AttemptOutcome = { status: number | null; latencyMs: number; errorClass: string | null };

/**
 * Records one attempt and what follows from it, in one transaction: a 2xx delivers and ends the
 * subscription's failure streak; a failure schedules the next attempt (+1 min, +5 min, +30 min,
 * +2 h, +8 h, then every 8 h, never past three days into the streak) or, three days into it,
 * disables the subscription. A redelivery (`manual`) is one attempt: it is not retried and does
 * not start a streak.
 */
export function recordAttempt(deps: Pick<Deps, 'db' | 'clock'>, deliveryId: string, out: AttemptOutcome): void {
  const { db } = deps;
  db.$client
    .transaction(() => {
      const at = deps.clock();
      const d = db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
      if (!d) return; // dropped by the cap or the subscription deleted while it was sent
      db.insert(webhookAttempts).values({ deliveryId, at, status: out.status, latencyMs: out.latencyMs, errorClass: out.errorClass }).run();
      const sub = db.select().from(webhooks).where(eq(webhooks.id, d.webhookId)).get();
      if (!sub) return;
      if (out.errorClass === null) {
        db.update(webhookDeliveries).set({ status: 'delivered', attempts: d.attempts + 1, failures: 0, nextAttemptAt: null, manual: false, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
        if (sub.failingSince !== null) db.update(webhooks).set({ failingSince: null }).where(eq(webhooks.id, sub.id)).run();
        capLog(db, sub.id);
        return;
      }
      if (d.status !== 'pending') {
        // Ended while this attempt was out (its subscription was disabled): only counted.
        db.update(webhookDeliveries).set({ attempts: d.attempts + 1, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
        return;
      }
      if (d.manual) {
        db.update(webhookDeliveries).set({ status: 'failed', attempts: d.attempts + 1, nextAttemptAt: null, manual: false, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
        capLog(db, sub.id);
        return;
      }
      const since = sub.failingSince ?? at;
      if (sub.failingSince === null) db.update(webhooks).set({ failingSince: since }).where(eq(webhooks.id, sub.id)).run();
      const failures = d.failures + 1;
      if (sub.active && at - since >= DISABLE_AFTER_MS) {
        db.update(webhookDeliveries).set({ attempts: d.attempts + 1, failures, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
        disableSubscription(db, sub, at);
        capLog(db, sub.id);
        return;
      }
      const next = Math.min(at + retryDelay(failures), since + DISABLE_AFTER_MS);
      db.update(webhookDeliveries).set({ attempts: d.attempts + 1, failures, nextAttemptAt: next, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
    })
    .immediate();
}

/**
 * Spec §6.5.3: `active: false`; its pending deliveries end as failed (redeliver can queue them
 * again); one `webhook.disabled` event (one event id) goes to each of the user's other active
 * subscriptions, or, with none, `users.webhooksDisabledAt` is set (GET /v1/me `webhooks.disabled`).
 */
export function disableSubscription(db: Db, sub: WebhookRow, at: number): void {
  db.update(webhooks).set({ active: false, disabledAt: at, updatedAt: at }).where(eq(webhooks.id, sub.id)).run();
  db.update(webhookDeliveries)
    .set({ status: 'failed', nextAttemptAt: null, updatedAt: at })
    .where(and(eq(webhookDeliveries.webhookId, sub.id), eq(webhookDeliveries.status, 'pending')))
    .run();
  const others = db
    .select({ id: webhooks.id, userId: webhooks.userId })
    .from(webhooks)
    .where(and(eq(webhooks.userId, sub.userId), eq(webhooks.active, true), ne(webhooks.id, sub.id)))
    .orderBy(asc(webhooks.createdAt))
    .all();
  if (!others.length) {
    db.update(users).set({ webhooksDisabledAt: at }).where(eq(users.id, sub.userId)).run();
    return;
  }
  const ev: EventRef = { id: newEventId(), type: 'webhook.disabled', objectType: 'webhook', objectId: sub.id, occurredAt: at };
  for (const o of others) insertDelivery(db, o, ev, at);
}
