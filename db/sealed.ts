// Every table holding sealed content, in one registry: key rotation re-seals each of them, and
// the at-rest test writes a marker through each. A later resource adds its table here.
import type Database from 'better-sqlite3';
import { open, rowAad, seal } from '../core/crypto/seal.js';
import { blindIndex, idempotencyKeyIndex, tagNameIndex } from '../core/crypto/blind-index.js';

export type SealedTable = {
  table: string;
  idCol: string;
  userCol: string;
  sealedCol: string;
  /** Columns derived from the plaintext under the data key (blind indexes), recomputed on rotation. */
  reindex?: (dek: Buffer, plaintext: Buffer) => Record<string, Buffer | null>;
};

/** CalDAV resource names and UIDs (dav/store.ts) are found by these blind indexes, exact strings. */
export const davNameIndex = (dek: Buffer, name: string): Buffer => blindIndex(dek, 'dav resource name', name);
export const davUidIndex = (dek: Buffer, uid: string): Buffer => blindIndex(dek, 'dav uid', uid);

export const SEALED_TABLES: SealedTable[] = [
  { table: 'users', idCol: 'id', userCol: 'id', sealedCol: 'sealed' },
  { table: 'credentials', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  {
    table: 'tags',
    idCol: 'id',
    userCol: 'user_id',
    sealedCol: 'sealed',
    reindex: (dek, plain) => ({ name_index: tagNameIndex(dek, (JSON.parse(plain.toString('utf8')) as { name: string }).name) }),
  },
  { table: 'settings', idCol: 'user_id', userCol: 'user_id', sealedCol: 'sealed' },
  // Stored idempotent answers (spec §4.2): re-sealed on rotation, key index recomputed, so a retry
  // across a key rotation still replays.
  { table: 'idempotency_keys', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed', reindex: (dek, plain) => ({ key_index: idempotencyKeyIndex(dek, (JSON.parse(plain.toString('utf8')) as { key: string }).key) }) },
  { table: 'containers', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'headings', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'todos', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'note_folders', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'notes', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'note_versions', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'filters', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'attachments', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  { table: 'inbox_items', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  // Webhook descriptions (the URL and secrets are under the master key: docs/security.md "Webhook secrets").
  { table: 'webhooks', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed_description' },
  // The sealed per-account to-do index (routers/todo-index/index.ts): one row per chunk.
  { table: 'todo_index_chunks', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
  // CalDAV (dav/store.ts, dav/sync.ts): a client's resource name, UID and unmodelled properties
  // (both blind indexes recomputed on rotation), and the sync snapshots behind sync tokens.
  {
    table: 'dav_resources',
    idCol: 'todo_id',
    userCol: 'user_id',
    sealedCol: 'sealed',
    reindex: (dek, plain) => {
      const s = JSON.parse(plain.toString('utf8')) as { name: string | null; uid: string | null };
      return { name_index: s.name ? davNameIndex(dek, s.name) : null, uid_index: s.uid ? davUidIndex(dek, s.uid) : null };
    },
  },
  { table: 'dav_sync_snapshots', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
];

/**
 * The AAD of one chunk of a file attachment's bytes (routers/attachments/files.ts): user,
 * attachment id, chunk index and the last-chunk flag, so a chunk cannot be moved, swapped into
 * another file, or a file cut short without failing to open.
 */
export function chunkAad(userId: string, attachmentId: string, idx: number, last: boolean): Buffer {
  return rowAad(userId, 'attachment_chunks', `${attachmentId}\0${idx}\0${last ? 1 : 0}`);
}

/**
 * File chunks are re-sealed on rotation too, one at a time (a file's bytes are never all in
 * memory), in the rotation's transaction. Uploads still streaming are dropped: rotation ends every
 * credential, so they could not finish, and their chunks are under the old key.
 */
function resealChunks(sqlite: Database.Database, userId: string, oldDek: Buffer, newDek: Buffer): number {
  sqlite.prepare('DELETE FROM attachment_chunks WHERE user_id = ? AND attachment_id IN (SELECT id FROM pending_uploads WHERE user_id = ?)').run(userId, userId);
  sqlite.prepare('DELETE FROM pending_uploads WHERE user_id = ?').run(userId);
  const keys = sqlite
    .prepare(
      `SELECT c.attachment_id AS id, c.idx AS idx, c.idx = (SELECT max(idx) FROM attachment_chunks m WHERE m.attachment_id = c.attachment_id) AS last
         FROM attachment_chunks c WHERE c.user_id = ? ORDER BY c.attachment_id, c.idx`,
    )
    .all(userId) as { id: string; idx: number; last: number }[];
  const get = sqlite.prepare('SELECT sealed FROM attachment_chunks WHERE attachment_id = ? AND idx = ? AND user_id = ?').pluck();
  const put = sqlite.prepare('UPDATE attachment_chunks SET sealed = ? WHERE attachment_id = ? AND idx = ? AND user_id = ?');
  for (const k of keys) {
    const plain = open(oldDek, chunkAad(userId, k.id, k.idx, k.last === 1), get.get(k.id, k.idx, userId) as Buffer);
    put.run(seal(newDek, chunkAad(userId, k.id, k.idx, k.last === 1), plain), k.id, k.idx, userId);
  }
  return keys.length;
}

/** Re-seals every row of the user under a new data key. Call inside a transaction. */
export function resealUser(sqlite: Database.Database, userId: string, oldDek: Buffer, newDek: Buffer): number {
  let count = 0;
  for (const t of SEALED_TABLES) {
    const rows = sqlite
      .prepare(`SELECT "${t.idCol}" AS id, "${t.sealedCol}" AS sealed FROM "${t.table}" WHERE "${t.userCol}" = ?`)
      .all(userId) as { id: string; sealed: Buffer | null }[];
    for (const row of rows) {
      if (!row.sealed) continue;
      const aad = rowAad(userId, t.table, row.id);
      const plain = open(oldDek, aad, row.sealed);
      const extra = t.reindex ? t.reindex(newDek, plain) : {};
      const cols = Object.keys(extra);
      const sets = [`"${t.sealedCol}" = ?`, ...cols.map((c) => `"${c}" = ?`)].join(', ');
      sqlite
        .prepare(`UPDATE "${t.table}" SET ${sets} WHERE "${t.idCol}" = ? AND "${t.userCol}" = ?`)
        .run(seal(newDek, aad, plain), ...cols.map((c) => extra[c]!), row.id, userId);
      count++;
    }
  }
  return count + resealChunks(sqlite, userId, oldDek, newDek);
}
