// Finding rows in the index (routers/todo-index/index.ts): `locate` opens the buckets the caller's
// rows fall in and matches each row to its entry, rebuilding a bucket whose chunks are missing,
// stale or unreadable before answering.
import type Database from 'better-sqlite3';
import { overlay } from './merge.js';
import { bucketOf, deltaId, chunkId, midId, openChunk, rebuildChunk, stmts } from './storage.js';
import { BUCKETS, idsOf, type AnyChunk, type IndexOwner, type Layer } from './types.js';

/**
 * Where each of the caller's rows sits in the opened chunks: chunk `slot[k]`, entry `at[k]`
 * (-1: no entry, e.g. a to-do created after the rows were read).
 */
export type Located<C> = { chunks: C[]; slot: Uint16Array; at: Int32Array };

/**
 * `wholeAccount`: the rows are every to-do of the account. `sorted`: the rows are in id order
 * (e.g. read `ORDER BY id`), which lets them be matched to the chunks by position; rows given out
 * of order with `sorted` still get a right answer, through a rebuild.
 */
export type LocateOpts = { wholeAccount?: boolean | undefined; sorted?: boolean | undefined };

/** Whether the joined id string holds `id` as the entry starting at `off`. */
function idAt(joined: string, off: number, id: string): boolean {
  const end = off + id.length;
  return joined.startsWith(id, off) && (end === joined.length || joined.charCodeAt(end) === 10);
}

/**
 * One layer's entries for the given rows (their plaintext ids and updatedAt, read by the caller
 * in this request, best in id order: a chunk is then matched by position). Opens only the buckets
 * these rows fall in (base, middle and delta chunk; a delta entry overrides the middle chunk's,
 * and either the base's entry for the same id); a bucket whose base is missing, does not open, is of another format, or holds a stale
 * entry for one of the rows is rebuilt from the rows first. With `wholeAccount` (the rows are
 * every to-do of the account), a bucket holding entries of rows that no longer exist is rebuilt
 * too, so deleted to-dos do not linger in it.
 */
export function locate<C extends AnyChunk, T>(
  db: Database.Database,
  o: IndexOwner,
  layer: Layer<C, T>,
  ids: readonly string[],
  stamps: ArrayLike<number>,
  opts: LocateOpts & { visit?: ((k: number, c: C, e: number) => void) | undefined },
): Located<C> {
  const n = ids.length;
  const out: Located<C> = { chunks: [], slot: new Uint16Array(n), at: new Int32Array(n).fill(-1) };
  if (!n) return out;
  // Group the rows by bucket, keeping their order (a counting sort).
  const bucket = new Uint16Array(n);
  const count = new Int32Array(BUCKETS + 1);
  for (let k = 0; k < n; k++) {
    const b = bucketOf(ids[k]!);
    bucket[k] = b;
    count[b + 1]!++;
  }
  for (let b = 0; b < BUCKETS; b++) count[b + 1]! += count[b]!;
  const start = count.slice();
  const order = new Int32Array(n);
  for (let k = 0; k < n; k++) order[start[bucket[k]!]!++] = k;
  const buckets: number[] = [];
  for (let b = 0; b < BUCKETS; b++) if (opts.wholeAccount || count[b + 1]! > count[b]!) buckets.push(b);

  const s = stmts(db);
  // The deltas and middle chunks (small; middle chunks only on grown buckets) at once; the bases
  // one at a time below.
  const deltas = new Map<number, Buffer>();
  const mids = new Map<number, Buffer>();
  for (const r of s.some.all(o.userId, JSON.stringify(buckets.flatMap((b) => [deltaId(layer, b), midId(layer, b)]))) as [string, Buffer][]) {
    (r[0][layer.prefix.length] === '~' ? mids : deltas).set(Number(r[0].slice(layer.prefix.length + 1)), r[1]);
  }

  /**
   * Places the bucket's rows in its base chunk `c` and delta chunk `d`; false (nothing placed)
   * when the chunks do not match them. Strict: every row must have a current entry, and with
   * `wholeAccount` no entry may be left over.
   */
  const place = (b: number, c: C, d: C | null, strict: boolean): boolean => {
    const from = count[b]!;
    const len = count[b + 1]! - from;
    const m = c.u.length;
    const dn = d ? d.u.length : 0;
    const baseSlot = out.chunks.length;
    const deltaSlot = baseSlot + 1;
    const oSlot = out.slot;
    const oAt = out.at;
    const cu = c.u;
    const du = d ? d.u : cu;
    const dIds = dn ? idsOf(d!) : [];
    /** A strict mismatch: nothing of this bucket stays placed. */
    const fail = () => {
      for (let r = 0; r < len; r++) oAt[order[from + r]!] = -1;
      return false;
    };
    let dpos: Map<string, number> | null = null;
    let bpos: Map<string, number> | null = null;
    const toMaps = () => {
      bpos = new Map();
      const list = idsOf(c);
      for (let x = 0; x < list.length; x++) bpos.set(list[x]!, x);
      dpos = new Map();
      for (let x = 0; x < dn; x++) dpos.set(dIds[x]!, x);
    };
    if (!opts.sorted) toMaps();
    let dHits = 0;
    // Fast path (rows in id order, `sorted`): the rows are walked with the base's and the
    // delta's entries (both in id order): the base's ids are compared in place in its joined id
    // string (no string per entry), the delta's with a second cursor (one comparison per row, no
    // hashing), and a base entry the delta overrides is skipped. On the first row the base does
    // not hold at its cursor, the rest of the bucket is looked up by id (Maps).
    const joined = c.i;
    let off = 0;
    let j = 0;
    let dc = 0;
    for (let r = 0; r < len; r++) {
      const k = order[from + r]!;
      const id = ids[k]!;
      let e = -1;
      let here = false;
      if (bpos) e = dpos!.get(id) ?? -1;
      else {
        here = j < m && idAt(joined, off, id);
        if (dc < dn) {
          while (dc < dn && dIds[dc]! < id) dc++;
          if (dc < dn && dIds[dc] === id) e = dc;
        }
      }
      if (e >= 0) {
        dHits++;
        if (here) {
          off += id.length + 1;
          j++;
        }
        if (du[e] !== stamps[k]) {
          if (strict) return fail();
          continue;
        }
        oSlot[k] = deltaSlot;
        oAt[k] = e;
        continue;
      }
      let pos: number;
      if (here) {
        pos = j;
        off += id.length + 1;
        j++;
      } else {
        if (!bpos) toMaps();
        pos = bpos!.get(id) ?? -1;
      }
      if (pos < 0 || cu[pos] !== stamps[k]) {
        if (strict) return fail();
        continue;
      }
      oSlot[k] = baseSlot;
      oAt[k] = pos;
    }
    if (opts.wholeAccount && strict) {
      if (dHits !== dn) return fail();
      if (bpos) {
        // Every base entry is a row's, directly or overridden by the delta.
        let overlap = 0;
        for (const id of dIds) if ((bpos as Map<string, number>).has(id)) overlap++;
        if (m + dn - overlap !== len) return fail();
      } else if (j !== m) return fail();
    }
    const visit = opts.visit;
    if (visit) {
      // Streaming: the bucket's rows are handed over now and its chunks are not kept.
      for (let r = 0; r < len; r++) {
        const k = order[from + r]!;
        if (oAt[k]! >= 0) visit(k, oSlot[k] === deltaSlot ? d! : c, oAt[k]!);
      }
      return true;
    }
    // The delta's slot is the next one; without a delta the base takes it too (never pointed at).
    out.chunks.push(c, d ?? c);
    return true;
  };

  const stale: number[] = [];
  const seen = new Uint8Array(BUCKETS);
  for (const r of s.each.iterate(o.userId, JSON.stringify(buckets.map((b) => chunkId(layer, b)))) as IterableIterator<[string, Buffer]>) {
    const b = Number(r[0].slice(layer.prefix.length));
    seen[b] = 1;
    const c = openChunk(o, layer, r[0], r[1]);
    const dBlob = deltas.get(b);
    const d = dBlob ? openChunk(o, layer, deltaId(layer, b), dBlob) : null;
    const mBlob = mids.get(b);
    const m = mBlob ? openChunk(o, layer, midId(layer, b), mBlob) : null;
    // The middle chunk and the delta place as one overriding chunk (a delta entry winning).
    if (!c || (dBlob && !d) || (mBlob && !m) || !place(b, c, overlay(layer, m, d), true)) stale.push(b);
  }
  // A bucket with rows (or a delta) but no base: the base was lost. An empty bucket with no
  // chunk is fine (nothing to index there).
  for (const b of buckets) if (!seen[b] && (deltas.has(b) || mids.has(b) || count[b + 1]! > count[b]!)) stale.push(b);
  if (stale.length) {
    // Rebuilding writes: one short transaction (nested as a savepoint inside a caller's).
    db.transaction(() => {
      for (const b of stale) {
        const mine = opts.wholeAccount ? Array.from(order.subarray(count[b]!, count[b + 1]!), (k) => ids[k]!) : undefined;
        place(b, rebuildChunk(db, o, layer, b, mine), null, false);
      }
    })();
  }
  return out;
}
