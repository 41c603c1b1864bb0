// The webhook dispatcher (spec §6, docs/webhooks.md): beside request handling, never inside it.
// 1. Fan-out: undispatched outbox rows become one delivery per matching active subscription of
//    their user, and are marked dispatched, in the same IMMEDIATE transaction (exactly once).
// 2. Sending: due deliveries go out through the outbound door (core/net) with bounded
//    concurrency overall and per subscription, so a receiver that hangs holds only its own slots.
//    Each attempt's outcome is recorded in its own transaction (store.ts recordAttempt). A crash
//    mid-send leaves the delivery pending and due: it is sent again after a restart, with the
//    same event id (at-least-once).
// Time rules read the injected clock: tests move it and call `tick()`/`settle()`; the process
// calls `start()`, which ticks on a real-time interval.
import { performance } from 'node:perf_hooks';
import { and, asc, eq, inArray, isNull, lte, notInArray } from 'drizzle-orm';
import { outbox, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import type { Deps } from '../../routers/deps.js';
import { iso } from '../../core/clock.js';
import { outboundFetch, OutboundError } from '../../core/net/index.js';
import type { EventEnvelope } from '../../routers/events.js';
import { CONCURRENCY_OVERALL, CONCURRENCY_PER_SUBSCRIPTION, SEND_DEADLINE_MS, SEND_MAX_READ_BYTES } from '../../routers/webhooks/constants.js';
import { insertDelivery, openTarget, parseEvents, recordAttempt, signingSecrets, type AttemptOutcome, type DeliveryRow, type WebhookRow } from '../../routers/webhooks/store.js';
import { signatureHeader } from '../../routers/webhooks/signer.js';

const FAN_OUT_BATCH = 500;

/** Moves undispatched outbox events into deliveries; returns how many events it handled. */
export function fanOut(deps: Pick<Deps, 'db' | 'clock'>, batch = FAN_OUT_BATCH): number {
  const { db } = deps;
  // Idle ticks take no write lock: a plain read first.
  if (!db.select({ seq: outbox.seq }).from(outbox).where(isNull(outbox.dispatchedAt)).limit(1).get()) return 0;
  return db.$client
    .transaction(() => {
      const rows = db.select().from(outbox).where(isNull(outbox.dispatchedAt)).orderBy(asc(outbox.seq)).limit(batch).all();
      if (!rows.length) return 0;
      const now = deps.clock();
      const subsOf = new Map<string, { row: Pick<WebhookRow, 'id' | 'userId'>; events: Set<string> }[]>();
      for (const ev of rows) {
        let subs = subsOf.get(ev.userId);
        if (!subs) {
          subs = db
            .select({ id: webhooks.id, userId: webhooks.userId, events: webhooks.events })
            .from(webhooks)
            .where(and(eq(webhooks.userId, ev.userId), eq(webhooks.active, true)))
            .all()
            .map((w) => ({ row: { id: w.id, userId: w.userId }, events: new Set(parseEvents(w)) }));
          subsOf.set(ev.userId, subs);
        }
        for (const s of subs) {
          if (s.events.has(ev.type)) insertDelivery(db, s.row, { id: ev.id, type: ev.type, objectType: ev.objectType, objectId: ev.objectId, occurredAt: ev.occurredAt }, now);
        }
      }
      db.update(outbox).set({ dispatchedAt: now }).where(inArray(outbox.seq, rows.map((r) => r.seq))).run();
      return rows.length;
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
  /** Ticks every `everyMs` of real time; a finished send ticks again at once. */
  start(everyMs?: number): void;
  /** No new send starts and no outcome is recorded after this (a send cut off stays due: at-least-once). */
  stop(): void;
};

export type DispatcherOptions = {
  overall?: number;
  perSubscription?: number;
  /** Tests only: a shorter send deadline than the spec's 10 s, so a timeout test need not wait 10 s. */
  sendDeadlineMs?: number;
};

export function createDispatcher(deps: Deps, opts: DispatcherOptions = {}): Dispatcher {
  const overall = opts.overall ?? CONCURRENCY_OVERALL;
  const perSubscription = opts.perSubscription ?? CONCURRENCY_PER_SUBSCRIPTION;
  const inflight = new Map<string, Promise<void>>();
  const perSub = new Map<string, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  /** Due deliveries, leaving out those in flight and subscriptions already at their bound. */
  const due = () => {
    const full = [...perSub].filter(([, n]) => n >= perSubscription).map(([id]) => id);
    return deps.db
      .select({ d: webhookDeliveries, w: webhooks })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(
        and(
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, deps.clock()),
          eq(webhooks.active, true),
          inflight.size ? notInArray(webhookDeliveries.id, [...inflight.keys()]) : undefined,
          full.length ? notInArray(webhooks.id, full) : undefined,
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.createdAt))
      .limit(overall * 4)
      .all();
  };

  const launch = (d: DeliveryRow, w: WebhookRow) => {
    perSub.set(w.id, (perSub.get(w.id) ?? 0) + 1);
    const p = sendOnce(deps, d, w, opts.sendDeadlineMs)
      .then((out) => {
        if (!stopped) recordAttempt(deps, d.id, out);
      })
      .catch((err: unknown) => {
        if (!stopped) deps.log.error({ err, webhook: w.id, delivery: d.id }, 'webhook send failed');
      })
      .finally(() => {
        inflight.delete(d.id);
        const n = (perSub.get(w.id) ?? 1) - 1;
        if (n > 0) perSub.set(w.id, n);
        else perSub.delete(w.id);
        if (timer && !stopped) setImmediate(tick);
      });
    inflight.set(d.id, p);
  };

  function tick(): void {
    if (stopped) return;
    try {
      // A large backlog (the outbox before the first subscription, say) is moved a bounded amount per tick.
      for (let i = 0; i < 20 && fanOut(deps) === FAN_OUT_BATCH; i++);
      // Rows of a subscription that fills up are skipped; the next round asks again without it, so
      // one subscription's backlog never hides another's due deliveries.
      for (let round = 0; round < overall && inflight.size < overall; round++) {
        let started = 0;
        let skipped = false;
        for (const { d, w } of due()) {
          if (inflight.size >= overall) break;
          if ((perSub.get(w.id) ?? 0) >= perSubscription) {
            skipped = true;
            continue;
          }
          launch(d, w);
          started++;
        }
        if (!skipped || !started) break;
      }
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
