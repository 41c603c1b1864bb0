// Webhook rows shared by the routes (routers/webhooks) and the dispatcher (dispatcher.ts): the
// sealed target, delivery creation with the 100-entry log and the backlog cap of a failing
// subscription, and what one attempt's outcome does (retry schedule, the hold after timeouts, end
// of a failure streak, disablement with its `webhook.disabled` fan-out).
// Every function here runs synchronously inside the caller's transaction.
import { and, asc, eq, gt, ne, sql } from 'drizzle-orm';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { users, webhookAttempts, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import type { Deps } from '../deps.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { randomSlice } from '../../core/crypto/random-pool.js';
import { newEventId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { BACKLOG_CAP_AFTER_MS, DISABLE_AFTER_MS, MAX_PENDING_WHILE_FAILING, ROTATION_OVERLAP_MS, retryDelay, timeoutHold } from './constants.js';

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

/** What a new delivery needs of its subscription (`failingSince` for the backlog cap; absent: not failing). */
export type DeliveryTarget = Pick<WebhookRow, 'id' | 'userId'> & Partial<Pick<WebhookRow, 'failingSince'>>;

/**
 * One delivery of an event to one subscription, due now; a failing subscription's backlog is capped
 * (capPending), the log too (capLog).
 * Returns false when this subscription already has this event (the fan-out is exactly once).
 */
export function insertDelivery(db: Db, webhook: DeliveryTarget, ev: EventRef, now: number, id = newDeliveryId()): boolean {
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
      dropped: false,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .run();
  if (res.changes === 0) return false;
  capPending(db, webhook.id, webhook.failingSince ?? null, now);
  capLog(db, webhook.id);
  return true;
}

/**
 * Issue 28 (docs/webhooks.md "Backlog"): a subscription that has been failing for
 * BACKLOG_CAP_AFTER_MS or more keeps at most MAX_PENDING_WHILE_FAILING pending deliveries. The
 * oldest beyond that end as `failed`, marked `dropped`, with no further attempt: the newest are
 * kept, because a receiver that comes back wants to hear of the latest changes (it sweeps with
 * `updated_since` for the rest), and a dropped one stays in the log for a redelivery. Redeliveries
 * (`manual`) are neither counted nor dropped: the user asked for each. A subscription failing for
 * less than that (a hiccup in a healthy receiver's burst) keeps all of its backlog.
 * Returns how many it dropped.
 */
export function capPending(db: Db, webhookId: string, failingSince: number | null, now: number): number {
  if (failingSince === null || now - failingSince < BACKLOG_CAP_AFTER_MS) return 0;
  const res = db.run(sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, dropped = 1, updated_at = ${now}
    WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND status = 'pending' AND manual = 0
      ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ${MAX_PENDING_WHILE_FAILING})`);
  return res.changes;
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
 * Records one attempt and what follows from it, in one transaction: a 2xx delivers, ends the
 * subscription's failure streak and its timeout hold, and makes what it held back due now; a
 * failure schedules the next attempt (+1 min, +5 min, +30 min, +2 h, +8 h, then every 8 h, never
 * past three days into the streak) or, three days into it, disables the subscription. A timeout
 * also holds the whole subscription (holdAfterTimeout). A redelivery (`manual`) is one attempt: it
 * is not retried and does not start a streak.
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
        db.update(webhookDeliveries).set({ status: 'delivered', attempts: d.attempts + 1, failures: 0, nextAttemptAt: null, manual: false, dropped: false, updatedAt: at }).where(eq(webhookDeliveries.id, d.id)).run();
        recovered(db, sub, at);
        capLog(db, sub.id);
        return;
      }
      if (out.errorClass === 'timeout') holdAfterTimeout(db, sub, at);
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
      // A backlog that built up before the streak was old enough is cut now, not at the next event.
      capPending(db, sub.id, since, at);
    })
    .immediate();
}

/**
 * A 2xx: the failure streak and the timeout hold end, and the subscription's pending deliveries
 * are due at once (a receiver that is back gets what it missed now, not over the next 8 hours of
 * retry steps).
 */
function recovered(db: Db, sub: WebhookRow, at: number): void {
  if (sub.failingSince === null && sub.timeouts === 0 && sub.heldUntil === null) return;
  db.update(webhooks).set({ failingSince: null, timeouts: 0, heldUntil: null }).where(eq(webhooks.id, sub.id)).run();
  db.update(webhookDeliveries)
    .set({ nextAttemptAt: at })
    .where(and(eq(webhookDeliveries.webhookId, sub.id), eq(webhookDeliveries.status, 'pending'), gt(webhookDeliveries.nextAttemptAt, at)))
    .run();
}

/**
 * Issue 28 (docs/webhooks.md "Receivers that hang"): an attempt that timed out held a send slot for
 * the whole deadline, and the next would too. The subscription is held (no attempt of it starts)
 * for timeoutHold(n) after its n-th timeout in a row, never past the three days that disable it,
 * and sends one at a time until a 2xx. A timeout of a send already out when the hold began is the
 * same observation again: it does not lengthen the hold. Other failures leave the hold as it is
 * (a receiver that answers fast holds no slot; only a 2xx ends the hold).
 */
function holdAfterTimeout(db: Db, sub: WebhookRow, at: number): void {
  if (sub.heldUntil !== null && sub.heldUntil > at) return;
  const timeouts = sub.timeouts + 1;
  const until = Math.min(at + timeoutHold(timeouts), (sub.failingSince ?? at) + DISABLE_AFTER_MS);
  db.update(webhooks).set({ timeouts, heldUntil: until }).where(eq(webhooks.id, sub.id)).run();
  sub.timeouts = timeouts;
  sub.heldUntil = until;
}

/**
 * A ping or a redelivery the user asks for lifts a timeout hold: the next attempt goes now, as the
 * one probe (a user who fixed a receiver is not kept waiting hours). Both are rate-limited routes.
 */
export function liftHold(db: Db, sub: WebhookRow, now: number): void {
  if (sub.heldUntil !== null && sub.heldUntil > now) db.update(webhooks).set({ heldUntil: now }).where(eq(webhooks.id, sub.id)).run();
}

/** When a pending delivery's next attempt will really start: a held subscription holds it too. */
export function effectiveNextAttempt(d: Pick<DeliveryRow, 'status' | 'nextAttemptAt'>, sub: Pick<WebhookRow, 'heldUntil'>): number | null {
  if (d.status !== 'pending' || d.nextAttemptAt === null) return d.nextAttemptAt;
  return sub.heldUntil !== null && sub.heldUntil > d.nextAttemptAt ? sub.heldUntil : d.nextAttemptAt;
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
    .select({ id: webhooks.id, userId: webhooks.userId, failingSince: webhooks.failingSince })
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
