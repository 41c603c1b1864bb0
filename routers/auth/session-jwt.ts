// Session JWTs on the request path (issue 12: first-party apps present a session on every call).
// Sessions are minted by jose (HS256, header {"alg":"HS256","typ":"JWT"}) and verified by jose's
// `jwtVerify`, which in jose 6 runs on WebCrypto: an asynchronous HMAC job plus the JOSE parsing,
// ~40 µs a request against ~2 µs for one node:crypto HMAC (docs/performance.md "Session
// authentication"). `fastSessionPayload` recognises exactly the tokens this server mints, signed
// and current, and answers their payload; for anything else it answers undefined and jose decides,
// so it can only ever accept a token jose also accepts (test/security/session-jwt.test.ts checks
// that over valid, expired, tampered, foreign and malformed tokens). It never refuses a token.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The protected header of every session this server mints, base64url-encoded as jose encodes it. */
export const SESSION_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' }), 'utf8').toString('base64url');

/**
 * The payload of `token` when it is one of this server's session JWTs: our exact header, a
 * signature (HMAC-SHA256 under `key`, compared in constant time) over its two first parts in
 * canonical base64url, a JSON object payload whose `iss` and `aud` are the expected ones, whose
 * `exp` is a number after `nowMs` (jose's rule with no clock tolerance), with no `nbf` and a
 * numeric or absent `iat`. Otherwise undefined: the caller then asks jose.
 */
export function fastSessionPayload(token: string, key: Buffer, issuer: string, audience: string, nowMs: number): Record<string, unknown> | undefined {
  const h = SESSION_HEADER.length;
  if (token.charCodeAt(h) !== 46 || !token.startsWith(SESSION_HEADER)) return undefined;
  const dot = token.indexOf('.', h + 1);
  if (dot < 0 || token.indexOf('.', dot + 1) >= 0) return undefined;
  const signature = token.slice(dot + 1);
  const expected = createHmac('sha256', key).update(token.slice(0, dot)).digest();
  const presented = Buffer.from(signature, 'base64url');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected) || presented.toString('base64url') !== signature) return undefined;
  const part = token.slice(h + 1, dot);
  const bytes = Buffer.from(part, 'base64url');
  if (bytes.toString('base64url') !== part) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const p = payload as Record<string, unknown>;
  if (p.iss !== issuer || p.aud !== audience) return undefined;
  if (typeof p.exp !== 'number' || !(p.exp > Math.floor(nowMs / 1000))) return undefined;
  if (p.nbf !== undefined || (p.iat !== undefined && typeof p.iat !== 'number')) return undefined;
  return p;
}
