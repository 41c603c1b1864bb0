import { randomFillSync, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { LIMITS } from './config.js';

/** Spec §2 rule 1: an UPPERCASE UUID, 8-4-4-4-12 hex digits A-F. */
export const UUID_UPPER = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;

export function newId(): string {
  return randomUUID().toUpperCase();
}

// Opaque ids that are not secrets (request and event ids) are cut from a pooled buffer of CSPRNG
// bytes: one randomFillSync per few hundred ids instead of a randomBytes call on every request.
const pool = Buffer.alloc(8192);
let poolAt = pool.length;

function randomSlice(n: number): { buf: Buffer; start: number; end: number } {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const start = poolAt;
  poolAt += n;
  return { buf: pool, start, end: poolAt };
}

/** `req_` + 12 random bytes (base64url): the X-Request-Id of a response. */
export function newRequestId(): string {
  const r = randomSlice(12);
  return 'req_' + r.buf.toString('base64url', r.start, r.end);
}

/** `evt_` + 16 random bytes (hex): an event envelope id (spec §6.1). */
export function newEventId(): string {
  const r = randomSlice(16);
  return 'evt_' + r.buf.toString('hex', r.start, r.end);
}

export const ClientId = z
  .string()
  .max(LIMITS.idMax)
  .regex(UUID_UPPER, 'must be an UPPERCASE UUID (8-4-4-4-12 hex digits, A-F)');

/** Any id in a path or reference: at most 64 characters. */
export const IdRef = z.string().min(1).max(LIMITS.idMax);
