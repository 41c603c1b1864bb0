// The index's write hooks (routers/todo-index/index.ts), called by the to-do model inside the
// write's transaction: a to-do written, removed or restamped re-seals its bucket's delta chunk,
// and once in DELTA_MAX writes to a bucket the delta is folded into the base, or, on a grown
// bucket, into its middle chunk, which is folded into the base once past TIER.midMax entries.
import type Database from 'better-sqlite3';
import { eachLayer } from './layers.js';
import { merged, mergedByEntries } from './merge.js';
import { DELTA_MAX, TIER, baseFor, bucketOf, chunkId, deltaFor, deltaId, encodeEntries, entriesOf, midId, openChunk, rebuildChunk, stmts, writeChunk } from './storage.js';
import { idsOf, type AnyChunk, type IndexOwner, type Layer, type PlacedRow, type TodoContent } from './types.js';

/** Puts an entry into a chunk in place (replacing the id's entry if any), keeping ids in order. */
function putEntry<C extends AnyChunk, T>(layer: Layer<C, T>, c: C, id: string, u: number, x: T): void {
  const ids = idsOf(c);
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  let del = ids[lo] === id ? 1 : 0;
  if (!del) {
    // Never a second entry for an id, even in a chunk whose ids were somehow not in order.
    const at = ids.indexOf(id);
    if (at >= 0) [lo, del] = [at, 1];
  }
  ids.splice(lo, del, id);
  c.i = ids.join('\n');
  c.u.splice(lo, del, u);
  layer.splice(c, lo, del, x);
}

/**
 * Stores a bucket's changed delta chunk, or, past DELTA_MAX entries, folds it: into the middle
 * chunk when the bucket has one or its base is grown (TIER), else, and once the middle chunk
 * would pass TIER.midMax entries, into the base (middle and delta together). Called after the
 * rows are written: a chunk rebuilt from the rows here already holds this write.
 */
function saveDelta<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number, d: C): void {
  const s = stmts(db);
  if (d.u.length <= DELTA_MAX) {
    if (d.u.length) writeChunk(db, o, layer, deltaId(layer, bucket), d);
    else s.drop.run(o.userId, deltaId(layer, bucket));
    return;
  }
  const mid = midId(layer, bucket);
  const midRow = s.get.get(o.userId, mid) as { sealed: Buffer } | undefined;
  let fold = d;
  if (midRow) {
    const m = openChunk(o, layer, mid, midRow.sealed);
    // A middle chunk that does not open: the bucket is rebuilt from the rows.
    if (!m) return void rebuildChunk(db, o, layer, bucket);
    fold = merged(layer, m, d) ?? mergedByEntries(layer, m, d);
  }
  if (fold.u.length <= TIER.midMax && (midRow || ((s.size.get(o.userId, chunkId(layer, bucket)) as number | undefined) ?? 0) >= TIER.fromBytes)) {
    writeChunk(db, o, layer, mid, fold);
    s.drop.run(o.userId, deltaId(layer, bucket));
    return;
  }
  const base = baseFor(db, o, layer, bucket);
  // A rebuilt base holds the rows as they are now (this write included) and dropped the others.
  if (base.rebuilt) return;
  writeChunk(db, o, layer, chunkId(layer, bucket), merged(layer, base.c, fold) ?? mergedByEntries(layer, base.c, fold));
  s.drop.run(o.userId, deltaId(layer, bucket));
  if (midRow) s.drop.run(o.userId, mid);
}

/**
 * Write hook: the to-do's new sealed content and its new `updatedAt`, in the caller's
 * transaction (same connection), after the row is written. Re-seals the delta chunk of its
 * bucket in each layer (and, once in DELTA_MAX writes to the bucket, the base chunk).
 */
export function indexTodo(db: Database.Database, o: IndexOwner, row: PlacedRow, content: TodoContent): void {
  const bucket = bucketOf(row.id);
  eachLayer((layer) => {
    const d = deltaFor(db, o, layer, bucket);
    // A delta that does not open: the bucket is rebuilt from the rows (this write included).
    if (!d) return void rebuildChunk(db, o, layer, bucket);
    putEntry(layer, d, row.id, row.updatedAt, layer.make(content, row));
    saveDelta(db, o, layer, bucket, d);
  });
}

function byBucket(ids: readonly string[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const id of ids) {
    const b = bucketOf(id);
    const list = out.get(b);
    if (list) list.push(id);
    else out.set(b, [id]);
  }
  return out;
}

/** Write hook: the to-dos are gone (DELETE, a container delete's cascade). */
export function unindexTodos(db: Database.Database, o: IndexOwner, todoIds: readonly string[]): void {
  const s = stmts(db);
  for (const [bucket, list] of byBucket(todoIds)) {
    eachLayer((layer) => {
      // Out of the base, the middle chunk and the delta; a missing or unreadable chunk is rebuilt
      // without them on the next read.
      for (const id of [chunkId(layer, bucket), midId(layer, bucket), deltaId(layer, bucket)]) {
        const row = s.get.get(o.userId, id) as { sealed: Buffer } | undefined;
        const c = row && openChunk(o, layer, id, row.sealed);
        if (!c) continue;
        const entries = entriesOf(layer, c);
        let changed = false;
        for (const todoId of list) changed = entries.delete(todoId) || changed;
        if (!changed) continue;
        if (entries.size || id === chunkId(layer, bucket)) writeChunk(db, o, layer, id, encodeEntries(layer, entries));
        else s.drop.run(o.userId, id);
      }
    });
  }
}

/** Write hook: the to-do is gone. */
export function unindexTodo(db: Database.Database, o: IndexOwner, todoId: string): void {
  unindexTodos(db, o, [todoId]);
}

/**
 * Write hook for writes that change no sealed content but bump rows' `updatedAt` and may move
 * them (heading delete and convert, tag delete): the entries take the rows' new stamp and
 * placement (read from the rows, after the caller's update), so no reader rebuilds.
 */
export function restampTodos(db: Database.Database, o: IndexOwner, ids: readonly string[], _updatedAt?: number): void {
  const now = new Map<string, PlacedRow>();
  for (const r of stmts(db).placeOf.all(o.userId, JSON.stringify(ids)) as PlacedRow[]) now.set(r.id, r);
  for (const [bucket, list] of byBucket(ids)) {
    eachLayer((layer) => {
      const d = deltaFor(db, o, layer, bucket);
      if (!d) return void rebuildChunk(db, o, layer, bucket);
      let base: C0 | null = null;
      // The middle chunk: not read yet (undefined), none (null).
      let mid: C0 | null | undefined;
      for (const id of list) {
        const r = now.get(id);
        if (!r) continue;
        const inDelta = idsOf(d).indexOf(id);
        let x: unknown;
        if (mid === undefined && inDelta < 0) {
          const row = stmts(db).get.get(o.userId, midId(layer, bucket)) as { sealed: Buffer } | undefined;
          mid = row ? openChunk(o, layer, midId(layer, bucket), row.sealed) : null;
          // Rebuilt from the rows, which already hold the new stamps and placement.
          if (row && !mid) return void rebuildChunk(db, o, layer, bucket);
        }
        const inMid = mid && inDelta < 0 ? idsOf(mid).indexOf(id) : -1;
        if (inDelta >= 0) x = layer.payload(d, inDelta);
        else if (inMid >= 0) x = layer.payload(mid!, inMid);
        else {
          if (!base) {
            const got = baseFor(db, o, layer, bucket);
            // Rebuilt from the rows, which already hold the new stamps and placement.
            if (got.rebuilt) return;
            base = got.c;
          }
          const k = idsOf(base).indexOf(id);
          if (k < 0) continue;
          x = layer.payload(base, k);
        }
        putEntry(layer, d, id, r.updatedAt, layer.replace(x, r));
      }
      saveDelta(db, o, layer, bucket, d);
    });
  }
}
type C0 = AnyChunk;
