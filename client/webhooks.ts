// `cairn/webhooks` (docs/webhooks.md "Verifying"): checks a Cairn webhook delivery in a Node
// receiver. Spec §6.4: `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each v1 the
// hex HMAC-SHA256 of `<t>.<raw body>` keyed with the secret string exactly as shown (`whsec_…`
// included); any v1 matching any given secret is enough; `t` more than 300 s from now is refused.
// Its declarations name no Node type, so a project without @types/node can import it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Request headers as Node gives them (lower-case keys) or a Fetch `Headers`. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export type WebhookVerification =
  | { valid: true; eventId: string; eventType: string; timestamp: number }
  | { valid: false; reason: 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'no_matching_signature' };

/** Spec §6.4.3: receivers refuse a `t` more than 300 seconds from their clock. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const v = rec[name] ?? Object.entries(rec).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Verifies one delivery. `secrets`: the current secret, and during a rotation's 24 hours the
 * previous one too. `rawBody`: the bytes exactly as received (never a re-serialised JSON).
 * `now`: milliseconds since the epoch (default `Date.now()`).
 */
export function verifyWebhook(secrets: string | readonly string[], headers: WebhookHeaders, rawBody: string | Uint8Array, now: number = Date.now()): WebhookVerification {
  const sig = header(headers, 'x-service-signature');
  if (!sig) return { valid: false, reason: 'missing_signature' };
  let t: number | null = null;
  const given: Uint8Array[] = [];
  for (const part of sig.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return { valid: false, reason: 'malformed_signature' };
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') {
      if (t !== null || !/^\d{1,12}$/.test(v)) return { valid: false, reason: 'malformed_signature' };
      t = Number(v);
    } else if (k === 'v1') {
      if (/^[0-9a-f]{64}$/.test(v)) given.push(Uint8Array.from(Buffer.from(v, 'hex')));
    }
  }
  if (t === null || !given.length) return { valid: false, reason: 'malformed_signature' };
  if (Math.abs(now / 1000 - t) > WEBHOOK_TOLERANCE_SECONDS) return { valid: false, reason: 'timestamp_out_of_tolerance' };
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  let match = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const want = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`, 'utf8').update(body).digest();
    // Every candidate is compared (constant time each), so timing does not tell which matched.
    for (const g of given) if (timingSafeEqual(want, g)) match = true;
  }
  if (!match) return { valid: false, reason: 'no_matching_signature' };
  return { valid: true, eventId: header(headers, 'x-service-event-id') ?? '', eventType: header(headers, 'x-service-event') ?? '', timestamp: t };
}
