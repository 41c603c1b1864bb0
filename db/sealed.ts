// Every table holding sealed content, in one registry: key rotation re-seals each of them, and
// the at-rest test writes a marker through each. A later resource adds its table here.
import type Database from 'better-sqlite3';
import { open, rowAad, seal } from '../server/crypto/seal.js';
import { idempotencyKeyIndex, tagNameIndex } from '../server/crypto/blind-index.js';

export type SealedTable = {
  table: string;
  idCol: string;
  userCol: string;
  sealedCol: string;
  /** Columns derived from the plaintext under the data key (blind indexes), recomputed on rotation. */
  reindex?: (dek: Buffer, plaintext: Buffer) => Record<string, Buffer>;
};

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
  // The sealed per-account to-do index (server/index/todo-index.ts): one row per chunk.
  { table: 'todo_index_chunks', idCol: 'id', userCol: 'user_id', sealedCol: 'sealed' },
];

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
  return count;
}
