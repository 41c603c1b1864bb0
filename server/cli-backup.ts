// `npm run cli -- backup …` and `… restore …` (issue 33 item 1; docs/operations.md "Backups"):
//
//   backup --to FILE [--with-master-key]   an online copy of DATA_DIR/cairn.db (server/backup.ts)
//   backup verify FILE                      integrity_check, the manifest and the SHA-256
//   restore FILE [--new-master-key]         DATA_DIR from a backup, with a server stopped
//   restore reindex --email E               after --new-master-key: makes E's account findable
//
// These run before the CLI opens DATA_DIR through server/startup.ts openData (server/cli.ts),
// which would migrate the database and record a key check: a backup only reads (its own
// connection, read-only), and a restore must not open, let alone migrate, the directory it is
// about to replace. Only `restore reindex` opens DATA_DIR as the other commands do.
import { parseArgs } from 'node:util';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, chmodSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig, type Config } from '../core/config.js';
import { generateMasterKey, masterKeyCheck, masterKeyFile, matchesKeyCheck, parseMasterKey, readMasterKeyFile, writeMasterKeyFile } from '../core/crypto/master-key.js';
import { backupKeyFile, inUse, knownMigrations, STALE_EMAIL_INDEX, takeBackup, verifyBackup } from './backup.js';

export const BACKUP_USAGE = `Backups (docs/operations.md "Backups"):
  backup --to <file> [--with-master-key]   an online, consistent copy of DATA_DIR's database, with
                                           <file>.manifest.json; --with-master-key also writes
                                           <file>.master.key (keep it apart from the backup)
  backup verify <file>                     checks integrity_check, the manifest and the SHA-256
  restore <file> [--new-master-key]        restores DATA_DIR (the server must be stopped); the old
                                           files are kept in DATA_DIR/pre-restore-<time>/
  restore reindex --email <email>          after --new-master-key: makes that account findable
                                           by its email again (asks for its password)`;

class Refusal extends Error {}

type Io = { out: (line: string) => void; err: (line: string) => void; env: NodeJS.ProcessEnv; readPassword?: (prompt: string) => Promise<string> };

const defaultIo = (): Io => ({ out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n'), env: process.env });

/**
 * The commands; `argv` starts with `backup` or `restore`. Prints its own messages and returns the
 * exit code (0 done, 1 refused or failed). `readPassword` is the CLI's (server/cli.ts), for
 * `restore reindex`.
 */
export async function backupCommand(argv: string[], io: Partial<Io> = {}): Promise<number> {
  const o = { ...defaultIo(), ...io };
  // As the server: what this creates (backups, key files, a restored database) is the user's only.
  process.umask(0o077);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        to: { type: 'string' },
        email: { type: 'string' },
        'with-master-key': { type: 'boolean', default: false },
        'new-master-key': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      o.out(BACKUP_USAGE);
      return 0;
    }
    const config = loadConfig(o.env);
    const [cmd, sub, arg] = positionals;
    if (cmd === 'backup' && sub === 'verify' && arg && positionals.length === 3) return await verify(arg, o);
    if (cmd === 'backup' && positionals.length === 1) {
      if (!values.to) throw new Refusal(`--to: missing\n\n${BACKUP_USAGE}`);
      return await backup(config, path.resolve(values.to), values['with-master-key'], o);
    }
    if (cmd === 'restore' && sub === 'reindex' && positionals.length === 2) {
      if (!values.email) throw new Refusal(`--email: missing\n\n${BACKUP_USAGE}`);
      if (!o.readPassword) throw new Refusal('restore reindex: no way to read a password here');
      const { reindexEmail } = await import('./cli-reindex.js');
      return await reindexEmail(config, values.email, o.readPassword, o);
    }
    if (cmd === 'restore' && sub && positionals.length === 2) return await restore(config, path.resolve(sub), values['new-master-key'], o);
    throw new Refusal(`unknown command "${positionals.join(' ')}"\n\n${BACKUP_USAGE}`);
  } catch (e) {
    o.err(e instanceof Refusal ? e.message : `${(e as Error).message}`);
    return 1;
  }
}

async function verify(file: string, o: Io): Promise<number> {
  const r = await verifyBackup(path.resolve(file));
  o.out(JSON.stringify({ ok: r.ok, problems: r.problems, manifest: r.manifest ?? null }, null, 2));
  if (!r.ok) o.err(`${file}: NOT a good backup:\n  ${r.problems.join('\n  ')}`);
  return r.ok ? 0 : 1;
}

/** The key this environment gives (CAIRN_MASTER_KEY, else DATA_DIR/master.key), if any. */
function currentKey(config: Config): { key: Buffer; source: string } | undefined {
  if (config.masterKeyHex) return { key: parseMasterKey(config.masterKeyHex, 'CAIRN_MASTER_KEY'), source: 'CAIRN_MASTER_KEY' };
  const k = readMasterKeyFile(masterKeyFile(config.dataDir));
  return k ? { key: k, source: masterKeyFile(config.dataDir) } : undefined;
}

async function backup(config: Config, file: string, withKey: boolean, o: Io): Promise<number> {
  if (!existsSync(config.dbFile)) throw new Refusal(`${config.dbFile}: no database to back up (DATA_DIR ${config.dataDir})`);
  if (!existsSync(path.dirname(file))) throw new Refusal(`--to ${file}: the folder ${path.dirname(file)} does not exist`);
  // Read-only: the backup never writes to the database, whether a server runs on it or not.
  const source = new Database(config.dbFile, { readonly: true, fileMustExist: true, timeout: 5000 });
  try {
    let key: Buffer | undefined;
    if (withKey) {
      const k = currentKey(config);
      if (!k) throw new Refusal(`--with-master-key: there is no master key here (CAIRN_MASTER_KEY is not set and there is no ${masterKeyFile(config.dataDir)})`);
      const check = (source.prepare("SELECT value FROM instance_meta WHERE key = 'master_key_check'").get() as { value: string } | undefined)?.value;
      if (check !== undefined && !matchesKeyCheck(k.key, check)) throw new Refusal(`--with-master-key: the key in ${k.source} is not the one ${config.dbFile} was made with; nothing was written`);
      key = k.key;
    }
    // One step: the copy is one read transaction of the server's WAL, a consistent snapshot that
    // holds every commit made before it began (server/backup.ts BackupOptions).
    const manifest = await takeBackup(source, file, { pagesPerStep: 0x7fffffff, ...(key ? { masterKey: key } : {}) });
    o.out(JSON.stringify({ file, manifest }, null, 2));
    if (key) {
      o.err(
        `warning: ${backupKeyFile(file)} holds the master key. Anyone with it and the backup can sign sessions, read webhook URLs and secrets and find accounts by email ` +
          '(not read content: that needs a user\'s password or token). Store it apart from the backup, somewhere you trust.',
      );
    } else {
      o.err(`backup written without the master key: keep ${masterKeyFile(config.dataDir)} (or CAIRN_MASTER_KEY) safe elsewhere, or restore with --new-master-key (docs/operations.md "Backups")`);
    }
    return 0;
  } finally {
    source.close();
  }
}

function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * Restores DATA_DIR from `file`. Everything is checked before anything changes: the backup
 * verifies, its schema is one this Cairn knows (no downgrades), no process has DATA_DIR's
 * database open, and a key that opens it is at hand (unless --new-master-key). The files it
 * replaces (cairn.db with its -wal and -shm, master.key) move to DATA_DIR/pre-restore-<time>/.
 */
async function restore(config: Config, file: string, newKey: boolean, o: Io): Promise<number> {
  const report = await verifyBackup(file);
  if (!report.ok || !report.manifest) throw new Refusal(`${file}: not restored, it does not verify:\n  ${report.problems.join('\n  ')}`);
  const m = report.manifest;
  if (m.schema.migrations === 0) throw new Refusal(`${file}: not restored: it holds no Cairn schema (no applied migrations); it is not a backup of a Cairn database`);
  const known = knownMigrations();
  const last = known[known.length - 1]!;
  if (m.schema.when > last.when || (m.schema.when > 0 && m.schema.tag === null)) {
    throw new Refusal(
      `${file}: not restored: it was taken from Cairn ${m.cairnVersion} at schema ${m.schema.tag ?? m.schema.when}, newer than this Cairn knows (${last.tag}). ` +
        'Downgrades are not supported: restore it with that version or a later one.',
    );
  }
  if (inUse(config.dbFile)) {
    throw new Refusal(`${config.dbFile}: not restored: a process has this database open (a running server?). Stop the server first; nothing was changed.`);
  }
  const check = report.keyCheck;
  // Which key the restored data will start with, decided before anything changes.
  let installKey: Buffer | undefined;
  const beside = existsSync(backupKeyFile(file)) ? readMasterKeyFile(backupKeyFile(file)) : undefined;
  const envKey = config.masterKeyHex ? parseMasterKey(config.masterKeyHex, 'CAIRN_MASTER_KEY') : undefined;
  const fileKey = readMasterKeyFile(masterKeyFile(config.dataDir));
  if (newKey) {
    if (envKey) throw new Refusal('--new-master-key: CAIRN_MASTER_KEY is set and would win over the new DATA_DIR/master.key; unset it first (docs/operations.md "The master key")');
    installKey = generateMasterKey();
  } else if (check !== undefined) {
    const ok = (k: Buffer | undefined) => k !== undefined && matchesKeyCheck(k, check);
    if (envKey) {
      if (!ok(envKey)) throw new Refusal(`${file}: not restored: CAIRN_MASTER_KEY is not the key this backup was made with${ok(beside) ? `; ${backupKeyFile(file)} is: unset CAIRN_MASTER_KEY` : ''}. Nothing was changed.`);
    } else if (ok(beside)) {
      if (!ok(fileKey)) installKey = beside;
    } else if (!ok(fileKey)) {
      throw new Refusal(
        `${file}: not restored: no key here is the one this backup was made with (looked at ${backupKeyFile(file)}, CAIRN_MASTER_KEY and ${masterKeyFile(config.dataDir)}). ` +
          `Put that master.key beside the backup as ${path.basename(backupKeyFile(file))}, or set CAIRN_MASTER_KEY to it; without it, restore with --new-master-key ` +
          '(sessions end, webhooks are disabled, and each account needs `restore reindex` before its email signs in: docs/operations.md "Restoring without the master key"). Nothing was changed.',
      );
    }
  } else if (beside && !envKey && !(fileKey && fileKey.equals(beside))) {
    installKey = beside;
  }

  // Checks passed: from here on things change.
  if (!existsSync(config.dataDir)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(config.dataDir, 0o700);
  }
  const tmp = path.join(config.dataDir, `cairn.db.restore-${process.pid}`);
  rmSync(tmp, { force: true });
  // The backup is a closed, self-contained file (not a live WAL database): a copy is exact.
  copyFileSync(file, tmp);
  let ended: Record<string, number> | undefined;
  try {
    if (newKey) ended = rekey(tmp, installKey!, Date.now());
    const aside = path.join(config.dataDir, `pre-restore-${stamp(Date.now())}`);
    const moved: string[] = [];
    const moveAside = (name: string) => {
      const p = path.join(config.dataDir, name);
      if (!existsSync(p)) return;
      mkdirSync(aside, { recursive: true, mode: 0o700 });
      renameSync(p, path.join(aside, name));
      moved.push(name);
    };
    for (const name of ['cairn.db', 'cairn.db-wal', 'cairn.db-shm']) moveAside(name);
    if (installKey) {
      moveAside('master.key');
      writeMasterKeyFile(masterKeyFile(config.dataDir), installKey);
    }
    renameSync(tmp, config.dbFile);
    o.out(
      JSON.stringify(
        {
          restored: config.dbFile,
          from: file,
          takenAt: m.takenAt,
          schema: m.schema.tag,
          migrationsToRun: known.filter((j) => j.when > m.schema.when).map((j) => j.tag),
          masterKey: newKey ? 'new (written to master.key)' : installKey ? `from ${backupKeyFile(file)}` : envKey ? 'CAIRN_MASTER_KEY' : 'master.key (already there)',
          ...(ended ? { ended } : {}),
          keptAside: moved.length ? { folder: aside, files: moved } : null,
        },
        null,
        2,
      ),
    );
    if (newKey) {
      o.err(
        'warning: restored with a NEW master key. Sessions ended, webhooks are disabled (re-create them), OAuth authorizations in progress ended. ' +
          'Content opens with each user\'s password and personal tokens, but an account is found by its email only after `npm run cli -- restore reindex --email <email>` (with its password).',
      );
    }
    o.err('Start the server: migrations run at start (docs/operations.md "Upgrades").');
    return 0;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const tableExists = (db: Database.Database, name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

/**
 * --new-master-key, on the restored copy before it is put in place, in one transaction: records
 * the new key's check and ends what the old key alone could open or vouch for (derived keys in
 * core/crypto/master-key.ts deriveServerKeys):
 * - sessions (JWTs signed with `jwt`): their rows are deleted;
 * - webhook subscriptions (URL and signing secret sealed under `unattended`): disabled, their
 *   their queued deliveries stay unsent (the dispatcher sends for active ones only); the owner
 *   re-creates them;
 * - OAuth authorizations in progress (their context sealed under `unattended`): deleted;
 * - the email index (HMAC under `emailIndex`): cannot be recomputed without each user's email,
 *   which is sealed under the user's key; the users are listed as stale (`restore reindex`).
 * Cursors (MAC under `cursor`) are not stored: old ones are refused and clients start over.
 * Personal tokens and OAuth tokens are found by the SHA-256 of their secret and unwrap the data
 * key with it, so they keep working; passwords keep opening the data key.
 */
function rekey(dbFile: string, key: Buffer, now: number): Record<string, number> {
  const db = new Database(dbFile, { fileMustExist: true });
  try {
    const ended: Record<string, number> = {};
    db.transaction(() => {
      db.prepare("INSERT INTO instance_meta (key, value) VALUES ('master_key_check', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(masterKeyCheck(key));
      ended.sessions = db.prepare("DELETE FROM credentials WHERE kind = 'session'").run().changes;
      if (tableExists(db, 'webhooks')) {
        ended.webhooksDisabled = db.prepare('UPDATE webhooks SET active = 0, disabled_at = coalesce(disabled_at, ?), updated_at = ? WHERE active = 1').run(now, now).changes;
      }
      if (tableExists(db, 'oauth_requests')) ended.oauthRequests = db.prepare('DELETE FROM oauth_requests').run().changes;
      const ids = (db.prepare('SELECT id FROM users').all() as { id: string }[]).map((r) => r.id);
      db.prepare('INSERT INTO instance_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(STALE_EMAIL_INDEX, JSON.stringify(ids));
      ended.emailIndexStale = ids.length;
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return ended;
  } finally {
    db.close();
  }
}
