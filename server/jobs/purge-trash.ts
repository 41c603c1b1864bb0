// Spec §3, §8.2: trashed items are purged after 30 days. Runs without a user present: deleting
// needs no data key, so the deletions get a key-less principal carrying only the user id (any
// attempt to open content with its empty key would throw, never read).
import type { Deps } from '../../routers/deps.js';
import type { Principal } from '../../routers/auth/credentials.js';
import { LIMITS } from '../../core/config.js';
import { flushDeleted } from '../../db/client.js';
import { entriesTrashedBefore, removeEntries } from '../../routers/trash/model.js';

const DAY = 86_400_000;

function keylessPrincipal(userId: string): Principal {
  return { userId, credentialId: 'purge', kind: 'session', granted: [], scopes: new Set(), dek: Buffer.alloc(0), expiresAt: 0 };
}

/** Deletes every note, note folder, to-do and container trashed at least 30 days ago (with contents). */
export function purgeTrash(deps: Deps): number {
  const now = deps.clock();
  const entries = entriesTrashedBefore(deps.db, now - LIMITS.trashPurgeDays * DAY);
  const byUser = new Map<string, typeof entries>();
  for (const e of entries) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e]);
  for (const [userId, list] of byUser) {
    deps.db.transaction((tx) => removeEntries(deps, tx, keylessPrincipal(userId), list, now));
  }
  // Purged content leaves the WAL too (docs/security.md "What deletion guarantees").
  if (entries.length) flushDeleted(deps.db);
  return entries.length;
}
