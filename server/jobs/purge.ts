// Purges of expiring rows, callable directly (tests) and run by the scheduler (scheduler.ts).
import { lte } from 'drizzle-orm';
import { idempotencyKeys } from '../../db/schema/index.js';
import type { Deps } from '../../routers/deps.js';

/** Spec §4.2 (docs/api.md "Idempotency"): stored answers live 24 hours after the first request. */
export function purgeIdempotencyKeys(deps: Deps): number {
  return deps.db.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, deps.clock())).run().changes;
}
