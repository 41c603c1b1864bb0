// Opening the one SQLite file: WAL, foreign keys, a busy timeout, and the committed drizzle-kit
// migrations applied at start (DECISIONS §1).
import { existsSync, mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema/index.js';
import { constantTimeEqual } from '../core/crypto/secrets.js';

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

export type OpenOptions = {
  /**
   * DECISIONS §1 `CAIRN_DURABILITY`. `full` (default): synchronous=FULL, every commit is fsync'd
   * before its 2xx, so an acknowledged write (its events, its stored idempotent answer) survives
   * power loss. `relaxed`: synchronous=NORMAL, WAL is synced only at checkpoints; faster, and the
   * last commits can vanish on power loss or an OS crash (never on a process crash).
   */
  durability?: 'full' | 'relaxed';
  /**
   * Issue 28 item 8: the master key's check (core/crypto/master-key.ts masterKeyCheck). Recorded
   * in instance_meta when the database has none (a new one, or one made before checks were kept);
   * when it holds another, the database is closed and opening fails. The start compares first
   * (server/startup.ts, before anything is created or migrated); this catches a race with another
   * process that recorded a check in between.
   */
  keyCheck?: string;
};

/** instance_meta's key for the master key check. */
export const KEY_CHECK_META = 'master_key_check';

export type DbState = {
  /** The master key check the database keeps, if any. */
  keyCheck: string | undefined;
  /** Whether it holds any account (a database made before key checks, with data in it). */
  hasAccounts: boolean;
};

/**
 * What the start must know of an existing database before it creates or migrates anything: its
 * key check and whether it has accounts. Opens the file (which must exist) without migrating or
 * writing; closing it removes the -wal and -shm files the open made, so the file is unchanged.
 */
export function inspectDb(file: string): DbState {
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    const tables = new Set((sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    const keyCheck = tables.has('instance_meta')
      ? (sqlite.prepare('SELECT value FROM instance_meta WHERE key = ?').get(KEY_CHECK_META) as { value: string } | undefined)?.value
      : undefined;
    const hasAccounts = tables.has('users') && sqlite.prepare('SELECT 1 FROM users LIMIT 1').get() !== undefined;
    return { keyCheck, hasAccounts };
  } finally {
    sqlite.close();
  }
}

/** Pages written to the WAL between automatic checkpoints (4 KiB pages: about 40 MiB). */
export const WAL_CHECKPOINT_PAGES = 10_000;
/** Bytes the WAL file is truncated to after a checkpoint, when it grew beyond them. */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

export function openDb(file: string, opts: OpenOptions = {}): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const sqlite = new Database(file);
  cacheStatements(sqlite);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.durability === 'relaxed' ? 'NORMAL' : 'FULL'}`);
  // docs/security.md "What deletion guarantees": freed pages are zeroed, so a deleted credential's
  // wrapped key or a deleted note's ciphertext does not stay in the file's free pages.
  sqlite.pragma('secure_delete = ON');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // A checkpoint every WAL_CHECKPOINT_PAGES pages instead of SQLite's 1,000: a write's hot pages
  // (index interior pages, the sealed index's delta chunks, the outbox's tail) are copied into the
  // main file once per checkpoint, so fewer checkpoints copy fewer pages per write; reads are not
  // measurably slower with the longer WAL (docs/performance.md "Checkpoints"). The WAL file is
  // cut back to WAL_SIZE_LIMIT after a checkpoint when one large transaction grew it past that.
  sqlite.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  // Temporary storage (statement journals, spilled sorts) in files, as SQLite's build default: a
  // write that touches many rows does not hold a copy of every page it changed in memory. The
  // bounded writes of the request path switch to memory for their transaction (smallWrites).
  sqlite.pragma('temp_store = FILE');
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: migrationsFolder() });
  if (opts.keyCheck !== undefined) {
    sqlite.prepare('INSERT OR IGNORE INTO instance_meta (key, value) VALUES (?, ?)').run(KEY_CHECK_META, opts.keyCheck);
    const kept = (sqlite.prepare('SELECT value FROM instance_meta WHERE key = ?').get(KEY_CHECK_META) as { value: string }).value;
    if (!constantTimeEqual(Buffer.from(kept), Buffer.from(opts.keyCheck))) {
      sqlite.close();
      throw new Error(`${file}: this database was made with another master key`);
    }
  }
  // Planner statistics: without them SQLite picks poor indexes as accounts grow (e.g. scanning
  // every tag link of a user per to-do; docs/performance.md). optimize=0x10002 at open is
  // SQLite's advice for long-lived connections; analysis_limit bounds its cost on big files.
  sqlite.pragma('analysis_limit = 1000');
  sqlite.pragma('optimize = 0x10002');
  return db;
}

const TEMP_STORE = new WeakMap<Database.Database, { memory: Database.Statement; file: Database.Statement }>();

/**
 * Runs `tx` (which opens and commits one transaction) with SQLite's temporary storage in memory,
 * then puts it back to files. For writes whose size does not grow with the account (one to-do,
 * one note…): each runs in a savepoint (routers/middleware/atomic.ts), so SQLite copies every page
 * it changes into a sub-journal, which past 64 KiB goes to a temporary file that is created,
 * written and unlinked for that transaction. A create changes ~20 pages; at 40,000 to-dos the file
 * cost ~45 µs of a ~415 µs served create (docs/performance.md "Sub-journals"). The setting is read
 * when the transaction begins, so it must change outside one; inside one, `tx` just runs.
 */
export function smallWrites<T>(sqlite: Database.Database, tx: () => T): T {
  if (sqlite.inTransaction) return tx();
  let s = TEMP_STORE.get(sqlite);
  if (!s) TEMP_STORE.set(sqlite, (s = { memory: sqlite.prepare('PRAGMA temp_store = MEMORY'), file: sqlite.prepare('PRAGMA temp_store = FILE') }));
  s.memory.run();
  try {
    return tx();
  } finally {
    s.file.run();
  }
}

const INSTANCE_IDS = new WeakMap<object, string>();

/**
 * This installation's id (DECISIONS §2): generated on first use and kept in the database, so it
 * follows the data (a backup restored elsewhere is the same instance), not PUBLIC_URL or the port.
 */
export function instanceId(db: Db): string {
  let id = INSTANCE_IDS.get(db);
  if (!id) {
    const sqlite = db.$client;
    sqlite.prepare("INSERT OR IGNORE INTO instance_meta (key, value) VALUES ('instance_id', ?)").run(randomUUID());
    id = (sqlite.prepare("SELECT value FROM instance_meta WHERE key = 'instance_id'").get() as { value: string }).value;
    INSTANCE_IDS.set(db, id);
  }
  return id;
}

/**
 * Empties the WAL into the main file and truncates it to zero bytes, so page images of rows just
 * deleted (a revoked credential's wrapped key) do not linger in the -wal file (issue 11).
 */
export function flushDeleted(db: Db): void {
  db.$client.pragma('wal_checkpoint(TRUNCATE)');
}

export function closeDb(db: Db): void {
  const sqlite = db.$client;
  if (sqlite.open) {
    sqlite.pragma('optimize');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    sqlite.close();
  }
}
