// The sealed per-account to-do index (issue 14). Views, saved filters, heading open counts and
// the to-do `status` filter need a few sealed attributes of many to-dos; opening every to-do row
// per request does not scale (~10 µs a row). The index keeps those attributes for every to-do of
// an account in BUCKETS sealed chunks (table todo_index_chunks), one JSON blob each, sealed with
// AES-256-GCM under the user's data key, AAD = user id + table + chunk id like every sealed row.
// A to-do belongs to the bucket `bucketOf(id)` (a hash of its id).
//
// Each bucket has a base chunk and, since issue 12's write pass, a small delta chunk ('+N', 't+N')
// holding the entries written since the base was last sealed; a delta entry replaces the base's
// entry for the same id. A write re-seals only its bucket's delta chunk in each layer (a few KB),
// and the write that would take a delta past DELTA_MAX entries folds it into the base (one base
// re-seal per DELTA_MAX writes to a bucket). Readers open base and delta together. Before deltas,
// every write re-sealed two chunks that grow with the account (~150 KB at 50,000 to-dos).
//
// Two layers of chunks, each BUCKETS chunks: the attribute chunks (ids '0'..'63') hold each
// to-do's sealed status, dates, flags, priority, completion time and recurrence; the search-text
// chunks (ids 't0'..'t63') hold its case-folded title and its case-folded notes and checklist
// (routers/todo-index/fold.ts), so the views never open search text and search never opens attributes.
// Every entry carries the row's `updatedAt` (the freshness stamp). Since format 3 an attribute
// entry also holds a sealed copy of the row's trash time and container (plaintext columns of the
// row already), so the views read the account from the chunks alone (`accountIndex`); heading,
// tags and sort keys are not copied: readers take them from the rows.
//
// Consistency: every write of a to-do's sealed content goes through routers/todos/model.ts, which
// calls `indexTodo` / `unindexTodo` in the same transaction. Any other write of a to-do row bumps
// its `updatedAt`; `accountIndex` compares the account's count and stamp sum with the chunks'
// (one aggregate query), other readers each entry's stamp with the row's; on a mismatch or a
// missing chunk, the stale chunk is rebuilt from the rows with the request's key before answering. So a
// lost, stale or deleted chunk costs one rebuild, never a wrong answer. Nothing decrypted outlives
// the request: chunks are opened into local values only.
import type Database from 'better-sqlite3';
import { open, rowAad, seal } from '../../core/crypto/seal.js';
import { fold } from './fold.js';

export const INDEX_TABLE = 'todo_index_chunks';
/** Chunks per account: at 50,000 to-dos about 800 entries (~50 KB) each. */
export const BUCKETS = 64;

type Status = 'open' | 'completed' | 'canceled';
type Priority = 'low' | 'medium' | 'high';

/** The indexed attributes (a subset of the to-do's sealed content, routers/todos/model.ts TodoSealed). */
export type IndexedTodo = {
  status: Status;
  completedAt: number | null;
  whenDate: string | null;
  deadline: string | null;
  evening: boolean;
  someday: boolean;
  priority: Priority | null;
  recurrence: { rule: string; basis: 'schedule' | 'completion'; done: number; anchor: string | null } | null;
};

/** What a write hands the index: the to-do's sealed content (routers/todos/model.ts TodoSealed). */
export type TodoContent = IndexedTodo & { title: string; notes: string | null; checklist: { title: string }[] };

/** A to-do's search text, case-folded (routers/todo-index/fold.ts). */
export type TodoText = { title: string; body: string };

/** Who the index belongs to and the key that opens it (a request's principal). */
export type IndexOwner = { userId: string; dek: Buffer };

/** The plaintext of a to-do row that the index is checked against. */
export type StampedRow = { id: string; updatedAt: number };
/** A to-do row's plaintext placement, copied (sealed) into the attribute chunks (format 3). */
export type PlacedRow = StampedRow & { trashedAt: number | null; parentId: string | null };
type Placed = { trashedAt: number | null; parentId: string | null };

// Chunk format (FORMAT): columnar JSON, one array or string per attribute, entries sorted by id,
// so a reader walks a chunk column-wise without building an object per entry, and matches a
// chunk's entries to the rows (read in id order) by position. A chunk of another version, or one
// that does not open, is rebuilt from the rows (so a format change rebuilds every chunk).
export const FORMAT = 3;
type Rec = [rule: string, basis: 'schedule' | 'completion', done: number, anchor: string | null];
// Every chunk: `i` the ids joined by '\n' (one string: ids are UUIDs, validated at the API edge),
// `u` their stamps. Attribute chunks: statuses, flags and priorities as one digit per entry;
// when-dates, deadlines and recurrences by position (most to-dos have none); completion times.
// Format 3 adds the rows' plaintext placement (sealed here like the rest): `x` trash times by
// position (few), `P` the chunk's distinct containers and `q` each entry's index into `P` (-1: none).
type AttrChunk = { v: 3; i: string; u: number[]; s: string; f: string; p: string; w: Record<string, string>; d: Record<string, string>; c: (number | null)[]; r: Record<string, Rec>; x: Record<string, number>; P: string[]; q: number[] };
/** A search-text chunk: ids, stamps, folded titles and folded bodies. */
type TextChunk = { v: 3; i: string; u: number[]; t: string[]; b: string[] };
type AnyChunk = { v: number; i: string; u: number[] };
const idsOf = (c: AnyChunk): string[] => (c.i === '' ? [] : c.i.split('\n'));

/** One layer of chunks: the payload made from a to-do's content, and the chunk's (de)coding. */
type Layer<C extends AnyChunk, T> = {
  prefix: string;
  make: (c: TodoContent, row: Placed) => T;
  encode: (ids: string, stamps: number[], xs: T[]) => C;
  /**
   * A chunk of entries copied column-wise from other chunks: entry k is entry `at[k]` of chunk
   * `src[from[k]]` (for the fold: no object per entry).
   */
  gather: (ids: string, stamps: number[], src: readonly C[], from: Uint8Array, at: Int32Array) => C;
  /** Replaces `del` (0 or 1) entries at position k by x, in the layer's own columns (ids and stamps are done by the caller). */
  splice: (c: C, k: number, del: number, x: T) => void;
  payload: (c: C, k: number) => T;
  /** A payload with a row's new placement (restamps: heading delete and convert, tag delete). */
  replace: (x: T, row: Placed) => T;
  valid: (c: AnyChunk) => boolean;
};

const STATUSES: Status[] = ['open', 'completed', 'canceled'];
const PRIORITIES: (Priority | null)[] = [null, 'low', 'medium', 'high'];
const digits = (xs: number[]) => String.fromCharCode(...xs.map((x) => 48 + x));

type AttrEntry = IndexedTodo & Placed;
const ATTRS: Layer<AttrChunk, AttrEntry> = {
  prefix: '',
  make: (c, row) => ({ trashedAt: row.trashedAt, parentId: row.parentId, status: c.status, completedAt: c.completedAt, whenDate: c.whenDate, deadline: c.deadline, evening: c.evening, someday: c.someday, priority: c.priority, recurrence: c.recurrence ? { ...c.recurrence } : null }),
  encode: (i, u, xs) => {
    const r: Record<string, Rec> = {};
    const w: Record<string, string> = {};
    const d: Record<string, string> = {};
    const x: Record<string, number> = {};
    const P: string[] = [];
    const pIndex = new Map<string, number>();
    const q = xs.map((a) => {
      if (a.parentId === null) return -1;
      let at = pIndex.get(a.parentId);
      if (at === undefined) pIndex.set(a.parentId, (at = P.push(a.parentId) - 1));
      return at;
    });
    xs.forEach((a, k) => {
      if (a.trashedAt !== null) x[k] = a.trashedAt;
      if (a.recurrence) r[k] = [a.recurrence.rule, a.recurrence.basis, a.recurrence.done, a.recurrence.anchor];
      if (a.whenDate !== null) w[k] = a.whenDate;
      if (a.deadline !== null) d[k] = a.deadline;
    });
    return {
      v: 3,
      i,
      u,
      s: digits(xs.map((a) => STATUSES.indexOf(a.status))),
      f: digits(xs.map((a) => (a.evening ? 1 : 0) | (a.someday ? 2 : 0))),
      p: digits(xs.map((a) => PRIORITIES.indexOf(a.priority))),
      w,
      d,
      c: xs.map((a) => a.completedAt),
      r,
      x,
      P,
      q,
    };
  },
  gather: (i, u, src, from, at) => {
    const n = at.length;
    const s = new Array<number>(n);
    const f = new Array<number>(n);
    const p = new Array<number>(n);
    const c = new Array<number | null>(n);
    const q = new Array<number>(n);
    const w: Record<string, string> = {};
    const d: Record<string, string> = {};
    const r: Record<string, Rec> = {};
    const x: Record<string, number> = {};
    const P: string[] = [];
    const pIndex = new Map<string, number>();
    for (let k = 0; k < n; k++) {
      const ch = src[from[k]!]!;
      const j = at[k]!;
      s[k] = ch.s.charCodeAt(j);
      f[k] = ch.f.charCodeAt(j);
      p[k] = ch.p.charCodeAt(j);
      c[k] = ch.c[j]!;
      const wv = ch.w[j];
      if (wv !== undefined) w[k] = wv;
      const dv = ch.d[j];
      if (dv !== undefined) d[k] = dv;
      const rv = ch.r[j];
      if (rv !== undefined) r[k] = rv;
      const xv = ch.x[j];
      if (xv !== undefined) x[k] = xv;
      const qj = ch.q[j]!;
      if (qj < 0) q[k] = -1;
      else {
        const parent = ch.P[qj]!;
        let slot = pIndex.get(parent);
        if (slot === undefined) pIndex.set(parent, (slot = P.push(parent) - 1));
        q[k] = slot;
      }
    }
    return { v: 3, i, u, s: String.fromCharCode(...s), f: String.fromCharCode(...f), p: String.fromCharCode(...p), w, d, c, r, x, P, q };
  },
  payload: (c, k) => ({ ...attrsAt(c, k), trashedAt: c.x[k] ?? null, parentId: c.q[k]! < 0 ? null : c.P[c.q[k]!]! }),
  replace: (x, row) => ({ ...x, trashedAt: row.trashedAt, parentId: row.parentId }),
  splice: (c, k, del, a) => {
    const put = (str: string, digit: number) => str.slice(0, k) + String.fromCharCode(48 + digit) + str.slice(k + del);
    c.s = put(c.s, STATUSES.indexOf(a.status));
    c.f = put(c.f, (a.evening ? 1 : 0) | (a.someday ? 2 : 0));
    c.p = put(c.p, PRIORITIES.indexOf(a.priority));
    c.c.splice(k, del, a.completedAt);
    c.w = shifted(c.w, k, del, a.whenDate ?? undefined);
    c.d = shifted(c.d, k, del, a.deadline ?? undefined);
    c.r = shifted(c.r, k, del, a.recurrence ? [a.recurrence.rule, a.recurrence.basis, a.recurrence.done, a.recurrence.anchor] : undefined);
    c.x = shifted(c.x, k, del, a.trashedAt ?? undefined);
    c.q.splice(k, del, parentSlot(c, a.parentId));
    compactParents(c);
  },
  valid: (c) => {
    const a = c as AttrChunk;
    const n = a.u.length;
    const obj = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
    return typeof a.s === 'string' && a.s.length === n && typeof a.f === 'string' && a.f.length === n && typeof a.p === 'string' && a.p.length === n && obj(a.w) && obj(a.d) && Array.isArray(a.c) && a.c.length === n && obj(a.r) && obj(a.x) && Array.isArray(a.P) && Array.isArray(a.q) && a.q.length === n && a.q.every((j) => Number.isInteger(j) && j >= -1 && j < a.P.length);
  },
};

const TEXT: Layer<TextChunk, TodoText> = {
  prefix: 't',
  make: (c) => ({ title: fold(c.title), body: fold([c.notes ?? '', ...c.checklist.map((i) => i.title)].join('\n')) }),
  encode: (i, u, xs) => ({ v: 3, i, u, t: xs.map((x) => x.title), b: xs.map((x) => x.body) }),
  gather: (i, u, src, from, at) => {
    const n = at.length;
    const t = new Array<string>(n);
    const b = new Array<string>(n);
    for (let k = 0; k < n; k++) {
      const ch = src[from[k]!]!;
      t[k] = ch.t[at[k]!]!;
      b[k] = ch.b[at[k]!]!;
    }
    return { v: 3, i, u, t, b };
  },
  payload: (c, k) => ({ title: c.t[k]!, body: c.b[k]! }),
  replace: (x) => x,
  splice: (c, k, del, x) => {
    c.t.splice(k, del, x.title);
    c.b.splice(k, del, x.body);
  },
  valid: (c) => {
    const t = c as TextChunk;
    return Array.isArray(t.t) && t.t.length === t.u.length && Array.isArray(t.b) && t.b.length === t.u.length;
  },
};

/** The index of a container in a chunk's `P` (added when new; -1 for none). */
function parentSlot(c: AttrChunk, parentId: string | null): number {
  if (parentId === null) return -1;
  const at = c.P.indexOf(parentId);
  return at >= 0 ? at : c.P.push(parentId) - 1;
}

/** Renumbers `P` in first-use order and drops containers no entry uses (as a rebuild would). */
function compactParents(c: AttrChunk): void {
  const P: string[] = [];
  const map = new Map<number, number>();
  for (let k = 0; k < c.q.length; k++) {
    const j = c.q[k]!;
    if (j < 0) continue;
    let to = map.get(j);
    if (to === undefined) map.set(j, (to = P.push(c.P[j]!) - 1));
    c.q[k] = to;
  }
  c.P = P;
}

/** A by-position map after replacing `del` entries at k by one entry (value `v`, or none). */
function shifted<V>(m: Record<string, V>, k: number, del: number, v: V | undefined): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key in m) {
    const n = Number(key);
    if (n < k) out[n] = m[key]!;
    else if (n >= k + del) out[n - del + 1] = m[key]!;
  }
  if (v !== undefined) out[k] = v;
  return out;
}

function attrsAt(c: AttrChunk, k: number): IndexedTodo {
  const f = c.f.charCodeAt(k) - 48;
  const r = c.r[k];
  return {
    status: STATUSES[c.s.charCodeAt(k) - 48]!,
    whenDate: c.w[k] ?? null,
    deadline: c.d[k] ?? null,
    evening: (f & 1) !== 0,
    someday: (f & 2) !== 0,
    priority: PRIORITIES[c.p.charCodeAt(k) - 48] ?? null,
    completedAt: c.c[k]!,
    recurrence: r ? { rule: r[0], basis: r[1], done: r[2], anchor: r[3] } : null,
  };
}

type AnyLayer = Layer<AnyChunk, unknown>;
/** Runs `fn` on each layer. */
function eachLayer(fn: (layer: AnyLayer) => void): void {
  fn(ATTRS as unknown as AnyLayer);
  fn(TEXT as unknown as AnyLayer);
}

/** The chunk of a to-do id: FNV-1a over its UTF-16 code units, mod BUCKETS. */
export function bucketOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

const chunkId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}${bucket}`;
/** A bucket's delta chunk: the entries written since its base chunk was last sealed. */
const deltaId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}+${bucket}`;
const aad = (userId: string, id: string) => rowAad(userId, INDEX_TABLE, id);

/**
 * Entries a bucket's delta chunk holds before the write that would exceed it folds them into the
 * base chunk. A write re-seals the (small) delta chunk; one write in DELTA_MAX per bucket re-seals
 * the base. Per write that is about DELTA_MAX/2 + base/DELTA_MAX entries re-sealed instead of the
 * whole base (at 50,000 to-dos ~40 entries instead of ~800; docs/performance.md).
 */
export const DELTA_MAX = 32;

type Stmts = {
  get: Database.Statement;
  has: Database.Statement;
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
function stmts(db: Database.Database): Stmts {
  let s = stmtCache.get(db);
  if (!s) {
    s = {
      get: db.prepare(`SELECT sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`),
      has: db.prepare(`SELECT 1 FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`).pluck(true),
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

function openChunk<C extends AnyChunk, T>(o: IndexOwner, layer: Layer<C, T>, id: string, blob: Buffer): C | null {
  try {
    const c = JSON.parse(open(o.dek, aad(o.userId, id), blob).toString('utf8')) as C;
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

function writeChunk(db: Database.Database, o: IndexOwner, id: string, c: AnyChunk): void {
  stmts(db).put.run(o.userId, id, seal(o.dek, aad(o.userId, id), Buffer.from(JSON.stringify(c), 'utf8')));
}

/** A chunk's entries by id (for writes: decode, change, encode). */
function entriesOf<C extends AnyChunk, T>(layer: Layer<C, T>, c: C): Map<string, { u: number; x: T }> {
  const out = new Map<string, { u: number; x: T }>();
  const ids = idsOf(c);
  for (let k = 0; k < ids.length; k++) out.set(ids[k]!, { u: c.u[k]!, x: layer.payload(c, k) });
  return out;
}

function encodeEntries<C extends AnyChunk, T>(layer: Layer<C, T>, entries: Map<string, { u: number; x: T }>): C {
  const ids = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return layer.encode(
    ids.join('\n'),
    ids.map((id) => entries.get(id)!.u),
    ids.map((id) => entries.get(id)!.x),
  );
}

/**
 * Rebuilds one bucket of a layer from the to-do rows (opens each of them once): the base chunk
 * holds every entry, and the delta chunk is dropped.
 */
function rebuildChunk<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number, ids?: readonly string[]): C {
  const s = stmts(db);
  const mine = ids ?? (s.stamps.all(o.userId) as string[]).filter((id) => bucketOf(id) === bucket);
  const rows = s.sealedOf.all(o.userId, JSON.stringify(mine)) as (PlacedRow & { sealed: Buffer })[];
  const entries = new Map<string, { u: number; x: T }>();
  for (const r of rows) {
    const content = JSON.parse(open(o.dek, rowAad(o.userId, 'todos', r.id), r.sealed).toString('utf8')) as TodoContent;
    entries.set(r.id, { u: r.updatedAt, x: layer.make(content, r) });
  }
  const c = encodeEntries(layer, entries);
  writeChunk(db, o, chunkId(layer, bucket), c);
  s.drop.run(o.userId, deltaId(layer, bucket));
  return c;
}

/** A bucket's base chunk as stored, or rebuilt from the rows when missing or unreadable (then `rebuilt`). */
function baseFor<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number): { c: C; rebuilt: boolean } {
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
function deltaFor<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number): C | null {
  const s = stmts(db);
  const id = deltaId(layer, bucket);
  const row = s.get.get(o.userId, id) as { sealed: Buffer } | undefined;
  if (row) return openChunk(o, layer, id, row.sealed);
  if (!s.has.get(o.userId, chunkId(layer, bucket))) rebuildChunk(db, o, layer, bucket);
  return layer.encode('', [], []);
}

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

/** Stores a bucket's changed delta chunk, or, past DELTA_MAX entries, folds it into the base. */
function saveDelta<C extends AnyChunk, T>(db: Database.Database, o: IndexOwner, layer: Layer<C, T>, bucket: number, d: C): void {
  if (d.u.length <= DELTA_MAX) {
    if (d.u.length) writeChunk(db, o, deltaId(layer, bucket), d);
    else stmts(db).drop.run(o.userId, deltaId(layer, bucket));
    return;
  }
  const base = baseFor(db, o, layer, bucket);
  // A rebuilt base holds the rows as they are now (this write included) and dropped the delta.
  if (base.rebuilt) return;
  writeChunk(db, o, chunkId(layer, bucket), merged(layer, base.c, d) ?? mergedByEntries(layer, base.c, d));
  stmts(db).drop.run(o.userId, deltaId(layer, bucket));
}

/**
 * The fold: base and delta (each in id order) merged in one walk, a delta entry replacing the
 * base's entry for the same id, the columns copied as they are (no object per entry: at 40,000
 * to-dos this took the attribute fold from ~49 to ~5 µs per write, docs/performance.md). Null when
 * the ids are not strictly in order (then the caller merges by id).
 */
function merged<C extends AnyChunk, T>(layer: Layer<C, T>, base: C, d: C): C | null {
  const bi = idsOf(base);
  const di = idsOf(d);
  const max = bi.length + di.length;
  const ids: string[] = [];
  const u: number[] = [];
  const from = new Uint8Array(max);
  const at = new Int32Array(max);
  let i = 0;
  let e = 0;
  let last = '';
  while (i < bi.length || e < di.length) {
    const fromBase = e >= di.length || (i < bi.length && bi[i]! < di[e]!);
    const id = fromBase ? bi[i]! : di[e]!;
    if (ids.length && !(last < id)) return null;
    last = id;
    const n = ids.push(id) - 1;
    if (fromBase) {
      u.push(base.u[i]!);
      at[n] = i++;
    } else {
      if (i < bi.length && bi[i] === id) i++;
      u.push(d.u[e]!);
      from[n] = 1;
      at[n] = e++;
    }
  }
  return layer.gather(ids.join('\n'), u, [base, d], from.subarray(0, ids.length), at.subarray(0, ids.length));
}

/** The fold for chunks whose ids are not in order: every entry decoded, then encoded in id order. */
function mergedByEntries<C extends AnyChunk, T>(layer: Layer<C, T>, base: C, d: C): C {
  const entries = entriesOf(layer, base);
  const ids = idsOf(d);
  for (let k = 0; k < ids.length; k++) entries.set(ids[k]!, { u: d.u[k]!, x: layer.payload(d, k) });
  return encodeEntries(layer, entries);
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
      // Out of the base and out of the delta; a missing or unreadable chunk is rebuilt without
      // them on the next read.
      for (const id of [chunkId(layer, bucket), deltaId(layer, bucket)]) {
        const row = s.get.get(o.userId, id) as { sealed: Buffer } | undefined;
        const c = row && openChunk(o, layer, id, row.sealed);
        if (!c) continue;
        const entries = entriesOf(layer, c);
        let changed = false;
        for (const todoId of list) changed = entries.delete(todoId) || changed;
        if (!changed) continue;
        if (entries.size || id === chunkId(layer, bucket)) writeChunk(db, o, id, encodeEntries(layer, entries));
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
      for (const id of list) {
        const r = now.get(id);
        if (!r) continue;
        const inDelta = idsOf(d).indexOf(id);
        let x: unknown;
        if (inDelta >= 0) x = layer.payload(d, inDelta);
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

/**
 * Where each of the caller's rows sits in the opened chunks: chunk `slot[k]`, entry `at[k]`
 * (-1: no entry, e.g. a to-do created after the rows were read).
 */
type Located<C> = { chunks: C[]; slot: Uint16Array; at: Int32Array };

/**
 * `wholeAccount`: the rows are every to-do of the account. `sorted`: the rows are in id order
 * (e.g. read `ORDER BY id`), which lets them be matched to the chunks by position; rows given out
 * of order with `sorted` still get a right answer, through a rebuild.
 */
type LocateOpts = { wholeAccount?: boolean | undefined; sorted?: boolean | undefined };

/** Whether the joined id string holds `id` as the entry starting at `off`. */
function idAt(joined: string, off: number, id: string): boolean {
  const end = off + id.length;
  return joined.startsWith(id, off) && (end === joined.length || joined.charCodeAt(end) === 10);
}

/**
 * One layer's entries for the given rows (their plaintext ids and updatedAt, read by the caller
 * in this request, best in id order: a chunk is then matched by position). Opens only the buckets
 * these rows fall in (base and delta chunk; a delta entry overrides the base's entry for the same
 * id); a bucket whose base is missing, does not open, is of another format, or holds a stale
 * entry for one of the rows is rebuilt from the rows first. With `wholeAccount` (the rows are
 * every to-do of the account), a bucket holding entries of rows that no longer exist is rebuilt
 * too, so deleted to-dos do not linger in it.
 */
function locate<C extends AnyChunk, T>(
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
  // The deltas (small) at once; the bases one at a time below.
  const deltas = new Map<number, Buffer>();
  for (const r of s.some.all(o.userId, JSON.stringify(buckets.map((b) => deltaId(layer, b)))) as [string, Buffer][]) deltas.set(Number(r[0].slice(layer.prefix.length + 1)), r[1]);

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
    if (!c || (dBlob && !d) || !place(b, c, d, true)) stale.push(b);
  }
  // A bucket with rows (or a delta) but no base: the base was lost. An empty bucket with no
  // chunk is fine (nothing to index there).
  for (const b of buckets) if (!seen[b] && (deltas.has(b) || count[b + 1]! > count[b]!)) stale.push(b);
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

/** The indexed attributes of an account's rows, read column-wise (no object per to-do). */
export class AttrView {
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
 * Every to-do of an account as the attribute chunks hold it (format 3: with its placement), for
 * the views, the overview and saved filters: row k is entry `at[k]` of chunk `slot[k]`.
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
  ids: string[];
  stamps: Float64Array;
  trashedAt: (k: number) => number | null;
  parentId: (k: number) => string | null;
  attrs: AttrView;
};

export function accountIndex(db: Database.Database, o: IndexOwner): AccountIndex {
  const s = stmts(db);
  const baseNames = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => chunkId(ATTRS, b)));
  const deltaNames = JSON.stringify(Array.from({ length: BUCKETS }, (_, b) => deltaId(ATTRS, b)));
  const [count, sum] = s.totals.get(o.userId) as [number, number];
  /** Every bucket's entries in id order (a delta entry replacing the base's), if the totals match. */
  const read = (): AccountIndex | null => {
    const base: (AttrChunk | undefined)[] = [];
    const delta: (AttrChunk | undefined)[] = [];
    for (const r of s.some.all(o.userId, deltaNames) as [string, Buffer][]) {
      const c = openChunk(o, ATTRS, r[0], r[1]);
      if (!c) return null;
      delta[Number(r[0].slice(1))] = c;
    }
    // The bases one row at a time (their blobs die young).
    for (const r of s.each.iterate(o.userId, baseNames) as IterableIterator<[string, Buffer]>) {
      const c = openChunk(o, ATTRS, r[0], r[1]);
      if (!c) return null;
      base[Number(r[0])] = c;
    }
    // Every bucket's entries in id order, a delta entry replacing the base's, into arrays sized
    // for the most there can be.
    let max = 0;
    for (let b = 0; b < BUCKETS; b++) max += (base[b]?.u.length ?? 0) + (delta[b]?.u.length ?? 0);
    const chunks: AttrChunk[] = [];
    const slot = new Uint16Array(max);
    const at = new Int32Array(max);
    const stamps = new Float64Array(max);
    const ids = new Array<string>(max);
    let n = 0;
    let total = 0;
    for (let b = 0; b < BUCKETS; b++) {
      const c = base[b];
      const d = delta[b];
      if (!c) {
        // A delta without its base: the base was lost.
        if (d) return null;
        continue;
      }
      const cs = chunks.push(c) - 1;
      const bi = idsOf(c);
      const cu = c.u;
      let i = 0;
      if (d && d.u.length) {
        const ds = chunks.push(d) - 1;
        const di = idsOf(d);
        const du = d.u;
        let e = 0;
        while (e < di.length) {
          if (i < bi.length && bi[i]! < di[e]!) {
            ids[n] = bi[i]!;
            stamps[n] = cu[i]!;
            slot[n] = cs;
            at[n++] = i++;
          } else {
            if (i < bi.length && bi[i] === di[e]) i++;
            ids[n] = di[e]!;
            stamps[n] = du[e]!;
            slot[n] = ds;
            at[n++] = e++;
          }
        }
      }
      for (; i < bi.length; i++) {
        ids[n] = bi[i]!;
        stamps[n] = cu[i]!;
        slot[n] = cs;
        at[n++] = i;
      }
    }
    for (let k = 0; k < n; k++) total += stamps[k]! % 4294967296;
    if (n !== count || total !== sum) return null;
    ids.length = n;
    const located: Located<AttrChunk> = { chunks, slot: slot.subarray(0, n), at: at.subarray(0, n) };
    const chunkOf = (k: number) => chunks[located.slot[k]!]!;
    return {
      n,
      ids,
      stamps: stamps.subarray(0, n),
      trashedAt: (k) => chunkOf(k).x[located.at[k]!] ?? null,
      parentId: (k) => {
        const c = chunkOf(k);
        const j = c.q[located.at[k]!]!;
        return j < 0 ? null : c.P[j]!;
      },
      attrs: new AttrView(located),
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

