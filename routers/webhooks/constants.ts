// Webhook delivery rules in one place (spec §6.5, docs/webhooks.md).
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Spec §6.5.2: after the n-th failed attempt (1-based) the next one is this much later; then every 8 h. */
export const RETRY_DELAYS_MS = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 8 * HOUR] as const;
export const RETRY_EVERY_MS = 8 * HOUR;
/** Spec §6.5.3: three days of continuous failure disable a subscription. */
export const DISABLE_AFTER_MS = 3 * DAY;
/** Spec §4.17: a rotated-out secret keeps signing for 24 hours. */
export const ROTATION_OVERLAP_MS = DAY;
/** Spec §6.5.1: 10-second timeout; at most 64 KB of the answer is read, then discarded. */
export const SEND_DEADLINE_MS = 10_000;
export const SEND_MAX_READ_BYTES = 64 * 1024;
/**
 * Sends at once: overall, per user, per subscription (issue 28, docs/webhooks.md "Concurrency and
 * fairness"). A user never holds more than a quarter of the slots, so one account's receivers that
 * hang leave the rest to everyone else; a subscription never holds more than half of its user's, so
 * one of its receivers leaves that user's others going. Sends are waits on sockets, not CPU: 16 at
 * once cost a few file descriptors.
 */
export const CONCURRENCY_OVERALL = 16;
export const CONCURRENCY_PER_USER = 4;
export const CONCURRENCY_PER_SUBSCRIPTION = 2;
/**
 * Issue 28 (docs/webhooks.md "Backlog"): once a subscription has been failing this long (no
 * success since its first failed attempt), it keeps at most MAX_PENDING_WHILE_FAILING pending
 * deliveries; the oldest beyond that are dropped. Below this age a failure is a hiccup, and a
 * healthy receiver's burst (thousands queued at once) is never cut.
 */
export const BACKLOG_CAP_AFTER_MS = MINUTE;
export const MAX_PENDING_WHILE_FAILING = 50;
/**
 * Deliveries the fan-out makes for one user in a dispatcher tick before other users' events behind
 * its own get theirs (counted per batch of 500 events, so a user may pass it by one batch).
 */
export const FAN_OUT_PER_USER_PER_TICK = 2_000;
/** Subscriptions per user (each event fans out to at most this many deliveries). */
export const MAX_SUBSCRIPTIONS = 25;

export function retryDelay(failures: number): number {
  return RETRY_DELAYS_MS[failures - 1] ?? RETRY_EVERY_MS;
}

/**
 * Issue 28 (docs/webhooks.md "Receivers that hang"): after the n-th attempt in a row that timed out,
 * the whole subscription is held this long (the retry steps again: 1 min, 5 min, 30 min, 2 h, 8 h,
 * then 8 h), never past the three days that disable it.
 */
export function timeoutHold(timeouts: number): number {
  return retryDelay(timeouts);
}
