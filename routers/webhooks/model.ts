// Webhook subscriptions (spec §2.12, §4.17, §6; docs/webhooks.md). The URL and signing secrets
// are sealed under the master key's unattended key (deliveries run with no user present,
// DECISIONS §3); the description under the user's data key. Every query is scoped by user id.
import { and, asc, count, desc, eq, inArray, lt, or } from 'drizzle-orm';
import { users, webhookAttempts, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import { decodeCursor, encodeCursor, finishPage, pageConditions, type ListQuery, type PageSpec } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { open, rowAad, seal } from '../../core/crypto/seal.js';
import { newEventId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { checkTarget, OutboundError } from '../../core/net/index.js';
import { MAX_SUBSCRIPTIONS } from './constants.js';
import {
  effectiveNextAttempt,
  insertDelivery,
  liftHold,
  newWebhookId,
  newWebhookSecret,
  openTarget,
  parseEvents,
  rotated,
  sealTarget,
  type DeliveryRow,
  type WebhookRow,
} from './store.js';
import type { DeliveryOut, WebhookOut } from './schema.js';

const descAad = (userId: string, id: string) => rowAad(userId, 'webhooks', id);

function toWebhook(deps: Deps, p: Principal, row: WebhookRow): WebhookOut {
  return {
    id: row.id,
    url: openTarget(deps, row).url,
    events: parseEvents(row),
    description: row.sealedDescription ? open(p.dek, descAad(row.userId, row.id), row.sealedDescription).toString('utf8') : null,
    active: row.active,
    disabledAt: isoOrNull(row.disabledAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

function sealDescription(p: Principal, id: string, d: string | null | undefined): Buffer | null {
  return d ? seal(p.dek, descAad(p.userId, id), Buffer.from(d, 'utf8')) : null;
}

function getRow(deps: Deps, userId: string, id: string): WebhookRow {
  const row = deps.db.select().from(webhooks).where(and(eq(webhooks.userId, userId), eq(webhooks.id, id))).get();
  if (!row) throw notFound('Webhook');
  return row;
}

/**
 * The door's check of a target before anything is stored (create, and PATCH with a url): every
 * address the host resolves to must be public (loopback too with CAIRN_UNSAFE_ALLOW_LOOPBACK=1).
 * A refusal is validation_failed at /url. Sends check again on their own socket.
 */
export async function vetUrl(deps: Deps, url: string): Promise<void> {
  try {
    await checkTarget(url, { allowLoopback: deps.config.unsafeAllowLoopback, resolver: deps.outbound?.resolver });
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    if (err.reason === 'refused_address') throw invalid('/url', `must reach a public address; this host resolves to a refused one (${err.message})`);
    if (err.reason === 'dns') throw invalid('/url', 'the host name does not resolve');
    throw invalid('/url', 'is not a usable https URL');
  }
}

export function listWebhooks(deps: Deps, p: Principal, query: ListQuery) {
  const spec: PageSpec = { key: deps.keys.cursor, scope: `${p.userId}:webhooks`, query, sortCol: webhooks.createdAt, idCol: webhooks.id, updatedCol: webhooks.updatedAt, numericSort: true };
  const { where, fetch, limit } = pageConditions(spec);
  const rows = deps.db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.userId, p.userId), ...where))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
    .limit(fetch)
    .all();
  return finishPage(spec, rows, limit, (r) => ({ k: String(r.createdAt), i: r.id }), (r) => toWebhook(deps, p, r));
}

export function getWebhook(deps: Deps, p: Principal, id: string): WebhookOut {
  return toWebhook(deps, p, getRow(deps, p.userId, id));
}

/** Spec §4.17 and docs/webhooks.md "Ping": creating a subscription queues one `webhook.ping` to it. */
export function createWebhook(deps: Deps, p: Principal, input: { url: string; events: string[]; description?: string | undefined }): WebhookOut & { secret: string } {
  const db = deps.db;
  const n = db.select({ n: count() }).from(webhooks).where(eq(webhooks.userId, p.userId)).get()!.n;
  if (n >= MAX_SUBSCRIPTIONS) throw new AppError('conflict', `An account has at most ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one first.`);
  const id = newWebhookId();
  const secret = newWebhookSecret();
  const now = deps.clock();
  const row: WebhookRow = {
    id,
    userId: p.userId,
    events: JSON.stringify(input.events),
    sealedTarget: sealTarget(deps, p.userId, id, { url: input.url, secret, previous: null }),
    sealedDescription: sealDescription(p, id, input.description),
    active: true,
    failingSince: null,
    timeouts: 0,
    heldUntil: null,
    disabledAt: null,
    createdAt: now,
    updatedAt: now,
  };
  db.insert(webhooks).values(row).run();
  insertDelivery(db, row, { id: newEventId(), type: 'webhook.ping', objectType: 'webhook', objectId: id, occurredAt: now }, now);
  return { ...toWebhook(deps, p, row), secret };
}

export function updateWebhook(
  deps: Deps,
  p: Principal,
  input: { id: string; url?: string | undefined; events?: string[] | undefined; description?: string | null | undefined; active?: boolean | undefined },
): WebhookOut {
  const db = deps.db;
  const row = getRow(deps, p.userId, input.id);
  const now = deps.clock();
  const next: WebhookRow = { ...row, updatedAt: now };
  if (input.url !== undefined) {
    const t = openTarget(deps, row);
    // A rotated-out secret past its 24 hours is dropped whenever the target is written again.
    next.sealedTarget = sealTarget(deps, p.userId, row.id, { url: input.url, secret: t.secret, previous: t.previous && t.previous.until > now ? t.previous : null });
    // A new address has not hung yet: a timeout hold belonged to the old one.
    next.timeouts = 0;
    next.heldUntil = null;
  }
  if (input.events !== undefined) next.events = JSON.stringify(input.events);
  if (input.description !== undefined) next.sealedDescription = sealDescription(p, row.id, input.description);
  if (input.active === true && !row.active) {
    // Re-activation: a fresh start (no failure streak), and the account-level flag is cleared.
    next.active = true;
    next.disabledAt = null;
    next.failingSince = null;
    next.timeouts = 0;
    next.heldUntil = null;
    db.update(users).set({ webhooksDisabledAt: null }).where(eq(users.id, p.userId)).run();
  } else if (input.active === false && row.active) {
    next.active = false;
  }
  db.update(webhooks)
    .set({
      sealedTarget: next.sealedTarget,
      events: next.events,
      sealedDescription: next.sealedDescription,
      active: next.active,
      disabledAt: next.disabledAt,
      failingSince: next.failingSince,
      timeouts: next.timeouts,
      heldUntil: next.heldUntil,
      updatedAt: now,
    })
    .where(and(eq(webhooks.userId, p.userId), eq(webhooks.id, row.id)))
    .run();
  return toWebhook(deps, p, next);
}

export function deleteWebhook(deps: Deps, p: Principal, id: string): void {
  const res = deps.db.delete(webhooks).where(and(eq(webhooks.userId, p.userId), eq(webhooks.id, id))).run();
  if (res.changes === 0) throw notFound('Webhook');
}

/** Spec §4.17: a new secret; the previous one keeps signing (a second v1) for 24 hours. */
export function rotateSecret(deps: Deps, p: Principal, id: string) {
  const row = getRow(deps, p.userId, id);
  const now = deps.clock();
  const secret = newWebhookSecret();
  const target = rotated(openTarget(deps, row), secret, now);
  deps.db
    .update(webhooks)
    .set({ sealedTarget: sealTarget(deps, p.userId, row.id, target), updatedAt: now })
    .where(and(eq(webhooks.userId, p.userId), eq(webhooks.id, row.id)))
    .run();
  return { id: row.id, secret, previousSecretExpiresAt: iso(target.previous!.until) };
}

/** `sub`: the deliveries' subscription, whose timeout hold delays their next attempt. */
function deliveriesOut(deps: Deps, sub: WebhookRow, rows: DeliveryRow[]): DeliveryOut[] {
  const attempts = rows.length
    ? deps.db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, rows.map((r) => r.id))).orderBy(asc(webhookAttempts.seq)).all()
    : [];
  const by = new Map<string, DeliveryOut['attempts']>();
  for (const a of attempts) {
    const list = by.get(a.deliveryId) ?? [];
    list.push({ at: iso(a.at), status: a.status, latencyMs: a.latencyMs, errorClass: a.errorClass });
    by.set(a.deliveryId, list);
  }
  return rows.map((d) => ({
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: isoOrNull(effectiveNextAttempt(d, sub)),
    dropped: d.dropped,
    createdAt: iso(d.createdAt),
    attempts: by.get(d.id) ?? [],
  }));
}

/** Spec §4.17: newest first; the log holds at most 100 per subscription, 30 days. */
export function listDeliveries(deps: Deps, p: Principal, input: { id: string; limit?: number | undefined; cursor?: string | undefined }) {
  const sub = getRow(deps, p.userId, input.id);
  const scope = `${p.userId}:webhooks.${sub.id}.deliveries`;
  const limit = input.limit ?? LIMITS.page.defaultLimit;
  const where = [eq(webhookDeliveries.userId, p.userId), eq(webhookDeliveries.webhookId, sub.id)];
  if (input.cursor) {
    const pos = decodeCursor(deps.keys.cursor, scope, input.cursor);
    const k = Number(pos.k);
    where.push(or(lt(webhookDeliveries.createdAt, k), and(eq(webhookDeliveries.createdAt, k), lt(webhookDeliveries.id, pos.i)))!);
  }
  const rows = deps.db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit + 1)
    .all();
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { data: deliveriesOut(deps, sub, kept), next_cursor: more && last ? encodeCursor(deps.keys.cursor, scope, { k: String(last.createdAt), i: last.id }) : null };
}

/**
 * Spec §4.17: queues one new attempt of the same event (same event id) now; a timeout hold is
 * lifted for it (liftHold). Rate-limited (`webhookRedeliver`).
 */
export function redeliver(deps: Deps, p: Principal, input: { id: string; deliveryId: string }): DeliveryOut {
  const sub = getRow(deps, p.userId, input.id);
  if (!sub.active) throw new AppError('conflict', 'The subscription is not active; re-activate it (PATCH active: true) first.');
  const d = deps.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.userId, p.userId), eq(webhookDeliveries.webhookId, sub.id), eq(webhookDeliveries.id, input.deliveryId)))
    .get();
  if (!d) throw notFound('Delivery');
  const now = deps.clock();
  // A delivery still in its retry series is moved up to now and keeps its series; a finished one
  // gets one attempt (manual), not a new series.
  const next: DeliveryRow = { ...d, status: 'pending', nextAttemptAt: now, manual: d.status !== 'pending', dropped: false, updatedAt: now };
  deps.db.update(webhookDeliveries).set({ status: next.status, nextAttemptAt: now, manual: next.manual, dropped: false, updatedAt: now }).where(eq(webhookDeliveries.id, d.id)).run();
  liftHold(deps.db, sub, now);
  return deliveriesOut(deps, { ...sub, heldUntil: null }, [next])[0]!;
}

/**
 * Spec §4.17 "ping": one `webhook.ping` now, to this subscription only; a timeout hold is lifted for
 * it (liftHold). Rate-limited (`webhookPing`).
 */
export function ping(deps: Deps, p: Principal, id: string): DeliveryOut {
  const sub = getRow(deps, p.userId, id);
  if (!sub.active) throw new AppError('conflict', 'The subscription is not active; re-activate it (PATCH active: true) first.');
  const now = deps.clock();
  const ev = { id: newEventId(), type: 'webhook.ping', objectType: 'webhook', objectId: sub.id, occurredAt: now };
  insertDelivery(deps.db, sub, ev, now);
  liftHold(deps.db, sub, now);
  const d = deps.db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.webhookId, sub.id), eq(webhookDeliveries.eventId, ev.id))).get()!;
  return deliveriesOut(deps, { ...sub, heldUntil: null }, [d])[0]!;
}
