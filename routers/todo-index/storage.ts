// Chunk storage (routers/todo-index/index.ts): which bucket a to-do falls in, the chunk table's
// statements, opening and sealing a chunk, a chunk's entries, and rebuilding a bucket from the
// to-do rows when its chunk is missing, stale or does not open.
import type Database from 'better-sqlite3';
import { open, rowAad, seal } from '../../core/crypto/seal.js';
import { BUCKETS, FORMAT, INDEX_TABLE, idsOf, type AnyChunk, type IndexOwner, type Layer, type PlacedRow, type TodoContent } from './types.js';

/** The chunk of a to-do id: FNV-1a over its UTF-16 code units, mod BUCKETS. */
export function bucketOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

export const chunkId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}${bucket}`;
/** A bucket's delta chunk: the entries written since its base chunk was last sealed. */
export const deltaId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}+${bucket}`;
/**
 * A bucket's middle chunk (issue 29, third tier, only on grown buckets): full deltas folded
 * together, between the delta and the base ('~N', 't~N').
 */
export const midId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}~${bucket}`;
const aad = (userId: string, id: string) => rowAad(userId, INDEX_TABLE, id);

/**
 * Entries a bucket's delta chunk holds before the write that would exceed it folds them into the
 * base chunk. A write re-seals the (small) delta chunk; one write in DELTA_MAX per bucket re-seals
 * the base. Per write that is about DELTA_MAX/2 + base/DELTA_MAX entries re-sealed instead of the
 * whole base (at 50,000 to-dos ~40 entries instead of ~800; docs/performance.md).
 */
export const DELTA_MAX = 32;

/**
 * The third tier (issue 29 item 4: index upkeep flat with the account's size). With two tiers a
 * write re-seals DELTA_MAX/2 + base/DELTA_MAX entries on average, and the base grows with the
 * account (~800 entries a bucket at 50,000 to-dos: the folds made a write ~1.3× dearer at 50k than
 * at 10k). On a bucket whose base chunk's blob is at least `fromBytes` long (read with SQL's
 * `length()`, nothing opened), a full delta is folded into the bucket's middle chunk instead, and
 * only a middle chunk past `midMax` entries is folded into the base: per write DELTA_MAX/2 +
 * midMax/DELTA_MAX + base/midMax entries (~16 + 4 + 6 at 50k instead of ~16 + 25). Smaller
 * buckets keep two tiers (a middle chunk would cost every whole-account read one more chunk for
 * little). Figures: docs/performance.md "Index upkeep at 50,000 to-dos". An object, not
 * constants, so a test can take a small bucket through the third tier.
 */
export const TIER = { midMax: 128, fromBytes: 16 * 1024 };

type Stmts = {
  get: Database.Statement;
  has: Database.Statement;
  size: Database.Statement;
  drop: Database.Statement;
  some: Database.Statement;
  each: Database.Statement;
  put: Database.Statement;
  stamps: Database.Statement;
  sealedOf: Database.Statement;
  placeOf: Database.Statement;
  totals: Database.Statement;
  order: Database.Statement;
};
const stmtCache = new WeakMap<Database.Database, Stmts>();
export function stmts(db: Database.Database): Stmts {
  let s = stmtCache.get(db);
  if (!s) {
    s = {
      get: db.prepare(`SELECT sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`),
      has: db.prepare(`SELECT 1 FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`).pluck(true),
      size: db.prepare(`SELECT length(sealed) FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`).pluck(true),
      drop: db.prepare(`DELETE FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`),
      some: db.prepare(`SELECT id, sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`).raw(true),
      // The same, for reading the (large) base chunks one row at a time with .iterate(): each
      // blob, its plaintext and its JSON text die young instead of living through the request.
      each: db.prepare(`SELECT id, sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`).raw(true),
      put: db.prepare(`INSERT INTO ${INDEX_TABLE} (user_id, id, sealed) VALUES (?, ?, ?) ON CONFLICT (user_id, id) DO UPDATE SET sealed = excluded.sealed`),
      stamps: db.prepare('SELECT id FROM todos WHERE user_id = ?').pluck(true),
      placeOf: db.prepare('SELECT id, updated_at AS updatedAt, trashed_at AS trashedAt, parent_id AS parentId FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))'),
      // The account's freshness totals, on the covering index todos_user_placement (no row
      // reaches JavaScript): how many to-dos, and the sum of their stamps modulo 2^32 (exact in
      // a double up to 2^21 rows).
      totals: db.prepare('SELECT count(*), coalesce(sum(updated_at % 4294967296), 0) FROM todos WHERE user_id = ?').raw(true),
      order: db.prepare('SELECT id, updated_at FROM todos WHERE user_id = ? ORDER BY id').raw(true),
      sealedOf: db.prepare('SELECT id, updated_at AS updatedAt, trashed_at AS trashedAt, parent_id AS parentId, sealed FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))'),
    };
    stmtCache.set(db, s);
  }
  return s;
}

export function openChunk<C extends AnyChunk, T>(o: IndexOwner, layer: Layer<C, T>, id: string, blob: Buffer): C | null {
  try {
    const c = layer.fromBytes(open(o.dek, aad(o.userId, id), blob));
    return c && c.v === FORMAT && typeof c.i === 'string' && Array.isArray(c.u) && countIds(c.i) === c.u.length && layer.valid(c) ? c : null;
  } catch {
    // A chunk that does not open under this key (or is not ours) is rebuilt from the rows.
    return null;
  }
}

/** How many ids a joined id string holds. */
function countIds(joined: string): number {
  if (joined === '') return 0;
  let n = 1;
  for (let at = joined.indexOf('\n'); at >= 0; at = joined.indexOf('\n', at + 1)) n++;
  return n;
}

export function writeChunk<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, id: string, c: C): void {
  stmts(db).put.run(o.userId, id, seal(o.dek, aad(o.userId, id), layer.toBytes(c)));
}

/** A chunk's entries by id (for writes: decode, change, encode). */
export function entriesOf<C extends AnyChunk, T>(layer: Layer<C, T>, c: C): Map<string, { u: number; x: T }> {
  const out = new Map<string, { u: number; x: T }>();
  const ids = idsOf(c);
  for (let k = 0; k < ids.length; k++) out.set(ids[k]!, { u: c.u[k]!, x: layer.payload(c, k) });
  return out;
}

export function encodeEntries<C extends AnyChunk, T>(layer: Layer<C, T>, entries: Map<string, { u: number; x: T }>): C {
  const ids = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return layer.encode(
    ids.join('\n'),
    ids.map((id) => entries.get(id)!.u),
    ids.map((id) => entries.get(id)!.x),
  );
}

/**
 * Rebuilds one bucket of a layer from the to-do rows (opens each of them once): the base chunk
 * holds every entry, and the delta and middle chunks are dropped.
 */
export function rebuildChunk<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number, ids?: readonly string[]): C {
  const s = stmts(db);
  const mine = ids ?? (s.stamps.all(o.userId) as string[]).filter((id) => bucketOf(id) === bucket);
  const rows = s.sealedOf.all(o.userId, JSON.stringify(mine)) as (PlacedRow & { sealed: Buffer })[];
  const entries = new Map<string, { u: number; x: T }>();
  for (const r of rows) {
    const content = JSON.parse(open(o.dek, rowAad(o.userId, 'todos', r.id), r.sealed).toString('utf8')) as TodoContent;
    entries.set(r.id, { u: r.updatedAt, x: layer.make(content, r) });
  }
  const c = encodeEntries(layer, entries);
  writeChunk(db, o, layer, chunkId(layer, bucket), c);
  s.drop.run(o.userId, deltaId(layer, bucket));
  s.drop.run(o.userId, midId(layer, bucket));
  return c;
}

/** A bucket's base chunk as stored, or rebuilt from the rows when missing or unreadable (then `rebuilt`). */
export function baseFor<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number): { c: C; rebuilt: boolean } {
  const id = chunkId(layer, bucket);
  const row = stmts(db).get.get(o.userId, id) as { sealed: Buffer } | undefined;
  const c = row && openChunk(o, layer, id, row.sealed);
  return c ? { c, rebuilt: false } : { c: rebuildChunk(db, o, layer, bucket), rebuilt: true };
}

/**
 * A bucket's delta chunk for a write: empty when there is none yet (then the base must exist: a
 * missing base is rebuilt from the rows first, so a missing base always means a lost one), or
 * null when the stored one does not open (the caller rebuilds the bucket from the rows).
 */
export function deltaFor<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number): C | null {
  const s = stmts(db);
  const id = deltaId(layer, bucket);
  const row = s.get.get(o.userId, id) as { sealed: Buffer } | undefined;
  if (row) return openChunk(o, layer, id, row.sealed);
  if (!s.has.get(o.userId, chunkId(layer, bucket))) rebuildChunk(db, o, layer, bucket);
  return layer.encode('', [], []);
}
