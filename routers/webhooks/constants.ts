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
/** Sends at once, overall and per subscription (a hanging receiver holds only its own slots). */
export const CONCURRENCY_OVERALL = 8;
export const CONCURRENCY_PER_SUBSCRIPTION = 2;
/** Subscriptions per user (each event fans out to at most this many deliveries). */
export const MAX_SUBSCRIPTIONS = 25;

export function retryDelay(failures: number): number {
  return RETRY_DELAYS_MS[failures - 1] ?? RETRY_EVERY_MS;
}
