// Issue 29: what format every sealed value of the database is in. Reads every column of
// routers/auth/reseal.ts SEALED_COLUMNS (content, file chunks, webhook targets, every wrap), and
// checks that the schema has no BLOB column that is neither there nor a known hash or index.
import type Database from 'better-sqlite3';
import { SEALED_COLUMNS } from '../../routers/auth/reseal.js';
import { legacyWrites } from '../../core/crypto/seal-v1.js';

/** BLOB columns that hold no sealed value: hashes, blind indexes, salts, public keys. */
export const NOT_SEALED: Record<string, string> = {
  'users.email_index': 'HMAC of the email under a server key',
  'users.pw_salt': 'scrypt salt',
  'users.pw_verifier': 'SHA-256 of the verification half',
  'credentials.secret_hash': 'SHA-256 of the secret',
  'tags.name_index': 'blind index (HMAC under a key from the data key)',
  'idempotency_keys.key_index': 'blind index (HMAC under a key from the data key)',
  'oauth_clients.secret_hash': 'SHA-256 of the client secret',
  'oauth_requests.user_code_hash': 'HMAC of the nine-digit code',
  'oauth_requests.wait_hash': 'SHA-256 of the wait handle',
  'oauth_requests.wait_public_key': "X25519 public key of the wait handle",
  'oauth_requests.code_hash': 'SHA-256 of the authorization code',
  'oauth_tokens.secret_hash': 'SHA-256 of the token secret',
  'dav_resources.name_index': 'blind index (HMAC under a key from the data key)',
  'dav_resources.uid_index': 'blind index (HMAC under a key from the data key)',
  'import_links.source_index': 'blind index of (source, kind, source id) (HMAC under a key from the data key)',
};

/** `table.column` of every BLOB column in the schema. */
export function blobColumns(sqlite: Database.Database): string[] {
  const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'").pluck().all() as string[];
  const out: string[] = [];
  for (const t of tables) {
    for (const c of sqlite.prepare(`PRAGMA table_info("${t}")`).all() as { name: string; type: string }[]) {
      if (c.type.toLowerCase() === 'blob') out.push(`${t}.${c.name}`);
    }
  }
  return out;
}

export type Counts = { v1: number; v2: number; other: number };

/** Per `table.column`: how many non-null values of the user are v1, v2 or anything else. */
export function versionCounts(sqlite: Database.Database, userId?: string): Record<string, Counts> {
  const out: Record<string, Counts> = {};
  for (const c of SEALED_COLUMNS) {
    const where = userId ? `"${c.userCol}" = ? AND` : '';
    const rows = sqlite
      .prepare(`SELECT substr("${c.column}", ${c.offset + 1}, 1) AS b FROM "${c.table}" WHERE ${where} "${c.column}" IS NOT NULL`)
      .all(...(userId ? [userId] : [])) as { b: Buffer }[];
    const n: Counts = { v1: 0, v2: 0, other: 0 };
    for (const r of rows) {
      const v = r.b[0];
      if (v === 1) n.v1++;
      else if (v === 2) n.v2++;
      else n.other++;
    }
    out[`${c.table}.${c.column}`] = n;
  }
  return out;
}

/** `table.column` names with at least one v1 value (of the user, or anyone's). */
export function columnsWithV1(sqlite: Database.Database, userId?: string): string[] {
  return Object.entries(versionCounts(sqlite, userId))
    .filter(([, n]) => n.v1 > 0)
    .map(([k]) => k);
}

/** Every v1 value of the user (the sealed blob itself), by `table.column`. */
export function v1Values(sqlite: Database.Database, userId: string): Record<string, Buffer[]> {
  const out: Record<string, Buffer[]> = {};
  for (const c of SEALED_COLUMNS) {
    const rows = sqlite.prepare(`SELECT "${c.column}" AS v FROM "${c.table}" WHERE "${c.userCol}" = ? AND substr("${c.column}", ${c.offset + 1}, 1) = x'01'`).all(userId) as { v: Buffer }[];
    if (rows.length) out[`${c.table}.${c.column}`] = rows.map((r) => r.v.subarray(c.offset));
  }
  return out;
}

/** Runs `fn` with the seal module writing format v1, as the code before issue 29 did. */
export async function writingV1<T>(fn: () => Promise<T>): Promise<T> {
  legacyWrites.on = true;
  try {
    return await fn();
  } finally {
    legacyWrites.on = false;
  }
}
