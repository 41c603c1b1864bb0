// The index's readers (routers/todo-index/index.ts): the whole account from the attribute chunks
// (accountIndex), the attributes of given rows (attrView, indexedAttrs), and the search text
// bucket by bucket (scanTexts).
import type Database from 'better-sqlite3';
import { openInto, plainLength, rowAad } from '../../core/crypto/seal.js';
import { AttrBytes, attrsToBytes } from './attr-bytes.js';
import { TextBytes, textToBytes } from './text-bytes.js';
import { ATTRS, PRIORITIES, STATUSES, TEXT, attrsAt } from './layers.js';
import { locate, type Located, type LocateOpts } from './locate.js';
import { overlay } from './merge.js';
import { chunkId, deltaId, midId, openChunk, stmts } from './storage.js';
import { BUCKETS, INDEX_TABLE, idsOf, type AttrChunk, type IndexOwner, type IndexedTodo, type Priority, type StampedRow, type TextChunk } from './types.js';

/** The indexed attributes of an account's rows, read column-wise (no object per to-do). */
export class AttrView implements AttrReader {
  constructor(private readonly l: Located<AttrChunk>) {}
  /** Whether row k has an entry (false only for a to-do the index does not know yet). */
  has(k: number): boolean {
    return this.l.at[k]! >= 0;
  }
  private c(k: number): AttrChunk {
    return this.l.chunks[this.l.slot[k]!]!;
  }
  /** 0 open, 1 completed, 2 canceled. */
  status(k: number): number {
    return this.c(k).s.charCodeAt(this.l.at[k]!) - 48;
  }
  whenDate(k: number): string | null {
    return this.c(k).w[this.l.at[k]!] ?? null;
  }
  deadline(k: number): string | null {
    return this.c(k).d[this.l.at[k]!] ?? null;
  }
  /** Bit 1: evening; bit 2: someday. */
  flags(k: number): number {
    return this.c(k).f.charCodeAt(this.l.at[k]!) - 48;
  }
  priority(k: number): Priority | null {
    return PRIORITIES[this.c(k).p.charCodeAt(this.l.at[k]!) - 48] ?? null;
  }
  completedAt(k: number): number | null {
    return this.c(k).c[this.l.at[k]!]!;
  }
  recurring(k: number): boolean {
    return this.c(k).r[this.l.at[k]!] !== undefined;
  }
  /** Row k's attributes as one object (for the few rows a view picks). */
  attrs(k: number): IndexedTodo {
    return attrsAt(this.c(k), this.l.at[k]!);
  }
}

/**
 * Plaintext buffers for whole-account reads (`openInto`), reused read after read instead of one
 * allocation per chunk: the dead plaintexts of a whole-account read are external memory that the
 * GC frees late, and they drove the views' and search's peak RSS at 50,000 to-dos (issue 29). A
 * read takes the pooled arena for its duration (`withAccountArena`, synchronous: one read at a
 * time, a nested one gets its own) and zeroes every byte it used when it ends, so nothing
 * decrypted outlives the read. At most ARENA_KEEP bytes stay allocated between reads.
 */
export class Arena {
  private blocks: Buffer[] = [];
  private block = 0;
  private used = 0;
  /** n bytes at an 8-byte boundary (the chunks' typed arrays need it). */
  take(n: number): Buffer {
    for (;;) {
      const b = this.blocks[this.block];
      if (!b) {
        this.blocks.push(Buffer.allocUnsafeSlow(Math.max(n, ARENA_BLOCK)));
        continue;
      }
      const at = (this.used + 7) & ~7;
      if (at + n <= b.length) {
        this.used = at + n;
        return b.subarray(at, at + n);
      }
      this.block++;
      this.used = 0;
    }
  }
  /** Zeroes what was taken and makes it free again (dropping blocks past ARENA_KEEP). */
  zero(): void {
    let kept = 0;
    this.blocks = this.blocks.filter((b, i) => {
      if (i <= this.block) b.fill(0, 0, i < this.block ? b.length : this.used);
      kept += b.length;
      return kept <= ARENA_KEEP;
    });
    this.block = 0;
    this.used = 0;
  }
}
const ARENA_BLOCK = 1 << 20;
const ARENA_KEEP = 8 << 20;
let pooled: Arena | null = new Arena();

/** Runs a whole-account read with the pooled arena (or a fresh one when nested), zeroed after. */
export function withAccountArena<T>(fn: (arena: Arena) => T): T {
  const mine = pooled;
  const arena = mine ?? new Arena();
  pooled = null;
  try {
    return fn(arena);
  } finally {
    arena.zero();
    if (mine) pooled = mine;
  }
}

/** What a reader of many rows' indexed attributes sees, column-wise (no object per to-do). */
export interface AttrReader {
  /** Whether row k has an entry (false only for a to-do the index does not know yet). */
  has(k: number): boolean;
  /** 0 open, 1 completed, 2 canceled. */
  status(k: number): number;
  whenDate(k: number): string | null;
  deadline(k: number): string | null;
  /** Bit 1: evening; bit 2: someday. */
  flags(k: number): number;
  priority(k: number): Priority | null;
  completedAt(k: number): number | null;
  recurring(k: number): boolean;
  /** Row k's attributes as one object (for the few rows a view picks). */
  attrs(k: number): IndexedTodo;
}

/** The attributes of an account's rows read in place from the stored chunks (format 4). */
class ByteAttrView implements AttrReader {
  constructor(
    private readonly chunks: readonly AttrBytes[],
    private readonly slot: Uint16Array,
    private readonly at: Int32Array,
  ) {}
  has(k: number): boolean {
    return k < this.at.length;
  }
  status(k: number): number {
    return this.chunks[this.slot[k]!]!.s[this.at[k]!]!;
  }
  whenDate(k: number): string | null {
    return this.chunks[this.slot[k]!]!.w[this.at[k]!] ?? null;
  }
  deadline(k: number): string | null {
    return this.chunks[this.slot[k]!]!.d[this.at[k]!] ?? null;
  }
  flags(k: number): number {
    return this.chunks[this.slot[k]!]!.f[this.at[k]!]!;
  }
  priority(k: number): Priority | null {
    return PRIORITIES[this.chunks[this.slot[k]!]!.p[this.at[k]!]!] ?? null;
  }
  completedAt(k: number): number | null {
    return this.chunks[this.slot[k]!]!.completedAt(this.at[k]!);
  }
  recurring(k: number): boolean {
    return this.chunks[this.slot[k]!]!.r[this.at[k]!] !== undefined;
  }
  attrs(k: number): IndexedTodo {
    const c = this.chunks[this.slot[k]!]!;
    const j = this.at[k]!;
    const f = c.f[j]!;
    const r = c.r[j];
    return {
      status: STATUSES[c.s[j]!]!,
      whenDate: c.w[j] ?? null,
      deadline: c.d[j] ?? null,
      evening: (f & 1) !== 0,
      someday: (f & 2) !== 0,
      priority: PRIORITIES[c.p[j]!] ?? null,
      completedAt: c.completedAt(j),
      recurrence: r ? { rule: r[0], basis: r[1], done: r[2], anchor: r[3] } : null,
    };
  }
}

/**
 * Every to-do of an account as the attribute chunks hold it (format 3: with its placement), for
 * the views, the overview and saved filters: row k is entry `at[k]` of chunk `slot[k]`, read in
 * place from the decrypted chunks (attr-bytes.ts: no object per to-do; ids are made only for the
 * rows a view keeps, `idAt`).
 * Freshness without reading every row: the count of the account's to-dos and the sum of their
 * stamps (mod 2^32), taken in one aggregate query over the covering index, must equal the same
 * totals over the opened chunks, and every chunk must open. Any write through the models keeps
 * both equal (the index is updated in the write's transaction); a row added, removed, or
 * changed (every write bumps `updated_at`) behind the index's back changes the SQL totals, and
 * then the per-row check (`locate` with the rows' ids and stamps) finds and rebuilds the stale
 * chunks before the account is read again from the chunks.
 */
export type AccountIndex = {
  n: number;
  idAt: (k: number) => string;
  stamps: Float64Array;
  trashedAt: (k: number) => number | null;
  parentId: (k: number) => string | null;
  attrs: AttrReader;
};

/** The account's to-do count and stamp sum (mod 2^32) from the rows (one aggregate query). */
export function todoTotals(db: Database.Database, userId: string): [count: number, sum: number] {
  return stmts(db).totals.get(userId) as [number, number];
}

function openBytes(o: IndexOwner, id: string, blob: Buffer, arena: Arena): AttrBytes | null {
  try {
    return new AttrBytes(openInto(o.dek, rowAad(o.userId, INDEX_TABLE, id), blob, arena.take(plainLength(blob))));
  } catch {
    return null;
  }
}

/**
 * `arena`: where the chunks' plaintexts go; the caller runs the read and everything it does with
 * the result inside `withAccountArena` (the result reads the arena in place).
 */
export function accountIndex(db: Database.Database, o: IndexOwner, arena: Arena, totals: [count: number, sum: number] = todoTotals(db, o.userId)): AccountIndex {
  const s = stmts(db);
  const baseNames = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => chunkId(ATTRS, b)));
  // The deltas and the middle chunks (small, and middle chunks only on grown buckets) at once.
  const deltaNames = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => [deltaId(ATTRS, b), midId(ATTRS, b)]).flat());
  const [count, sum] = totals;
  /** Every bucket's entries in id order (a delta entry replacing the base's), if the totals match. */
  const read = (): AccountIndex | null => {
    const delta: (AttrChunk | undefined)[] = [];
    const mid: (AttrChunk | undefined)[] = [];
    for (const r of s.some.all(o.userId, deltaNames) as [string, Buffer][]) {
      const c = openChunk(o, ATTRS, r[0], r[1]);
      if (!c) return null;
      (r[0][0] === '~' ? mid : delta)[Number(r[0].slice(1))] = c;
    }
    // A bucket's middle chunk and delta as one overriding chunk (a delta entry winning), in the
    // stored form so that it is read like the bases (small: at most a few hundred entries).
    const over: (AttrBytes | undefined)[] = [];
    for (let b = 0; b < BUCKETS; b++) {
      const c = mid[b] ? overlay(ATTRS, mid[b]!, delta[b] ?? null) : delta[b];
      if (c && c.u.length) over[b] = new AttrBytes(attrsToBytes(c));
    }
    const base: (AttrBytes | undefined)[] = [];
    for (const r of s.each.iterate(o.userId, baseNames) as IterableIterator<[string, Buffer]>) {
      const c = openBytes(o, r[0], r[1], arena);
      if (!c) return null;
      base[Number(r[0])] = c;
    }
    // Every bucket's entries in id order, a delta entry replacing the base's, into arrays sized
    // for the most there can be.
    let max = 0;
    for (let b = 0; b < BUCKETS; b++) max += (base[b]?.n ?? 0) + (over[b]?.n ?? 0);
    const chunks: AttrBytes[] = [];
    const slot = new Uint16Array(max);
    const at = new Int32Array(max);
    const stamps = new Float64Array(max);
    let n = 0;
    for (let b = 0; b < BUCKETS; b++) {
      const c = base[b];
      const d = over[b];
      if (!c) {
        // A delta (or middle chunk) without its base: the base was lost, or deltas of nothing.
        if (d || delta[b] || mid[b]) return null;
        continue;
      }
      const cs = chunks.push(c) - 1;
      const cu = c.u;
      let i = 0;
      if (d) {
        const ds = chunks.push(d) - 1;
        const du = d.u;
        for (let e = 0; e < d.n; ) {
          const cmp = i < c.n ? c.ids.compare(i, d.ids, e) : 1;
          if (cmp < 0) {
            stamps[n] = cu[i]!;
            slot[n] = cs;
            at[n++] = i++;
          } else {
            if (cmp === 0) i++;
            stamps[n] = du[e]!;
            slot[n] = ds;
            at[n++] = e++;
          }
        }
      }
      for (; i < c.n; i++) {
        stamps[n] = cu[i]!;
        slot[n] = cs;
        at[n++] = i;
      }
    }
    let total = 0;
    for (let k = 0; k < n; k++) total += stamps[k]! % 4294967296;
    if (n !== count || total !== sum) return null;
    const sl = slot.subarray(0, n);
    const pos = at.subarray(0, n);
    return {
      n,
      idAt: (k) => chunks[sl[k]!]!.ids.at(pos[k]!),
      stamps: stamps.subarray(0, n),
      trashedAt: (k) => chunks[sl[k]!]!.x[pos[k]!] ?? null,
      parentId: (k) => {
        const c = chunks[sl[k]!]!;
        const j = c.q[pos[k]!]!;
        return j < 0 ? null : c.P[j]!;
      },
      attrs: new ByteAttrView(chunks, sl, pos),
    };
  };
  const got = read();
  if (got) return got;
  // Something changed behind the index's back (or a chunk is missing or unreadable): the
  // per-row check rebuilds exactly the buckets that do not match the rows.
  const rows = s.order.all(o.userId) as [string, number][];
  locate(db, o, ATTRS, rows.map((r) => r[0]), Float64Array.from(rows, (r) => r[1]), { wholeAccount: true, sorted: true });
  const again = read();
  if (!again) throw new Error('the sealed to-do index does not match the rows after a rebuild');
  return again;
}

/**
 * The to-dos whose folded search text holds every term (`terms`: folded, without whitespace, at
 * most 31), from the text chunks alone, bucket by bucket (one bucket's text held at a time, read
 * in place: text-bytes.ts), `found(id, rank)` for each (rank 0: every term in the title; 1: in
 * title or body), a delta (or middle-chunk) entry replacing the base's. Fresh exactly when the
 * entries' count and stamp sum equal the rows' (the aggregate `accountIndex` checks, 2 ms at
 * 50,000 to-dos, against ~35 ms for reading every row's id and stamp): false otherwise, or when a
 * chunk does not open, and then the caller must drop what it was shown and use `scanTexts` with
 * the rows (which rebuilds the stale buckets). Search at 50,000 to-dos: docs/performance.md.
 */
export function scanAccountTexts(db: Database.Database, o: IndexOwner, terms: readonly string[], found: (id: string, rank: 0 | 1) => void, totals: [count: number, sum: number] = todoTotals(db, o.userId)): boolean {
  const s = stmts(db);
  const [count, sum] = totals;
  const delta: (TextChunk | null)[] = new Array(BUCKETS).fill(null);
  const mids: (TextChunk | null)[] = new Array(BUCKETS).fill(null);
  const names = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => [deltaId(TEXT, b), midId(TEXT, b)]).flat());
  const at = TEXT.prefix.length;
  for (const r of s.some.all(o.userId, names) as [string, Buffer][]) {
    const c = openChunk(o, TEXT, r[0], r[1]);
    if (!c) return false;
    (r[0][at] === '~' ? mids : delta)[Number(r[0].slice(at + 1))] = c;
  }
  // A bucket's middle chunk and delta as one overriding chunk, in the stored form (small).
  const over: (TextBytes | null)[] = new Array(BUCKETS).fill(null);
  for (let b = 0; b < BUCKETS; b++) {
    const c = mids[b] ? overlay(TEXT, mids[b]!, delta[b] ?? null) : delta[b];
    if (c && c.u.length) over[b] = new TextBytes(textToBytes(c));
  }
  const tb = terms.map((t) => Buffer.from(t, 'utf8'));
  const seen = new Uint8Array(BUCKETS);
  let n = 0;
  let total = 0;
  const baseNames = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => chunkId(TEXT, b)));
  // Every base is opened into the arena, taken again bucket by bucket and zeroed before returning.
  return withAccountArena((arena) => {
    for (const r of s.each.iterate(o.userId, baseNames) as IterableIterator<[string, Buffer]>) {
      const b = Number(r[0].slice(at));
      let c: TextBytes;
      try {
        arena.zero();
        c = new TextBytes(openInto(o.dek, rowAad(o.userId, INDEX_TABLE, r[0]), r[1], arena.take(plainLength(r[1]))));
      } catch {
        return false;
      }
      seen[b] = 1;
      const d = over[b];
      const cr = c.ranks(tb);
      const dr = d ? d.ranks(tb) : null;
      let i = 0;
      let e = 0;
      const dn = d ? d.n : 0;
      while (i < c.n || e < dn) {
        const cmp = e >= dn ? -1 : i >= c.n ? 1 : c.ids.compare(i, d!.ids, e);
        if (cmp < 0) {
          total += c.u[i]! % 4294967296;
          if (cr[i]! >= 0) found(c.ids.at(i), cr[i] as 0 | 1);
          i++;
        } else {
          if (cmp === 0) i++;
          total += d!.u[e]! % 4294967296;
          if (dr![e]! >= 0) found(d!.ids.at(e), dr![e] as 0 | 1);
          e++;
        }
        n++;
      }
    }
    // A delta or middle chunk without its base: the base was lost.
    for (let b = 0; b < BUCKETS; b++) if (!seen[b] && (delta[b] || mids[b])) return false;
    return n === count && total === sum;
  });
}

/** The indexed attributes of the rows `ids[k]` (stamps `stamps[k]`), best given in id order. */
export function attrView(db: Database.Database, o: IndexOwner, ids: readonly string[], stamps: ArrayLike<number>, opts: LocateOpts = {}): AttrView {
  return new AttrView(locate(db, o, ATTRS, ids, stamps, opts));
}

/**
 * The folded search text of the rows `ids[k]` (stamps `stamps[k]`, best in id order), bucket by
 * bucket: `visit(k, title, body)` for every row with an entry, in bucket order, not row order.
 * Each bucket's chunks are dropped once its rows are visited, so a whole-account search holds one
 * bucket's text at a time instead of all 64 (search at 50,000 to-dos: docs/performance.md).
 */
export function scanTexts(
  db: Database.Database,
  o: IndexOwner,
  ids: readonly string[],
  stamps: ArrayLike<number>,
  opts: LocateOpts,
  visit: (k: number, title: string, body: string) => void,
): void {
  locate(db, o, TEXT, ids, stamps, { ...opts, visit: (k, c, e) => visit(k, c.t[e]!, c.b[e]!) });
}

/** The indexed attributes of the given rows as objects (the status filter, open counts). */
export function indexedAttrs(db: Database.Database, o: IndexOwner, rows: readonly StampedRow[], opts: { wholeAccount?: boolean } = {}): Map<string, IndexedTodo> {
  const v = attrView(
    db,
    o,
    rows.map((r) => r.id),
    rows.map((r) => r.updatedAt),
    opts,
  );
  const out = new Map<string, IndexedTodo>();
  rows.forEach((r, k) => {
    if (v.has(k)) out.set(r.id, v.attrs(k));
  });
  return out;
}
