// Opening DATA_DIR for the server and the CLI (issue 28 items 8 and 9; docs/operations.md "The
// master key" and "Start-up refusals"). Everything is checked before anything is created or
// migrated: DATA_DIR and the files in it, the master key's text, and that the key is the one the
// database was made with. A refusal names the variable or the path, the reason and what to do,
// and leaves DATA_DIR as it found it.
import { accessSync, chmodSync, constants, mkdirSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.js';
import {
  deriveServerKeys,
  generateMasterKey,
  masterKeyCheck,
  masterKeyFile,
  matchesKeyCheck,
  parseMasterKey,
  readMasterKeyFile,
  writeMasterKeyFile,
  type ServerKeys,
} from '../core/crypto/master-key.js';
import { inspectDb, openDb, type Db, type DbState } from '../db/client.js';

/** A refusal to start: its message is the whole story (printed without a stack). */
export class StartupError extends Error {}

/** Where the master key in use came from, for the start's log line. */
export type KeySource = 'CAIRN_MASTER_KEY' | 'master.key' | 'master.key (generated)';

export type OpenedData = {
  db: Db;
  keys: ServerKeys;
  keySource: KeySource;
  /** Things to say at start that are not refusals (a stale master.key beside CAIRN_MASTER_KEY…). */
  warnings: string[];
};

function statOf(p: string, label = p): Stats | undefined {
  try {
    return statSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // ENOTDIR: a parent is a file; the caller walks up and names it.
    if (code === 'ENOTDIR') return undefined;
    throw new StartupError(`${label}: cannot be examined by this process${uid()} (${code ?? (e as Error).message})`);
  }
}

function uid(): string {
  return typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
}

function accessible(p: string, mode: number): string | undefined {
  try {
    accessSync(p, mode);
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/**
 * Issue 28 item 9: DATA_DIR must be a directory this process can write, or creatable; the
 * database and its WAL files, when they exist, readable and writable files; master.key readable.
 * Only looks: nothing is created here. (Root passes every permission check; a read-only file
 * system still answers EROFS.)
 */
export function checkDataDir(dataDir: string): void {
  const st = statOf(dataDir, `DATA_DIR ${dataDir}`);
  if (st) {
    if (!st.isDirectory()) throw new StartupError(`DATA_DIR ${dataDir}: is not a directory (it is a file); point DATA_DIR at a directory, or remove the file`);
    const denied = accessible(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
    if (denied) {
      throw new StartupError(
        `DATA_DIR ${dataDir}: not writable by this process${uid()} (${denied}); make it writable by the user the server runs as (chown or chmod u+rwx), or point DATA_DIR elsewhere`,
      );
    }
    for (const name of ['cairn.db', 'cairn.db-wal', 'cairn.db-shm']) {
      const file = path.join(dataDir, name);
      const fst = statOf(file);
      if (!fst) continue;
      if (!fst.isFile()) throw new StartupError(`${file}: is not a regular file; DATA_DIR ${dataDir} must hold the database, not a directory of that name`);
      const no = accessible(file, constants.R_OK | constants.W_OK);
      if (no) throw new StartupError(`${file}: not readable and writable by this process${uid()} (${no}); chown it to the user the server runs as`);
    }
    const keyFile = masterKeyFile(dataDir);
    const kst = statOf(keyFile);
    if (kst && !kst.isFile()) throw new StartupError(`${keyFile}: is not a regular file; it must hold the master key`);
    return;
  }
  // It will be created: its nearest existing ancestor must be a directory this process can write.
  let up = path.dirname(dataDir);
  for (;;) {
    const ust = statOf(up, `DATA_DIR ${dataDir}: ${up}`);
    if (ust) {
      if (!ust.isDirectory()) throw new StartupError(`DATA_DIR ${dataDir}: cannot be created, because ${up} is a file, not a directory`);
      const denied = accessible(up, constants.W_OK | constants.X_OK);
      if (denied) throw new StartupError(`DATA_DIR ${dataDir}: cannot be created, because ${up} is not writable by this process${uid()} (${denied}); create DATA_DIR for the server's user, or point it elsewhere`);
      return;
    }
    const next = path.dirname(up);
    if (next === up) return;
    up = next;
  }
}

/** What the start knows of the database before touching it; undefined when there is none yet. */
function dbState(file: string): DbState | undefined {
  if (!statOf(file)) return undefined;
  try {
    return inspectDb(file);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_NOTADB') throw new StartupError(`${file}: is not a SQLite database (${(e as Error).message}); DATA_DIR must be Cairn's data directory`);
    throw new StartupError(`${file}: the database cannot be opened (${code ? `${code}: ` : ''}${(e as Error).message})`);
  }
}

/** The key to start with, or a refusal naming both sources (issue 28 item 8). */
function chooseKey(config: Config, state: DbState | undefined): { key: Buffer; source: KeySource; generate: boolean; warnings: string[] } {
  const file = masterKeyFile(config.dataDir);
  const dbFile = config.dbFile;
  let envKey: Buffer | undefined;
  let fileKey: Buffer | undefined;
  try {
    envKey = config.masterKeyHex !== undefined && config.masterKeyHex !== '' ? parseMasterKey(config.masterKeyHex, 'CAIRN_MASTER_KEY') : undefined;
    fileKey = readMasterKeyFile(file);
  } catch (e) {
    throw new StartupError((e as Error).message);
  }
  const warnings: string[] = [];
  const check = state?.keyCheck;
  const refuse = (why: string) =>
    new StartupError(
      `master key mismatch: ${why} Starting anyway would make sign-in fail and let sign-up create second, empty accounts. Nothing was changed (docs/operations.md "The master key").`,
    );

  if (check !== undefined) {
    const envOk = envKey !== undefined && matchesKeyCheck(envKey, check);
    const fileOk = fileKey !== undefined && matchesKeyCheck(fileKey, check);
    if (envKey) {
      if (envOk) {
        if (fileKey && !fileOk) warnings.push(`${file} holds another key than CAIRN_MASTER_KEY and is not used (CAIRN_MASTER_KEY wins when set); remove it, or keep it out of backups of this data`);
        return { key: envKey, source: 'CAIRN_MASTER_KEY', generate: false, warnings };
      }
      if (fileOk) {
        throw refuse(
          `CAIRN_MASTER_KEY is set but is not the key ${dbFile} was made with; ${file} is. CAIRN_MASTER_KEY wins over master.key when set: unset CAIRN_MASTER_KEY, or set it to the key in ${file}.`,
        );
      }
      throw refuse(
        `CAIRN_MASTER_KEY is set but is not the key ${dbFile} was made with, and ${fileKey ? `${file} is not either` : `there is no ${file}`}. Set CAIRN_MASTER_KEY to the key this data was made with, or unset it and restore master.key from the backup that goes with this database.`,
      );
    }
    if (fileKey) {
      if (fileOk) return { key: fileKey, source: 'master.key', generate: false, warnings };
      throw refuse(
        `${file} is not the key ${dbFile} was made with (CAIRN_MASTER_KEY is not set). If this data was made with CAIRN_MASTER_KEY, set it again; else restore master.key from the backup that goes with this database.`,
      );
    }
    throw refuse(
      `${dbFile} was made with a master key, but CAIRN_MASTER_KEY is not set and there is no ${file}. Set CAIRN_MASTER_KEY to that key, or restore master.key from the backup that goes with this database; a new key would not open it.`,
    );
  }

  // No check yet: a new database, or one made before checks were kept (the check is recorded at
  // this start, for the key chosen here).
  if (envKey && fileKey && !envKey.equals(fileKey)) {
    throw refuse(
      `CAIRN_MASTER_KEY and ${file} hold different keys, and ${state ? `${dbFile} keeps no key check yet (it was made before Cairn kept one), so which key it was made with cannot be told` : 'CAIRN_MASTER_KEY would win over master.key'}. Remove the wrong one: unset CAIRN_MASTER_KEY, or move ${file} away.`,
    );
  }
  if (envKey) return { key: envKey, source: 'CAIRN_MASTER_KEY', generate: false, warnings };
  if (fileKey) return { key: fileKey, source: 'master.key', generate: false, warnings };
  if (state?.hasAccounts) {
    throw refuse(
      `${dbFile} holds accounts, but CAIRN_MASTER_KEY is not set and there is no ${file}. Set CAIRN_MASTER_KEY to the key this data was made with, or restore master.key from the backup that goes with this database; a new key would not open it.`,
    );
  }
  return { key: generateMasterKey(), source: 'master.key (generated)', generate: true, warnings };
}

/**
 * Checks DATA_DIR and the master key, then creates what is missing (DATA_DIR 0700, master.key
 * 0600), opens and migrates the database and records the key check when it has none. Throws a
 * StartupError, having created nothing, when any check fails.
 */
export function openData(config: Config): OpenedData {
  checkDataDir(config.dataDir);
  const state = dbState(config.dbFile);
  const chosen = chooseKey(config, state);
  if (state && state.keyCheck === undefined && state.hasAccounts) {
    chosen.warnings.push(
      `recorded the master key's check in ${config.dbFile} (from ${chosen.source}); from now on a start with another key is refused. If sign-in fails now, this was the wrong key: see docs/operations.md "The master key"`,
    );
  }
  // Validation passed: from here on things are created.
  if (!statOf(config.dataDir)) {
    try {
      mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
      chmodSync(config.dataDir, 0o700);
    } catch (e) {
      throw new StartupError(`DATA_DIR ${config.dataDir}: cannot be created (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  if (chosen.generate) {
    try {
      writeMasterKeyFile(masterKeyFile(config.dataDir), chosen.key);
    } catch (e) {
      throw new StartupError(`${masterKeyFile(config.dataDir)}: the new master key cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  let db: Db;
  try {
    db = openDb(config.dbFile, { durability: config.durability, keyCheck: masterKeyCheck(chosen.key) });
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new StartupError(`${config.dbFile}: the database cannot be opened (${code ? `${code}: ` : ''}${(e as Error).message})`);
  }
  return { db, keys: deriveServerKeys(chosen.key), keySource: chosen.source, warnings: chosen.warnings };
}
