// The webhook dispatcher (spec §6, docs/webhooks.md): beside request handling, never inside it.
// 1. Fan-out: undispatched outbox rows become one delivery per matching active subscription of
//    their user, and are marked dispatched, in the same IMMEDIATE transaction (exactly once). In
//    one tick a user's events make at most FAN_OUT_PER_USER_PER_TICK deliveries before the other
//    users' events behind them get theirs (issue 28: a flood of one account's events does not
//    stand in front of another's).
// 2. Sending: due deliveries go out through the outbound door (core/net), fairly across users
//    (issue 28, docs/webhooks.md "Concurrency and fairness"): at most CONCURRENCY_OVERALL sends at
//    once, CONCURRENCY_PER_USER per user and CONCURRENCY_PER_SUBSCRIPTION per subscription; every
//    free slot goes to the user with the fewest sends out (ties: the one served longest ago), and
//    within that user to its subscription with the fewest out (ties likewise). So receivers that
//    hang hold only their own account's few slots and are never in front of another account's
//    deliveries: no head-of-line blocking across users. A subscription held after timeouts
//    (routers/webhooks/store.ts holdAfterTimeout) is left out until its hold ends, then sends
//    one at a time until a 2xx.
//    Each attempt's outcome is recorded in its own transaction (store.ts recordAttempt). A crash
//    mid-send leaves the delivery pending and due: it is sent again after a restart, with the
//    same event id (at-least-once).
// Time rules read the injected clock: tests move it and call `tick()`/`settle()`; the process
// calls `start()`, which ticks on a real-time interval.
import { performance } from 'node:perf_hooks';
import { and, asc, eq, exists, inArray, isNull, lte, notInArray, or, sql } from 'drizzle-orm';
import { outbox, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import type { Deps } from '../../routers/deps.js';
import { iso } from '../../core/clock.js';
import { outboundFetch, OutboundError } from '../../core/net/index.js';
import type { EventEnvelope } from '../../routers/events.js';
import {
  CONCURRENCY_OVERALL,
  CONCURRENCY_PER_SUBSCRIPTION,
  CONCURRENCY_PER_USER,
  FAN_OUT_PER_USER_PER_TICK,
  SEND_DEADLINE_MS,
  SEND_MAX_READ_BYTES,
} from '../../routers/webhooks/constants.js';
import { insertDelivery, openTarget, parseEvents, recordAttempt, signingSecrets, type AttemptOutcome, type DeliveryRow, type DeliveryTarget, type WebhookRow } from '../../routers/webhooks/store.js';
import { signatureHeader } from '../../routers/webhooks/signer.js';
import { metricsFor } from '../metrics.js';

const FAN_OUT_BATCH = 500;
/** Fan-out transactions per tick at most (a backlog is moved a bounded amount per tick). */
const FAN_OUT_ROUNDS = 20;

/**
 * Moves undispatched outbox events into deliveries, oldest first, leaving out the users in
 * `skipUsers` (they had their share of this tick). Returns how many events it handled, and how
 * many deliveries it made per user.
 */
export function fanOut(deps: Pick<Deps, 'db' | 'clock'>, opts: { batch?: number; skipUsers?: ReadonlySet<string> } = {}): { events: number; made: Map<string, number> } {
  const { db } = deps;
  const batch = opts.batch ?? FAN_OUT_BATCH;
  const skip = [...(opts.skipUsers ?? [])];
  const undispatched = and(isNull(outbox.dispatchedAt), skip.length ? notInArray(outbox.userId, skip) : undefined);
  const made = new Map<string, number>();
  // Idle ticks take no write lock: a plain read first.
  if (!db.select({ seq: outbox.seq }).from(outbox).where(undispatched).limit(1).get()) return { events: 0, made };
  return db.$client
    .transaction(() => {
      const rows = db.select().from(outbox).where(undispatched).orderBy(asc(outbox.seq)).limit(batch).all();
      if (!rows.length) return { events: 0, made };
      const now = deps.clock();
      const subsOf = new Map<string, { row: DeliveryTarget; events: Set<string> }[]>();
      for (const ev of rows) {
        let subs = subsOf.get(ev.userId);
        if (!subs) {
          subs = db
            .select({ id: webhooks.id, userId: webhooks.userId, events: webhooks.events, failingSince: webhooks.failingSince })
            .from(webhooks)
            .where(and(eq(webhooks.userId, ev.userId), eq(webhooks.active, true)))
            .all()
            .map((w) => ({ row: { id: w.id, userId: w.userId, failingSince: w.failingSince }, events: new Set(parseEvents(w)) }));
          subsOf.set(ev.userId, subs);
        }
        for (const s of subs) {
          if (!s.events.has(ev.type)) continue;
          if (insertDelivery(db, s.row, { id: ev.id, type: ev.type, objectType: ev.objectType, objectId: ev.objectId, occurredAt: ev.occurredAt }, now)) made.set(ev.userId, (made.get(ev.userId) ?? 0) + 1);
        }
      }
      db.update(outbox).set({ dispatchedAt: now }).where(inArray(outbox.seq, rows.map((r) => r.seq))).run();
      return { events: rows.length, made };
    })
    .immediate();
}

export function envelopeOf(d: Pick<DeliveryRow, 'eventId' | 'eventType' | 'occurredAt' | 'objectType' | 'objectId' | 'userId'>): EventEnvelope {
  return { id: d.eventId, type: d.eventType, occurredAt: iso(d.occurredAt), data: { object: d.objectType, id: d.objectId, sub: d.userId } };
}

/** One attempt through the door: POST, no redirect followed, 10 s, at most 64 KB read and discarded. */
export async function sendOnce(deps: Deps, d: DeliveryRow, sub: WebhookRow, deadlineMs = SEND_DEADLINE_MS): Promise<AttemptOutcome> {
  const target = openTarget(deps, sub);
  const body = JSON.stringify(envelopeOf(d));
  const now = deps.clock();
  const t = Math.floor(now / 1000);
  const headers = {
    'content-type': 'application/json',
    'x-service-event-id': d.eventId,
    'x-service-event': d.eventType,
    'x-service-signature': signatureHeader(signingSecrets(target, now), t, body),
  };
  const started = performance.now();
  let status: number | null = null;
  let read = 0;
  let errorClass: string | null;
  try {
    await outboundFetch(target.url, {
      method: 'POST',
      headers,
      body,
      redirects: 0,
      httpsOnly: true,
      deadlineMs,
      maxBytes: SEND_MAX_READ_BYTES,
      allowLoopback: deps.config.unsafeAllowLoopback,
      ...deps.outbound,
      wantBody: (head) => {
        status = head.status;
        return true;
      },
      // Read and discarded, never stored or logged; reading stops at 64 KB.
      onChunk: (chunk) => {
        read += chunk.length;
        return read >= SEND_MAX_READ_BYTES;
      },
    });
    errorClass = null;
  } catch (err) {
    // An answer whose head came but whose body failed still has its status.
    errorClass = status === null ? (err instanceof OutboundError ? err.reason : 'network') : null;
  }
  if (status !== null) {
    const s: number = status;
    errorClass = s >= 200 && s < 300 ? null : s >= 300 && s < 400 ? 'redirect' : 'http_status';
  }
  return { status, latencyMs: Math.round(performance.now() - started), errorClass };
}

export type Dispatcher = {
  /** Fans out the outbox and starts every due send the concurrency bounds allow; does not wait. */
  tick(): void;
  /** Ticks and waits until nothing is in flight and nothing is due (tests, with the manual clock). */
  settle(): Promise<void>;
  /** Deliveries being sent now. */
  inFlight(): number;
  /** Sends out now for one user (tests: the per-user bound). */
  inFlightOf(userId: string): number;
  /** Ticks every `everyMs` of real time; a finished send ticks again at once. */
  start(everyMs?: number): void;
  /** No new send starts and no outcome is recorded after this (a send cut off stays due: at-least-once). */
  stop(): void;
};

export type DispatcherOptions = {
  overall?: number;
  perUser?: number;
  perSubscription?: number;
  /** Tests only: a shorter send deadline than the spec's 10 s, so a timeout test need not wait 10 s. */
  sendDeadlineMs?: number;
};

/** Round-robin keys compare as tuples: fewer sends out first, then served longer ago. */
const before = (a: readonly [number, number], b: readonly [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
/** The round-robin memory is dropped past this many entries (users or subscriptions seen). */
const SERVED_MAX = 10_000;

export function createDispatcher(deps: Deps, opts: DispatcherOptions = {}): Dispatcher {
  const overall = opts.overall ?? CONCURRENCY_OVERALL;
  const perUser = opts.perUser ?? CONCURRENCY_PER_USER;
  const perSubscription = opts.perSubscription ?? CONCURRENCY_PER_SUBSCRIPTION;
  const metrics = metricsFor(deps);
  const inflight = new Map<string, Promise<void>>();
  /** Deliveries out per subscription; sends out per user. */
  const subOut = new Map<string, Set<string>>();
  const userOut = new Map<string, number>();
  /** The serial of the latest send started per user and per subscription (round-robin order). */
  const userServed = new Map<string, number>();
  const subServed = new Map<string, number>();
  let serial = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let again = false;

  const outOf = (w: WebhookRow) => subOut.get(w.id)?.size ?? 0;
  /** A subscription held after timeouts is let out one send at a time (a probe) until a 2xx. */
  const limitOf = (w: WebhookRow) => (w.timeouts > 0 ? 1 : perSubscription);

  /** Active subscriptions, not held, with a delivery due now. */
  const candidates = (now: number): WebhookRow[] => {
    const due = and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, now));
    if (!deps.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(due).limit(1).get()) return [];
    return deps.db
      .select()
      .from(webhooks)
      .where(
        and(
          eq(webhooks.active, true),
          or(isNull(webhooks.heldUntil), lte(webhooks.heldUntil, now)),
          exists(deps.db.select({ one: sql`1` }).from(webhookDeliveries).where(and(eq(webhookDeliveries.webhookId, webhooks.id), due))),
        ),
      )
      .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
      .all();
  };

  /** The subscription's oldest due delivery that is not being sent. */
  const nextDue = (w: WebhookRow, now: number): DeliveryRow | undefined => {
    const out = [...(subOut.get(w.id) ?? [])];
    return deps.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.webhookId, w.id),
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, now),
          out.length ? notInArray(webhookDeliveries.id, out) : undefined,
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.createdAt))
      .limit(1)
      .get();
  };

  const launch = (d: DeliveryRow, w: WebhookRow) => {
    serial++;
    if (userServed.size >= SERVED_MAX) userServed.clear();
    if (subServed.size >= SERVED_MAX) subServed.clear();
    userServed.set(w.userId, serial);
    subServed.set(w.id, serial);
    userOut.set(w.userId, (userOut.get(w.userId) ?? 0) + 1);
    let ids = subOut.get(w.id);
    if (!ids) subOut.set(w.id, (ids = new Set()));
    ids.add(d.id);
    const p = sendOnce(deps, d, w, opts.sendDeadlineMs)
      .then((out) => {
        if (!stopped) recordAttempt(deps, d.id, out);
        metrics?.observeAttempt(out.errorClass); // issue 33 item 4: one increment per attempt
      })
      .catch((err: unknown) => {
        if (!stopped) deps.log.error({ err, webhook: w.id, delivery: d.id }, 'webhook send failed');
      })
      .finally(() => {
        inflight.delete(d.id);
        const left = subOut.get(w.id);
        left?.delete(d.id);
        if (left && !left.size) subOut.delete(w.id);
        const n = (userOut.get(w.userId) ?? 1) - 1;
        if (n > 0) userOut.set(w.userId, n);
        else userOut.delete(w.userId);
        if (timer && !stopped) soon();
      });
    inflight.set(d.id, p);
  };

  /** Fills free slots, one send at a time, each to the user and subscription next in turn. */
  const launchDue = () => {
    if (inflight.size >= overall) return;
    const now = deps.clock();
    const byUser = new Map<string, WebhookRow[]>();
    for (const w of candidates(now)) {
      const list = byUser.get(w.userId);
      if (list) list.push(w);
      else byUser.set(w.userId, [w]);
    }
    /** Subscriptions found with nothing more due in this tick. */
    const spent = new Set<string>();
    const open = (w: WebhookRow) => !spent.has(w.id) && outOf(w) < limitOf(w);
    while (inflight.size < overall) {
      let subs: WebhookRow[] | undefined;
      let key: [number, number] | undefined;
      for (const [userId, list] of byUser) {
        const out = userOut.get(userId) ?? 0;
        if (out >= perUser || !list.some(open)) continue;
        const k: [number, number] = [out, userServed.get(userId) ?? -1];
        if (!key || before(k, key)) [subs, key] = [list, k];
      }
      if (!subs) return;
      let w: WebhookRow | undefined;
      let wKey: [number, number] | undefined;
      for (const c of subs) {
        if (!open(c)) continue;
        const k: [number, number] = [outOf(c), subServed.get(c.id) ?? -1];
        if (!wKey || before(k, wKey)) [w, wKey] = [c, k];
      }
      const d = nextDue(w!, now);
      if (d) launch(d, w!);
      else spent.add(w!.id);
    }
  };

  /** Fan-out in rounds; a user whose deliveries made this tick reach the share waits for the next. */
  const fanOutFairly = () => {
    const made = new Map<string, number>();
    const full = new Set<string>();
    for (let round = 0; round < FAN_OUT_ROUNDS; round++) {
      const r = fanOut(deps, { skipUsers: full });
      for (const [userId, n] of r.made) {
        const total = (made.get(userId) ?? 0) + n;
        made.set(userId, total);
        if (total >= FAN_OUT_PER_USER_PER_TICK) full.add(userId);
      }
      if (r.events < FAN_OUT_BATCH) break;
    }
  };

  const soon = () => {
    if (again) return;
    again = true;
    setImmediate(() => {
      again = false;
      tick();
    });
  };

  function tick(): void {
    if (stopped) return;
    try {
      fanOutFairly();
      launchDue();
    } catch (err) {
      deps.log.error({ err }, 'webhook dispatcher tick failed');
    }
  }

  return {
    tick,
    async settle() {
      for (;;) {
        tick();
        if (!inflight.size) return;
        await Promise.all(inflight.values());
      }
    },
    inFlight: () => inflight.size,
    inFlightOf: (userId) => userOut.get(userId) ?? 0,
    start(everyMs = 1_000) {
      if (timer || stopped) return;
      timer = setInterval(tick, everyMs);
      timer.unref();
      tick();
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
