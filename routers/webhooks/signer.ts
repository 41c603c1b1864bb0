// Spec §6.3–6.4 (docs/webhooks.md "Verifying"): `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`,
// each v1 the hex HMAC-SHA256 of `<t>.<raw body>` keyed with a secret string exactly as shown to
// the user (the `whsec_` prefix included). Every attempt signs afresh with its own `t`.
import { createHmac } from 'node:crypto';

export function signatureOf(secret: string, t: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex');
}

/** The header value for the given secrets (the current one first, then a rotated-out one). */
export function signatureHeader(secrets: string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${signatureOf(s, t, body)}`)].join(',');
}
