// Containers in the trash (DECISIONS §6): only the trashed container gets `trashedAt`, yet its
// contents (subcontainers, headings, to-dos, notes) leave live views with it. "Dead" is therefore
// a trashed container or anything below one, computed with a recursive query.
import type Database from 'better-sqlite3';
import { sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';

/** Ids of the user's trashed containers and every container below them (`userId` may be a placeholder of a prepared query). */
export function deadContainerIds(userId: string | Placeholder): SQL {
  return sql`WITH RECURSIVE dead(id) AS (
    SELECT id FROM containers WHERE user_id = ${userId} AND trashed_at IS NOT NULL
    UNION SELECT c.id FROM containers c JOIN dead d ON c.parent_id = d.id
  ) SELECT id FROM dead`;
}

/** True when the row's container column is null or names a live container. */
export function inLiveContainer(col: SQLiteColumn, userId: string | Placeholder): SQL {
  return sql`(${col} IS NULL OR ${col} NOT IN (${deadContainerIds(userId)}))`;
}

/** True when the row's container column names a trashed container or one inside it. */
export function inDeadContainer(col: SQLiteColumn, userId: string): SQL {
  return sql`(${col} IS NOT NULL AND ${col} IN (${deadContainerIds(userId)}))`;
}

/** The probe of `hasTrashedContainer` (its plan is checked in test/architecture/read-path-plans.test.ts). */
export const TRASHED_PROBE_SQL = 'SELECT 1 FROM containers WHERE user_id = ? AND trashed_at IS NOT NULL LIMIT 1';

/**
 * Whether the user has any trashed container. With none, no container is dead (dead = trashed or
 * below a trashed one), so a live-view query may leave out the `inLiveContainer` clause (issue 12:
 * that clause's recursive query runs per query). One range of the user's containers (an index
 * led by user_id), stopping at the first trashed row.
 */
export function hasTrashedContainer(db: Db, userId: string): boolean {
  return prepared(db, 'containers.trashedProbe', (d) => d.$client.prepare<[string], unknown>(TRASHED_PROBE_SQL)).get(userId) !== undefined;
}

/** Whether the container or one of its ancestors is trashed. */
export function containerIsDead(sqlite: Database.Database, userId: string, id: string): boolean {
  const row = sqlite
    .prepare(
      `WITH RECURSIVE up(id, parent_id, trashed_at) AS (
         SELECT id, parent_id, trashed_at FROM containers WHERE user_id = ? AND id = ?
         UNION ALL SELECT c.id, c.parent_id, c.trashed_at FROM containers c JOIN up ON c.id = up.parent_id
       ) SELECT count(*) AS n FROM up WHERE trashed_at IS NOT NULL`,
    )
    .get(userId, id) as { n: number };
  return row.n > 0;
}

/** The container and every container below it (ids), the container first. */
export function containerSubtree(sqlite: Database.Database, userId: string, id: string): string[] {
  const rows = sqlite
    .prepare(
      `WITH RECURSIVE down(id, depth) AS (
         SELECT id, 0 FROM containers WHERE user_id = ? AND id = ?
         UNION ALL SELECT c.id, d.depth + 1 FROM containers c JOIN down d ON c.parent_id = d.id
       ) SELECT id FROM down ORDER BY depth`,
    )
    .all(userId, id) as { id: string }[];
  return rows.map((r) => r.id);
}
