// docs/webhooks.md "Verifying": `verifyWebhook` (cairn/webhooks) against vectors computed by hand
// with `openssl dgst -sha256 -hmac <secret>` over `<t>.<raw body>` (spec §6.4), and our signer
// against the same vectors.
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks.js';
import { signatureHeader } from '../../routers/webhooks/signer.js';

const NEW = 'whsec_test_secret_one_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const OLD = 'whsec_old_secret_two_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const T = 1700000000;
const BODY = '{"id":"evt_0123","type":"todo.created","occurredAt":"2023-11-14T22:13:20.000Z","data":{"object":"todo","id":"A","sub":"U"}}';
// printf '%s' "1700000000.$BODY" | openssl dgst -sha256 -hmac "$NEW"
const V_NEW = 'bdb26ada14a8e77d6ecc6503768912dc5e3b6aa34db0e02a74ffa248db57493e';
const V_OLD = '9c3aa9d02de3cd0551a648fa6fb0a5596ea97290f046b3c54d2026fda482b1f5';
// printf '%s' '1700000000.héllo' | openssl dgst -sha256 -hmac "$NEW" (UTF-8 bytes)
const V_UTF8 = 'ec1530bcda58c824206078e3c53f2dca91e67ec5e6d1c03dc8cdee211efa47f3';
const NOW = T * 1000;

const headers = (sig: string) => ({ 'x-service-signature': sig, 'x-service-event-id': 'evt_0123', 'x-service-event': 'todo.created' });

describe('verifyWebhook', () => {
  it('accepts the hand-computed vector, from a string or the raw bytes, with Node or Fetch headers', () => {
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_NEW}`), BODY, NOW)).toEqual({ valid: true, eventId: 'evt_0123', eventType: 'todo.created', timestamp: T });
    expect(verifyWebhook([NEW], headers(`t=${T},v1=${V_NEW}`), new TextEncoder().encode(BODY), NOW).valid).toBe(true);
    expect(verifyWebhook(NEW, new Headers(headers(`t=${T},v1=${V_NEW}`)), BODY, NOW).valid).toBe(true);
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_UTF8}`), Buffer.from('héllo', 'utf8'), NOW).valid).toBe(true);
  });

  it('during a rotation either secret matches either v1; after it only the new one', () => {
    const both = headers(`t=${T},v1=${V_NEW},v1=${V_OLD}`);
    expect(verifyWebhook([NEW, OLD], both, BODY, NOW).valid).toBe(true);
    expect(verifyWebhook(NEW, both, BODY, NOW).valid).toBe(true);
    expect(verifyWebhook(OLD, both, BODY, NOW).valid).toBe(true);
    expect(verifyWebhook(OLD, headers(`t=${T},v1=${V_NEW}`), BODY, NOW)).toEqual({ valid: false, reason: 'no_matching_signature' });
  });

  it('refuses a changed body, a changed t, a wrong secret and a t more than 300 s away', () => {
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_NEW}`), BODY.replace('"A"', '"B"'), NOW).valid).toBe(false);
    expect(verifyWebhook(NEW, headers(`t=${T + 1},v1=${V_NEW}`), BODY, NOW).valid).toBe(false);
    expect(verifyWebhook('whsec_other', headers(`t=${T},v1=${V_NEW}`), BODY, NOW).valid).toBe(false);
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_NEW}`), BODY, NOW + 300_000).valid).toBe(true);
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_NEW}`), BODY, NOW + 301_000)).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyWebhook(NEW, headers(`t=${T},v1=${V_NEW}`), BODY, NOW - 301_000)).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
  });

  it('refuses missing and malformed headers', () => {
    expect(verifyWebhook(NEW, {}, BODY, NOW)).toEqual({ valid: false, reason: 'missing_signature' });
    for (const bad of [`v1=${V_NEW}`, `t=abc,v1=${V_NEW}`, `t=${T}`, `t=${T},v1=zz`, `t=${T},t=${T},v1=${V_NEW}`, 'garbage']) {
      expect(verifyWebhook(NEW, headers(bad), BODY, NOW).valid, bad).toBe(false);
    }
  });

  it('the server signer produces exactly these header values', () => {
    expect(signatureHeader([NEW], T, BODY)).toBe(`t=${T},v1=${V_NEW}`);
    expect(signatureHeader([NEW, OLD], T, BODY)).toBe(`t=${T},v1=${V_NEW},v1=${V_OLD}`);
  });
});
