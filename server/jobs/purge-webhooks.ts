// Spec §6.5.4, §8.2 (docs/webhooks.md "Delivery log"): deliveries are kept at most 30 days (the
// 100-per-subscription cap is applied as new ones arrive, routers/webhooks/store.ts). A delivery
// still pending (only a paused subscription's can get that old) is kept whatever its age.
import { and, lt, ne } from 'drizzle-orm';
import { webhookDeliveries } from '../../db/schema/index.js';
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../../routers/deps.js';

const DAY = 86_400_000;

export function purgeWebhookDeliveries(deps: Pick<Deps, 'db' | 'clock'>): number {
  const cutoff = deps.clock() - LIMITS.webhookDeliveries.days * DAY;
  return deps.db.delete(webhookDeliveries).where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.status, 'pending'))).run().changes;
}
