// Issue 11.3: expired credentials are deleted, not just refused. An expired session or token
// keeps its wrapped data key in its row; with the old token and a later copy of DATA_DIR, that
// wrap would still open the data key. The purge deletes every expired credential (sessions,
// personal tokens; later OAuth grants and codes) with its wrap, and revoked personal tokens once
// they no longer count toward today's creation limit (their wrap is already gone). The WAL is then
// truncated so the deleted pages leave the -wal file too (secure_delete zeroes them in the file).
import { and, eq, isNotNull, lt, lte, or } from 'drizzle-orm';
import { credentials } from '../../db/schema/index.js';
import { flushDeleted } from '../../db/client.js';
import type { Deps } from '../deps.js';

const DAY = 86_400_000;

export function purgeCredentials(deps: Deps): number {
  const now = deps.clock();
  const dayStart = Math.floor(now / DAY) * DAY;
  const n = deps.db
    .delete(credentials)
    .where(or(lte(credentials.expiresAt, now), and(eq(credentials.kind, 'pat'), isNotNull(credentials.revokedAt), lt(credentials.createdAt, dayStart))))
    .run().changes;
  if (n > 0) flushDeleted(deps.db);
  return n;
}
