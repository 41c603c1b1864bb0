// The server master key (DECISIONS §3): protects only what must work without a user present
// (cursor MACs, JWT signatures, email lookup index, webhook secrets). It never opens content.
//
// Where it comes from (docs/operations.md "The master key"): `CAIRN_MASTER_KEY` when set, else
// DATA_DIR/master.key, generated on first start. Reading a key never creates anything; the start
// (server/startup.ts) compares it with the key check the database keeps before it creates or
// migrates anything, and only then writes a new master.key (`writeMasterKeyFile`).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { constantTimeEqual, hkdf, hmacSha256 } from './secrets.js';

export type ServerKeys = {
  /** HMAC key for opaque cursors. */
  cursor: Buffer;
  /** HS256 key for first-party session JWTs. */
  jwt: Buffer;
  /** HMAC key for the email lookup index. */
  emailIndex: Buffer;
  /** AES key for secrets the server must use unattended (webhook signing secrets). */
  unattended: Buffer;
};

/** The master key's file in DATA_DIR. */
export function masterKeyFile(dataDir: string): string {
  return path.join(dataDir, 'master.key');
}

/**
 * 32 bytes as 64 hex digits or base64. `source` names where the text came from (the variable or
 * the file), so a refusal says which setting to fix (issue 28 item 9). The key itself is never
 * put in a message, only its length.
 */
export function parseMasterKey(text: string, source: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  if (b.length === 32) return b;
  const what = t.length === 0 ? 'it is empty' : `it is ${t.length} characters that are neither 64 hex digits nor base64 of 32 bytes`;
  throw new Error(`${source}: the master key must be 32 bytes, written as 64 hex digits or as base64 (e.g. \`openssl rand -hex 32\`); ${what}`);
}

/** DATA_DIR/master.key's key, or undefined when there is no such file. Creates nothing. */
export function readMasterKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new Error(`${file}: the master key file cannot be read (${code ?? (e as Error).message}); make it readable by the user the server runs as`);
  }
  return parseMasterKey(text, file);
}

/** Writes a new master key file (mode 0600); refuses to overwrite one. */
export function writeMasterKeyFile(file: string, key: Buffer): void {
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
}

export function generateMasterKey(): Buffer {
  return randomBytes(32);
}

/**
 * Issue 28 item 8: what the database keeps to recognise its master key (instance_meta
 * `master_key_check`): HMAC-SHA256 of a fixed label under the key, in hex. It tells whether a key
 * is the one the data was made with and reveals nothing of the key.
 */
export function masterKeyCheck(master: Buffer): string {
  return hmacSha256(master, 'cairn master key check v1').toString('hex');
}

/** Whether `master` is the key whose check is `check` (constant time). */
export function matchesKeyCheck(master: Buffer, check: string): boolean {
  return constantTimeEqual(Buffer.from(masterKeyCheck(master), 'utf8'), Buffer.from(check, 'utf8'));
}

/**
 * CAIRN_MASTER_KEY when set, else DATA_DIR/master.key, generated (mode 0600) when missing. For
 * scripts on their own data (the bench's seeds); the server and the CLI start through
 * server/startup.ts, which also checks the key against the database.
 */
export function loadMasterKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return parseMasterKey(fromEnv, 'CAIRN_MASTER_KEY');
  const file = masterKeyFile(dataDir);
  if (existsSync(file)) return readMasterKeyFile(file)!;
  mkdirSync(dataDir, { recursive: true });
  const key = generateMasterKey();
  writeMasterKeyFile(file, key);
  return key;
}

export function deriveServerKeys(master: Buffer): ServerKeys {
  return {
    cursor: hkdf(master, 'cairn cursor mac v1'),
    jwt: hkdf(master, 'cairn session jwt v1'),
    emailIndex: hkdf(master, 'cairn email index v1'),
    unattended: hkdf(master, 'cairn unattended secrets v1'),
  };
}
