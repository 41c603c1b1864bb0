// The server master key (DECISIONS §3): protects only what must work without a user present
// (cursor MACs, JWT signatures, email lookup index, webhook secrets). It never opens content.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hkdf } from './secrets.js';

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

function parseKey(text: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  if (b.length === 32) return b;
  throw new Error('master key must be 32 bytes, as 64 hex digits or base64');
}

/** CAIRN_MASTER_KEY when set, else DATA_DIR/master.key, generated (mode 0600) on first start. */
export function loadMasterKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return parseKey(fromEnv);
  const file = path.join(dataDir, 'master.key');
  if (existsSync(file)) return parseKey(readFileSync(file, 'utf8'));
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
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
