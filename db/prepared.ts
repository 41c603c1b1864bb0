// Hot-path queries built and prepared once per database handle (docs/performance.md: building a
// drizzle query costs ~10x running it). Prepared queries are bound to the one connection, so
// they are also correct inside a transaction on it.
import { sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from './client.js';

const caches = new WeakMap<Db, Map<string, unknown>>();

export function prepared<T>(db: Db, key: string, build: (db: Db) => T): T {
  let m = caches.get(db);
  if (!m) {
    m = new Map();
    caches.set(db, m);
  }
  let q = m.get(key) as T | undefined;
  if (q === undefined) {
    q = build(db);
    m.set(key, q);
  }
  return q;
}

/** `col IN (ids)` with the ids as one JSON array parameter, so the statement prepares once. */
export function inJsonIds(col: SQLiteColumn, placeholder: string): SQL {
  return sql`${col} IN (SELECT value FROM json_each(${sql.placeholder(placeholder)}))`;
}
