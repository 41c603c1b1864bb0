// Issue 11.3: expired credentials are deleted, not just refused. An expired session or token
// keeps its wrapped data key in its row; with the old token and a later copy of DATA_DIR, that
// wrap would still open the data key. The purge deletes every expired credential (sessions,
// personal tokens) with its wrap, and revoked personal tokens once they no longer count toward
// today's creation limit (their wrap is already gone). OAuth (issue 17): wraps of expired or
// rotated-past-the-grace tokens and of expired authorization codes are dropped; token, grant and
// request rows that hold nothing usable are deleted after 30 days (until then a client is told
// `grant_revoked` / `grant_expired` rather than a bare `unauthorized`). The WAL is then truncated so
// the deleted pages leave the -wal file too (secure_delete zeroes them in the file).
import { and, eq, isNotNull, lt, lte, or } from 'drizzle-orm';
import { credentials, oauthGrants, oauthRequests, oauthTokens } from '../../db/schema/index.js';
import { flushDeleted } from '../../db/client.js';
import type { Deps } from '../../routers/deps.js';
import { OAUTH_TTL } from '../../routers/oauth/tokens.js';

const DAY = 86_400_000;
/** How long rows without key material stay to answer grant_revoked / grant_expired. */
export const OAUTH_TOMBSTONE_MS = 30 * DAY;

export function purgeCredentials(deps: Deps): number {
  const now = deps.clock();
  const dayStart = Math.floor(now / DAY) * DAY;
  const old = now - OAUTH_TOMBSTONE_MS;
  const n = deps.db.transaction((tx) => {
    let n = tx
      .delete(credentials)
      .where(or(lte(credentials.expiresAt, now), and(eq(credentials.kind, 'pat'), isNotNull(credentials.revokedAt), lt(credentials.createdAt, dayStart))))
      .run().changes;
    // OAuth key material that can no longer be used.
    n += tx
      .update(oauthTokens)
      .set({ wrappedKey: null })
      .where(and(isNotNull(oauthTokens.wrappedKey), or(lte(oauthTokens.expiresAt, now), lte(oauthTokens.rotatedAt, now - OAUTH_TTL.graceMs))))
      .run().changes;
    n += tx
      .update(oauthRequests)
      .set({ wrappedKey: null, sealedCode: null })
      .where(and(or(isNotNull(oauthRequests.wrappedKey), isNotNull(oauthRequests.sealedCode)), or(lte(oauthRequests.codeExpiresAt, now), lte(oauthRequests.expiresAt, now))))
      .run().changes;
    n += tx.delete(oauthRequests).where(lte(oauthRequests.expiresAt, now - OAUTH_TTL.requestMs)).run().changes;
    n += tx.delete(oauthTokens).where(lte(oauthTokens.expiresAt, old)).run().changes;
    n += tx.delete(oauthGrants).where(or(lte(oauthGrants.expiresAt, old), lte(oauthGrants.revokedAt, old))).run().changes;
    return n;
  });
  if (n > 0) flushDeleted(deps.db);
  return n;
}
