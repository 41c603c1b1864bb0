// Opening the one SQLite file: WAL, foreign keys, a busy timeout, and the committed drizzle-kit
// migrations applied at start (DECISIONS §1).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema/index.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };
/** A transaction handle: the same query API as Db. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

function migrationsFolder(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // Source (db/) and compiled (dist/db/) layouts both find the committed folder.
  for (const candidate of [path.join(here, 'migrations'), path.join(here, '..', '..', 'db', 'migrations')]) {
    if (existsSync(path.join(candidate, 'meta', '_journal.json'))) return candidate;
  }
  throw new Error('db/migrations not found');
}

/**
 * drizzle prepares a new statement for every query it runs; compiling SQL is a measurable share of
 * a request (docs/performance.md). Statements are reused by their SQL text instead. A reused
 * statement is reset to object rows first, so it behaves exactly like a fresh one. Safe because
 * nothing here keeps a statement busy across calls (no iterate()).
 */
function cacheStatements(sqlite: Database.Database, max = 1000): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, Database.Statement>();
  sqlite.prepare = ((source: string) => {
    let stmt = cache.get(source);
    if (stmt) {
      cache.delete(source);
      if (stmt.reader) stmt.raw(false);
    } else {
      stmt = prepare(source);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, stmt);
    return stmt;
  }) as typeof sqlite.prepare;
}

export function openDb(file: string): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  cacheStatements(sqlite);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: migrationsFolder() });
  // Planner statistics: without them SQLite picks poor indexes as accounts grow (e.g. scanning
  // every tag link of a user per to-do; docs/performance.md). optimize=0x10002 at open is
  // SQLite's advice for long-lived connections; analysis_limit bounds its cost on big files.
  sqlite.pragma('analysis_limit = 1000');
  sqlite.pragma('optimize = 0x10002');
  return db;
}

export function closeDb(db: Db): void {
  const sqlite = db.$client;
  if (sqlite.open) {
    sqlite.pragma('optimize');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    sqlite.close();
  }
}
