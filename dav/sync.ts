// Sync tokens (RFC 6578, issue 30 item 7; docs/caldav.md "Sync tokens"). A token names a sealed
// snapshot of one collection's membership: each member's to-do id, ETag and resource name. With a
// token, sync-collection diffs the collection as it is now (plaintext relations and ETags: no to-do
// is opened) against the snapshot: a new or changed ETag is a change, a member gone (trashed,
// deleted, moved out: through any door) is a removal, answered 404 with the href the snapshot
// remembers. So no model has to record tombstones. A new snapshot is stored only when the
// membership changed (otherwise the same token comes back); the newest
// LIMITS.dav.snapshotsPerCollection per collection are kept, none older than
// CAIRN_DAV_SYNC_RETENTION_DAYS (90). An unknown, pruned or expired token is 403
// `<D:valid-sync-token/>` and the client syncs from scratch.
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { runWrite } from '../routers/middleware/atomic.js';
import { LIMITS } from '../core/config.js';
import { newId } from '../core/ids.js';
import { openJson, rowAad, sealJson } from '../core/crypto/seal.js';
import { membershipDigest, type Member } from './store.js';

export const TOKEN_PREFIX = 'urn:cairn:sync:';
const DAY = 86_400_000;

type Packed = [id: string, etag: string, name: string][];

const aad = (userId: string, id: string) => rowAad(userId, 'dav_sync_snapshots', id);

function retentionMs(deps: Deps): number {
  return (deps.config.davSyncRetentionDays ?? 90) * DAY;
}

/**
 * The token of the collection's current membership, storing a snapshot when it changed. `members`
 * may hold the to-dos only (their digest decides); `full` then gives the whole membership, with
 * subtasks, for a new snapshot.
 */
export function currentToken(deps: Deps, p: Principal, collection: string, members: readonly Member[], full?: () => readonly Member[]): string {
  const digest = membershipDigest(members);
  const sqlite = deps.db.$client;
  const latest = sqlite
    .prepare<[string, string], { id: string; digest: string }>('SELECT id, digest FROM dav_sync_snapshots WHERE user_id = ? AND collection = ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
    .get(p.userId, collection);
  if (latest && latest.digest === digest) return TOKEN_PREFIX + latest.id;
  return storeSnapshot(deps, p, collection, digest, full ? full() : members);
}

function storeSnapshot(deps: Deps, p: Principal, collection: string, digest: string, members: readonly Member[]): string {
  const sqlite = deps.db.$client;
  const id = newId();
  const packed: Packed = members.map((m) => [m.id, m.etag, m.name]);
  runWrite({ deps, principal: p, http: { headers: {} } }, () => {
    const now = deps.clock();
    sqlite
      .prepare('INSERT INTO dav_sync_snapshots (id, user_id, collection, digest, sealed, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, p.userId, collection, digest, sealJson(p.dek, aad(p.userId, id), packed), now);
    sqlite
      .prepare(
        `DELETE FROM dav_sync_snapshots WHERE user_id = ? AND collection = ? AND id NOT IN (
           SELECT id FROM dav_sync_snapshots WHERE user_id = ? AND collection = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
      )
      .run(p.userId, collection, p.userId, collection, LIMITS.dav.snapshotsPerCollection);
    sqlite.prepare('DELETE FROM dav_sync_snapshots WHERE user_id = ? AND created_at < ?').run(p.userId, now - retentionMs(deps));
  });
  return TOKEN_PREFIX + id;
}

/** The membership a token names, or null when it is unknown, pruned or older than the retention. */
export function snapshotOf(deps: Deps, p: Principal, collection: string, token: string): Member[] | null {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const id = token.slice(TOKEN_PREFIX.length);
  const row = deps.db.$client
    .prepare<[string, string, string], { sealed: Buffer; createdAt: number }>('SELECT sealed, created_at AS createdAt FROM dav_sync_snapshots WHERE id = ? AND user_id = ? AND collection = ?')
    .get(id, p.userId, collection);
  if (!row || row.createdAt < deps.clock() - retentionMs(deps)) return null;
  // A subtask's member id is `<to-do id>/<item id>` (dav/store.ts childrenOf).
  return openJson<Packed>(p.dek, aad(p.userId, id), row.sealed).map(([mid, etag, name]) => {
    const slash = mid.indexOf('/');
    return slash < 0 ? { id: mid, etag, name } : { id: mid, etag, name, child: { todoId: mid.slice(0, slash), itemId: mid.slice(slash + 1), title: '', done: false, uid: '', parentUid: '' } };
  });
}

/**
 * A token for a truncated sync's intermediate state (the old membership with the answered changes
 * applied), always stored: its to-dos may match the current ones while its subtasks do not yet.
 */
export function tokenFor(deps: Deps, p: Principal, collection: string, members: readonly Member[]): string {
  return storeSnapshot(deps, p, collection, `partial:${membershipDigest(members)}`, members);
}
