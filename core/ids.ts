import { randomUUID } from 'node:crypto';
import { randomSlice } from './crypto/random-pool.js';
import { z } from 'zod';
import { LIMITS } from './config.js';

/** Spec §2 rule 1: an UPPERCASE UUID, 8-4-4-4-12 hex digits A-F. */
export const UUID_UPPER = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;

export function newId(): string {
  return randomUUID().toUpperCase();
}

/** `req_` + 12 random bytes (base64url): the X-Request-Id of a response. */
export function newRequestId(): string {
  return 'req_' + randomSlice(12).toString('base64url');
}

/** `evt_` + 16 random bytes (hex): an event envelope id (spec §6.1). */
export function newEventId(): string {
  return 'evt_' + randomSlice(16).toString('hex');
}

export const ClientId = z
  .string()
  .max(LIMITS.idMax)
  .regex(UUID_UPPER, 'must be an UPPERCASE UUID (8-4-4-4-12 hex digits, A-F)');

/** Any id in a path or reference: at most 64 characters. */
export const IdRef = z.string().min(1).max(LIMITS.idMax);
