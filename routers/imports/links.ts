// Import links (db/schema/imports.ts; docs/import.md "Once"): how an import finds what an earlier
// run made. A link is found by a blind index of (source, kind, source id) under the user's data
// key, as tag names and idempotency keys are (DECISIONS §3); the source id is kept sealed beside it
// (AAD = user, `import_links`, the link's id), so that a key rotation can write the index again
// under the new key, in the rotation's own transaction (routers/auth/model.ts rotateKey), as
// db/sealed.ts `reindex` does for those. Nothing of the source is stored in the clear.
import type Database from 'better-sqlite3';
import { blindIndex } from '../../core/crypto/blind-index.js';
import { open, openJson, rowAad, seal, sealedVersion, sealJson, SealError } from '../../core/crypto/seal.js';

const TABLE = 'import_links';

/** What a link's sealed value holds: the three parts of its index. */
export type LinkSource = { source: string; kind: string; sid: string };

export function linkIndex(dek: Buffer, s: LinkSource): Buffer {
  return blindIndex(dek, 'import source', `${s.source}\0${s.kind}\0${s.sid}`);
}

const linkAad = (userId: string, id: string) => rowAad(userId, TABLE, id);

export function sealLink(dek: Buffer, userId: string, id: string, s: LinkSource): Buffer {
  return sealJson(dek, linkAad(userId, id), { source: s.source, kind: s.kind, sid: s.sid });
}

/**
 * Key rotation (call inside the rotation's transaction, after the new key is chosen): every link of
 * the user is opened with the old key and written again, its index and its sealed source id, under
 * the new one, so a re-run after the rotation still finds what it made. The old index values are
 * overwritten in place (secure_delete zeroes the index entries they leave; the caller flushes the
 * WAL after the commit). Links made before migration 0019 hold no sealed source id: their index
 * cannot be made again, so they are deleted rather than left under a key that no longer exists.
 * A crash before the commit leaves every link as it was, under the old key that still opens the
 * account; after it, every link is under the new key: there is no state in between.
 */
export function rekeyImportLinks(sqlite: Database.Database, userId: string, oldDek: Buffer, newDek: Buffer): { rekeyed: number; dropped: number } {
  const dropped = sqlite.prepare(`DELETE FROM ${TABLE} WHERE user_id = ? AND (id IS NULL OR sealed IS NULL)`).run(userId).changes;
  const rows = sqlite.prepare(`SELECT id, sealed FROM ${TABLE} WHERE user_id = ?`).all(userId) as { id: string; sealed: Buffer }[];
  const put = sqlite.prepare(`UPDATE ${TABLE} SET source_index = ?, sealed = ? WHERE user_id = ? AND id = ?`);
  for (const row of rows) {
    const s = openJson<LinkSource>(oldDek, linkAad(userId, row.id), row.sealed);
    put.run(linkIndex(newDek, s), sealLink(newDek, userId, row.id, s), userId, row.id);
  }
  return { rekeyed: rows.length, dropped };
}

/** `cairn reseal` (routers/auth/reseal.ts): the user's links whose sealed source id is in format v1. */
export function v1Links(sqlite: Database.Database, userId: string): { id: string; bytes: number }[] {
  return sqlite.prepare(`SELECT id, length(sealed) AS bytes FROM ${TABLE} WHERE user_id = ? AND id IS NOT NULL AND substr(sealed, 1, 1) = x'01'`).all(userId) as { id: string; bytes: number }[];
}

/** Re-seals one link's v1 source id as v2 under the same key (its index does not change). */
export function resealV1Link(sqlite: Database.Database, dek: Buffer, userId: string, id: string): 'done' | 'skipped' | 'unopened' {
  const v = sqlite.prepare(`SELECT sealed FROM ${TABLE} WHERE user_id = ? AND id = ?`).pluck().get(userId, id) as Buffer | null | undefined;
  if (!v || sealedVersion(v) !== 1) return 'skipped';
  let plain: Buffer;
  try {
    plain = open(dek, linkAad(userId, id), v);
  } catch (e) {
    if (e instanceof SealError) return 'unopened';
    throw e;
  }
  sqlite.prepare(`UPDATE ${TABLE} SET sealed = ? WHERE user_id = ? AND id = ?`).run(seal(dek, linkAad(userId, id), plain), userId, id);
  return 'done';
}
