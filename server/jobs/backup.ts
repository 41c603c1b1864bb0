// Scheduled backups (issue 33 item 1; docs/operations.md "Scheduled backups"): with
// CAIRN_BACKUP_DIR set, the server backs its database up into that folder every
// CAIRN_BACKUP_EVERY and keeps the newest CAIRN_BACKUP_KEEP. Each is `cairn-<UTC time>.db` with its
// `.manifest.json` (server/backup.ts takeBackup: SQLite's backup API, written to a temporary file,
// checked, fsync'd and renamed; the manifest renamed last, so a backup with a manifest is whole).
// The master key is never written here: keep it elsewhere (docs/operations.md "The master key").
//
// The copy goes through the server's own connection in steps of 100 pages with requests served
// between them; writes made meanwhile are carried into the copy by SQLite, so it is the database
// as of the last step. Times come from the injected clock.
import { mkdirSync, readdirSync, rmSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../core/config.js';
import type { Deps } from '../../routers/deps.js';
import { manifestFile, takeBackup } from '../backup.js';

const NAME = /^cairn-(\d{8}T\d{6}Z)\.db$/;

/** `cairn-20261126T144500Z.db` for that time. */
export function backupName(ms: number): string {
  return `cairn-${new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.db`;
}

function timeOf(name: string): number {
  const m = NAME.exec(name)![1]!;
  return Date.parse(`${m.slice(0, 4)}-${m.slice(4, 6)}-${m.slice(6, 8)}T${m.slice(9, 11)}:${m.slice(11, 13)}:${m.slice(13, 15)}Z`);
}

/** The backups in `dir` that are whole (their manifest is there), newest first. */
export function completeBackups(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const names = new Set(readdirSync(dir));
  return [...names].filter((n) => NAME.test(n) && names.has(`${n}.manifest.json`)).sort().reverse();
}

/** The job, when CAIRN_BACKUP_DIR is set (a scheduler Job; the type is not imported: no circle). */
export function backupJobs(config: Config): { name: string; everyMs: number; run: (deps: Deps) => Promise<number> }[] {
  if (!config.backup) return [];
  // Checked at least hourly (a setInterval past 2^31 ms, ~24.8 days, would fire every 1 ms); each
  // check backs up only when the newest backup is old enough (scheduledBackup).
  return [{ name: 'backup', everyMs: tickMs(config.backup.everyMs), run: scheduledBackup }];
}

const tickMs = (everyMs: number) => Math.min(everyMs, 3_600_000);

const RUNNING = new WeakSet<object>();

/**
 * One scheduled run: skipped while the newest backup is younger than the interval less half a
 * check (so the check due at the interval takes one, and the run at every start does not add a
 * backup per restart), else takes one, then prunes. Returns how many backups it wrote (0 or 1).
 */
export async function scheduledBackup(deps: Deps): Promise<number> {
  const b = deps.config.backup;
  if (!b || RUNNING.has(deps.db)) return 0;
  RUNNING.add(deps.db);
  try {
    mkdirSync(b.dir, { recursive: true, mode: 0o700 });
    // Left by a run that crashed (this one is the only writer: RUNNING): never a whole backup.
    for (const n of readdirSync(b.dir)) if (/^cairn-.*\.tmp-[0-9a-f]+$/.test(n)) rmSync(path.join(b.dir, n), { force: true });
    const now = deps.clock();
    const newest = completeBackups(b.dir)[0];
    if (newest && now - timeOf(newest) < b.everyMs - tickMs(b.everyMs) / 2) return 0;
    const file = path.join(b.dir, backupName(now));
    if (existsSync(file)) return 0;
    const manifest = await takeBackup(deps.db.$client, file, { now: () => now });
    deps.log.info({ job: 'backup', file, bytes: manifest.bytes, schema: manifest.schema.tag }, 'backup written');
    prune(b.dir, b.keep, deps);
    return 1;
  } finally {
    RUNNING.delete(deps.db);
  }
}

/** Keeps the newest `keep` whole backups; removes older ones, and a torn one older than them. */
function prune(dir: string, keep: number, deps: Deps): void {
  const whole = completeBackups(dir);
  const oldestKept = whole[Math.min(keep, whole.length) - 1];
  for (const n of whole.slice(keep)) {
    rmSync(path.join(dir, n), { force: true });
    rmSync(manifestFile(path.join(dir, n)), { force: true });
    deps.log.info({ job: 'backup', file: path.join(dir, n) }, 'old backup removed');
  }
  // A database file whose manifest never came (a crash between the two renames).
  for (const n of readdirSync(dir)) {
    if (NAME.test(n) && !existsSync(manifestFile(path.join(dir, n))) && oldestKept && n < oldestKept) rmSync(path.join(dir, n), { force: true });
  }
}
