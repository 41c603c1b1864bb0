// Backups of DATA_DIR's database (issue 33 item 1; docs/operations.md "Backups"): taken online
// through SQLite's backup API (better-sqlite3 `backup()`), never as a file copy of a live WAL
// database (a copy of cairn.db without its -wal misses recent commits, and one taken mid-write is
// torn). Used by `npm run cli -- backup` (server/cli-backup.ts) and the scheduled backups
// (server/jobs/backup.ts).
//
// The manifest travels beside the backup as `FILE.manifest.json`, not inside it: it carries the
// SHA-256 of the whole database file, which the file cannot hold about itself, and it is readable
// without SQLite (`jq`, a backup script). What it says of the schema is also in the file
// (`__drizzle_migrations`), so `backup verify` compares the two.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

export const MANIFEST_FORMAT = 'cairn-backup';
export const MANIFEST_VERSION = 1;
/** instance_meta's key for the users whose email index a --new-master-key restore left stale (server/cli-reindex.ts). */
export const STALE_EMAIL_INDEX = 'email_index_stale';

export type Manifest = {
  format: typeof MANIFEST_FORMAT;
  formatVersion: number;
  /** package.json's version of the Cairn that took the backup. */
  cairnVersion: string;
  /** The last migration applied to the backed-up database: its tag and drizzle's `when` (ms). */
  schema: { tag: string | null; when: number; migrations: number };
  /** When the backup was taken (ISO 8601, UTC). */
  takenAt: string;
  /** SHA-256 (hex) and size of the backup file. */
  sha256: string;
  bytes: number;
  /** Whether `FILE.master.key` was written beside it (`--with-master-key`). */
  masterKeyIncluded: boolean;
};

export const manifestFile = (file: string) => `${file}.manifest.json`;
export const backupKeyFile = (file: string) => `${file}.master.key`;

const here = path.dirname(fileURLToPath(import.meta.url));

/** package.json's version: one level up from server/ (tsx), two from dist/server/. */
export function cairnVersion(): string {
  for (const up of ['..', '../..']) {
    const file = path.join(here, up, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

type JournalEntry = { tag: string; when: number };

/** The migrations this code knows (db/migrations/meta/_journal.json), oldest first. */
export function knownMigrations(): JournalEntry[] {
  for (const dir of [path.join(here, '..', 'db', 'migrations'), path.join(here, '..', '..', 'db', 'migrations')]) {
    const file = path.join(dir, 'meta', '_journal.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { entries: JournalEntry[] }).entries;
  }
  throw new Error('db/migrations not found');
}

/**
 * The schema a database file is at, from drizzle's own bookkeeping (`__drizzle_migrations`:
 * one row per applied migration, `created_at` = the journal's `when`). `tag` is null when this
 * code does not know that migration (a newer Cairn made it).
 */
export function schemaOf(sqlite: Database.Database): Manifest['schema'] {
  const has = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!has) return { tag: null, when: 0, migrations: 0 };
  const r = sqlite.prepare('SELECT count(*) AS n, max(created_at) AS last FROM __drizzle_migrations').get() as { n: number; last: number | null };
  const when = Number(r.last ?? 0);
  return { tag: knownMigrations().find((m) => m.when === when)?.tag ?? null, when, migrations: r.n };
}

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

function fsyncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  try {
    fsyncFile(dir);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  }
}

/** Writes `data` to `file` atomically: a temporary file beside it, fsync'd, then renamed. */
export function writeAtomic(file: string, data: string | Buffer, mode = 0o600): void {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(tmp, data, { mode, flag: 'wx' });
    fsyncFile(tmp);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  fsyncDir(path.dirname(file));
}

export type BackupOptions = {
  /**
   * Pages copied per step. The CLI reads through its own connection: another connection's write
   * between two steps restarts the copy, so it copies everything in one step (one read
   * transaction: WAL lets the server keep writing meanwhile). The server's scheduled backup
   * shares the writer's connection, whose writes SQLite carries into the copy as it goes, so it
   * steps (default 100 pages) and requests run between steps.
   */
  pagesPerStep?: number;
  now?: () => number;
  /** `--with-master-key`: the key, written beside the backup as `FILE.master.key` (0600). */
  masterKey?: Buffer;
};

/**
 * Takes a consistent copy of `source`'s main database into `file` (which must not exist): the
 * copy goes to a temporary file beside it, is checked (`integrity_check`), fsync'd and renamed;
 * then the manifest is written beside it the same way. A crash leaves a `.tmp-…` file (pruned by
 * the scheduled job) and never a backup without its manifest that looks complete.
 */
export async function takeBackup(source: Database.Database, file: string, opts: BackupOptions = {}): Promise<Manifest> {
  if (existsSync(file)) throw new Error(`${file}: already exists; choose a new name (a backup never overwrites one)`);
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    const step = opts.pagesPerStep;
    await (step ? source.backup(tmp, { progress: () => step }) : source.backup(tmp));
    const copy = new Database(tmp, { fileMustExist: true });
    let schema: Manifest['schema'];
    try {
      // The copy carries the source's WAL flag in its header; a backup is one self-contained file.
      copy.pragma('journal_mode = DELETE');
      schema = schemaOf(copy);
    } finally {
      copy.close();
    }
    const ok = await integrityCheck(tmp);
    if (ok !== 'ok') throw new Error(`the copy failed its integrity check (${ok})`);
    fsyncFile(tmp);
    const sha256 = await sha256File(tmp);
    const bytes = statSync(tmp).size;
    renameSync(tmp, file);
    fsyncDir(path.dirname(file));
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      formatVersion: MANIFEST_VERSION,
      cairnVersion: cairnVersion(),
      schema,
      takenAt: new Date((opts.now ?? Date.now)()).toISOString(),
      sha256,
      bytes,
      masterKeyIncluded: opts.masterKey !== undefined,
    };
    if (opts.masterKey) writeAtomic(backupKeyFile(file), opts.masterKey.toString('hex') + '\n');
    writeAtomic(manifestFile(file), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * `PRAGMA integrity_check` of a closed database file, in a worker thread: it reads every page
 * (seconds on a large file), and the scheduled backup runs inside the server, whose requests must
 * not wait for it.
 */
export function integrityCheck(file: string): Promise<string> {
  const code = `const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.mod);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
try { parentPort.postMessage(String(db.pragma('integrity_check', { simple: true }))); } finally { db.close(); }`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { mod: sqliteModule, file } });
    w.once('message', (m: string) => resolve(m));
    w.once('error', reject);
    w.once('exit', (c) => (c === 0 ? undefined : reject(new Error(`integrity check worker exited with ${c}`))));
  });
}

export type VerifyReport = { ok: boolean; problems: string[]; manifest?: Manifest; keyCheck?: string | undefined };

/**
 * `backup verify`: the manifest is there and of a known format, the file's SHA-256 and size are
 * the manifest's, SQLite's `integrity_check` says ok, and the schema in the file is the
 * manifest's. Opens the file read-only; changes nothing.
 */
export async function verifyBackup(file: string): Promise<VerifyReport> {
  const problems: string[] = [];
  if (!existsSync(file)) return { ok: false, problems: [`${file}: no such file`] };
  let manifest: Manifest | undefined;
  const mf = manifestFile(file);
  if (!existsSync(mf)) problems.push(`${mf}: missing; a backup is the file and its manifest (an interrupted backup leaves no manifest)`);
  else {
    try {
      manifest = JSON.parse(readFileSync(mf, 'utf8')) as Manifest;
      if (manifest.format !== MANIFEST_FORMAT || typeof manifest.sha256 !== 'string') problems.push(`${mf}: not a Cairn backup manifest`);
      else if (manifest.formatVersion > MANIFEST_VERSION) problems.push(`${mf}: manifest format ${manifest.formatVersion} is newer than this Cairn reads (${MANIFEST_VERSION})`);
    } catch (e) {
      problems.push(`${mf}: not valid JSON (${(e as Error).message})`);
      manifest = undefined;
    }
  }
  const sha = await sha256File(file);
  if (manifest && sha !== manifest.sha256) problems.push(`${file}: SHA-256 ${sha} is not the manifest's ${manifest.sha256}: the file was altered or damaged`);
  const bytes = statSync(file).size;
  if (manifest && bytes !== manifest.bytes) problems.push(`${file}: ${bytes} bytes, the manifest says ${manifest.bytes}`);
  let keyCheck: string | undefined;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db.pragma('integrity_check') as { integrity_check: string }[];
      const lines = rows.map((r) => r.integrity_check);
      if (lines.length !== 1 || lines[0] !== 'ok') problems.push(`${file}: integrity_check: ${lines.slice(0, 5).join('; ')}${lines.length > 5 ? ` (and ${lines.length - 5} more)` : ''}`);
      const schema = schemaOf(db);
      if (manifest && (schema.when !== manifest.schema?.when || schema.migrations !== manifest.schema?.migrations)) {
        problems.push(`${file}: its schema (${schema.migrations} migrations, last ${schema.tag ?? schema.when}) is not the manifest's (${manifest.schema?.migrations}, ${manifest.schema?.tag ?? manifest.schema?.when})`);
      }
      const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'instance_meta'").get();
      keyCheck = meta ? (db.prepare("SELECT value FROM instance_meta WHERE key = 'master_key_check'").get() as { value: string } | undefined)?.value : undefined;
    } finally {
      db.close();
    }
  } catch (e) {
    problems.push(`${file}: cannot be read as a SQLite database (${(e as { code?: string }).code ?? ''} ${(e as Error).message})`.trim());
  }
  return { ok: problems.length === 0, problems, ...(manifest ? { manifest } : {}), keyCheck };
}

/**
 * Whether a process holds `dbFile` open (a running server, or the CLI): every WAL connection keeps
 * a shared lock on the database file for as long as it is open, so an exclusive lock cannot be
 * had while one exists (and can as soon as it exits, even after a crash: the OS drops its locks,
 * whereas a leftover -shm or a pid file would say "running" for a dead server).
 */
export function inUse(dbFile: string): boolean {
  if (!existsSync(dbFile)) return false;
  const db = new Database(dbFile, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (e) {
    if ((e as { code?: string }).code === 'SQLITE_BUSY' || (e as { code?: string }).code === 'SQLITE_LOCKED') return true;
    throw e;
  } finally {
    db.close();
  }
}
