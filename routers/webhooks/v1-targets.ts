// Webhook targets still in sealed format v1 (issue 29; docs/sealed-format.md). A target is sealed
// under the master key's unattended key, not the user's data key, so a key rotation has no key
// reason to touch it; it re-seals the account's v1 targets as v2 anyway, so that a rotation leaves
// no v1 value of the account behind. `cairn reseal` does the same one target at a time
// (routers/auth/reseal.ts). Synchronous: runs inside the caller's transaction.
import type { Deps } from '../deps.js';
import { sealedVersion } from '../../core/crypto/seal.js';
import { openTarget, sealTarget } from './store.js';

/**
 * Re-seals the target of webhook `id` as v2 when it is v1; 'skipped' when it is gone or not v1.
 * Throws SealError when it does not open.
 */
export function resealV1Target(deps: Pick<Deps, 'db' | 'keys'>, userId: string, id: string): 'done' | 'skipped' {
  const sqlite = deps.db.$client;
  const row = sqlite.prepare('SELECT id, user_id AS userId, sealed_target AS sealedTarget FROM webhooks WHERE id = ? AND user_id = ?').get(id, userId) as
    | { id: string; userId: string; sealedTarget: Buffer }
    | undefined;
  if (!row || sealedVersion(row.sealedTarget) !== 1) return 'skipped';
  sqlite.prepare('UPDATE webhooks SET sealed_target = ? WHERE id = ? AND user_id = ?').run(sealTarget(deps, userId, id, openTarget(deps, row)), id, userId);
  return 'done';
}

/** Every v1 target of the account, re-sealed as v2 (key rotation). */
export function resealV1Targets(deps: Pick<Deps, 'db' | 'keys'>, userId: string): number {
  const ids = deps.db.$client.prepare("SELECT id FROM webhooks WHERE user_id = ? AND substr(sealed_target, 1, 1) = x'01'").pluck().all(userId) as string[];
  let n = 0;
  for (const id of ids) if (resealV1Target(deps, userId, id) === 'done') n++;
  return n;
}
