// The sealed per-account to-do index (issue 14). Views, saved filters, heading open counts and
// the to-do `status` filter need a few sealed attributes of many to-dos; opening every to-do row
// per request does not scale (~10 µs a row). The index keeps those attributes for every to-do of
// an account in BUCKETS sealed chunks (table todo_index_chunks), one JSON blob each, sealed with
// AES-256-GCM under the user's data key, AAD = user id + table + chunk id like every sealed row.
// A to-do belongs to the chunk `bucketOf(id)` (a hash of its id), so a write re-seals one chunk.
//
// Two layers of chunks, each BUCKETS chunks: the attribute chunks (ids '0'..'63') hold each
// to-do's sealed status, dates, flags, priority, completion time and recurrence; the search-text
// chunks (ids 't0'..'t63') hold its case-folded title and its case-folded notes and checklist
// (server/index/fold.ts), so the views never open search text and search never opens attributes.
// Every entry starts with the row's `updatedAt` (the freshness stamp). Plaintext relations
// (container, heading, tags, trash, sort keys) are not copied: readers take them from the rows.
//
// Consistency: every write of a to-do's sealed content goes through routers/todos/model.ts, which
// calls `indexTodo` / `unindexTodo` in the same transaction. Any other write of a to-do row bumps
// its `updatedAt`; a reader compares each entry's stamp with the row's and, on a mismatch or a
// missing chunk, rebuilds that chunk from the rows with the request's key before answering. So a
// lost, stale or deleted chunk costs one rebuild, never a wrong answer. Nothing decrypted outlives
// the request: chunks are opened into local values only.
import type Database from 'better-sqlite3';
import { open, rowAad, seal } from '../crypto/seal.js';
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

/** A to-do's search text, case-folded (server/index/fold.ts). */
export type TodoText = { title: string; body: string };

/** Who the index belongs to and the key that opens it (a request's principal). */
export type IndexOwner = { userId: string; dek: Buffer };

/** The plaintext of a to-do row that the index is checked against. */
export type StampedRow = { id: string; updatedAt: number };

// An entry on disk (inside the sealed chunk): compact positional form.
type Entry = [
  updatedAt: number,
  status: 0 | 1 | 2,
  whenDate: string | null,
  deadline: string | null,
  flags: number,
  priority: 0 | 1 | 2 | 3,
  completedAt: number | null,
  recurrence: [string, 'schedule' | 'completion', number, string | null] | 0,
];
type TextEntry = [updatedAt: number, title: string, body: string];
type Chunk<E> = { v: 1; e: Record<string, E> };

/** One layer of chunks: how an entry is made from the content, and read back. */
type Layer<E extends [number, ...unknown[]], T> = { prefix: string; make: (updatedAt: number, c: TodoContent) => E; read: (e: E) => T };

const ATTRS: Layer<Entry, IndexedTodo> = { prefix: '', make: (u, c) => toEntry(u, c), read: (e) => fromEntry(e) };
const TEXT: Layer<TextEntry, TodoText> = {
  prefix: 't',
  make: (u, c) => [u, fold(c.title), fold([c.notes ?? '', ...c.checklist.map((i) => i.title)].join('\n'))],
  read: (e) => ({ title: e[1], body: e[2] }),
};
type AnyEntry = [number, ...unknown[]];
/** Runs `fn` on each layer (a generic callback keeps each layer's entry type). */
function eachLayer(fn: <E extends AnyEntry, T>(layer: Layer<E, T>) => void): void {
  fn(ATTRS);
  fn(TEXT);
}

const STATUSES: Status[] = ['open', 'completed', 'canceled'];
const PRIORITIES: (Priority | null)[] = [null, 'low', 'medium', 'high'];

/** The chunk of a to-do id: FNV-1a over its UTF-16 code units, mod BUCKETS. */
export function bucketOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

function toEntry(updatedAt: number, a: IndexedTodo): Entry {
  const r = a.recurrence;
  return [
    updatedAt,
    STATUSES.indexOf(a.status) as 0 | 1 | 2,
    a.whenDate,
    a.deadline,
    (a.evening ? 1 : 0) | (a.someday ? 2 : 0),
    PRIORITIES.indexOf(a.priority) as 0 | 1 | 2 | 3,
    a.completedAt,
    r ? [r.rule, r.basis, r.done, r.anchor] : 0,
  ];
}

function fromEntry(e: Entry): IndexedTodo {
  const r = e[7];
  return {
    status: STATUSES[e[1]]!,
    whenDate: e[2],
    deadline: e[3],
    evening: (e[4] & 1) !== 0,
    someday: (e[4] & 2) !== 0,
    priority: PRIORITIES[e[5]] ?? null,
    completedAt: e[6],
    recurrence: r ? { rule: r[0], basis: r[1], done: r[2], anchor: r[3] } : null,
  };
}

const chunkId = (layer: { prefix: string }, bucket: number) => `${layer.prefix}${bucket}`;
const aad = (userId: string, id: string) => rowAad(userId, INDEX_TABLE, id);

type Stmts = {
  get: Database.Statement;
  some: Database.Statement;
  put: Database.Statement;
  stamps: Database.Statement;
  sealedOf: Database.Statement;
};
const stmtCache = new WeakMap<Database.Database, Stmts>();
function stmts(db: Database.Database): Stmts {
  let s = stmtCache.get(db);
  if (!s) {
    s = {
      get: db.prepare(`SELECT sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id = ?`),
      some: db.prepare(`SELECT id, sealed FROM ${INDEX_TABLE} WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`),
      put: db.prepare(`INSERT INTO ${INDEX_TABLE} (user_id, id, sealed) VALUES (?, ?, ?) ON CONFLICT (user_id, id) DO UPDATE SET sealed = excluded.sealed`),
      stamps: db.prepare('SELECT id, updated_at AS updatedAt FROM todos WHERE user_id = ?'),
      sealedOf: db.prepare('SELECT id, updated_at AS updatedAt, sealed FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))'),
    };
    stmtCache.set(db, s);
  }
  return s;
}

function openChunk<E>(o: IndexOwner, id: string, blob: Buffer): Chunk<E> | null {
  try {
    const c = JSON.parse(open(o.dek, aad(o.userId, id), blob).toString('utf8')) as Chunk<E>;
    return c && c.v === 1 && typeof c.e === 'object' ? c : null;
  } catch {
    // A chunk that does not open under this key (or is not ours) is rebuilt from the rows.
    return null;
  }
}

function writeChunk<E>(db: Database.Database, o: IndexOwner, id: string, c: Chunk<E>): void {
  stmts(db).put.run(o.userId, id, seal(o.dek, aad(o.userId, id), Buffer.from(JSON.stringify(c), 'utf8')));
}

/** Rebuilds one chunk of a layer from the to-do rows of its bucket (opens each of them once). */
function rebuildChunk<E extends [number, ...unknown[]], T>(db: Database.Database, o: IndexOwner, layer: Layer<E, T>, bucket: number, ids?: string[]): Chunk<E> {
  const s = stmts(db);
  const mine = ids ?? (s.stamps.all(o.userId) as StampedRow[]).filter((r) => bucketOf(r.id) === bucket).map((r) => r.id);
  const rows = s.sealedOf.all(o.userId, JSON.stringify(mine)) as { id: string; updatedAt: number; sealed: Buffer }[];
  const c: Chunk<E> = { v: 1, e: {} };
  for (const r of rows) {
    const content = JSON.parse(open(o.dek, rowAad(o.userId, 'todos', r.id), r.sealed).toString('utf8')) as TodoContent;
    c.e[r.id] = layer.make(r.updatedAt, content);
  }
  writeChunk(db, o, chunkId(layer, bucket), c);
  return c;
}

/** Reads (or, when missing or unreadable, rebuilds) the chunk of a layer a to-do belongs to. */
function chunkFor<E extends [number, ...unknown[]], T>(db: Database.Database, o: IndexOwner, layer: Layer<E, T>, bucket: number): Chunk<E> {
  const id = chunkId(layer, bucket);
  const row = stmts(db).get.get(o.userId, id) as { sealed: Buffer } | undefined;
  return (row && openChunk<E>(o, id, row.sealed)) ?? rebuildChunk(db, o, layer, bucket);
}

/**
 * Write hook: the to-do's new sealed content and its new `updatedAt`, in the caller's
 * transaction (same connection). Re-seals one chunk of each layer.
 */
export function indexTodo(db: Database.Database, o: IndexOwner, row: StampedRow, content: TodoContent): void {
  const bucket = bucketOf(row.id);
  eachLayer((layer) => {
    const c = chunkFor(db, o, layer, bucket);
    c.e[row.id] = layer.make(row.updatedAt, content);
    writeChunk(db, o, chunkId(layer, bucket), c);
  });
}

/** Write hook: the to-dos are gone (DELETE, a container delete's cascade). One re-seal per chunk. */
export function unindexTodos(db: Database.Database, o: IndexOwner, todoIds: readonly string[]): void {
  const byBucket = new Map<number, string[]>();
  for (const id of todoIds) byBucket.set(bucketOf(id), [...(byBucket.get(bucketOf(id)) ?? []), id]);
  for (const [bucket, list] of byBucket) {
    eachLayer((layer) => {
      const id = chunkId(layer, bucket);
      const row = stmts(db).get.get(o.userId, id) as { sealed: Buffer } | undefined;
      const c = row && openChunk<unknown>(o, id, row.sealed);
      if (!c) return; // a missing chunk is rebuilt without them on the next read
      const before = Object.keys(c.e).length;
      for (const todoId of list) delete c.e[todoId];
      if (Object.keys(c.e).length !== before) writeChunk(db, o, id, c);
    });
  }
}

/** Write hook: the to-do is gone. */
export function unindexTodo(db: Database.Database, o: IndexOwner, todoId: string): void {
  unindexTodos(db, o, [todoId]);
}

/**
 * Write hook for writes that change no indexed content but bump rows' `updatedAt` (heading
 * delete and convert, tag delete): the entries take the new stamp, so no reader rebuilds.
 */
export function restampTodos(db: Database.Database, o: IndexOwner, ids: readonly string[], updatedAt: number): void {
  const byBucket = new Map<number, string[]>();
  for (const id of ids) byBucket.set(bucketOf(id), [...(byBucket.get(bucketOf(id)) ?? []), id]);
  for (const [bucket, list] of byBucket) {
    eachLayer((layer) => {
      const c = chunkFor(db, o, layer, bucket);
      let changed = false;
      for (const id of list) {
        const e = c.e[id];
        if (e && e[0] !== updatedAt) {
          e[0] = updatedAt;
          changed = true;
        }
      }
      if (changed) writeChunk(db, o, chunkId(layer, bucket), c);
    });
  }
}

/**
 * One layer's entries for the given rows (their plaintext id and updatedAt, read by the caller in
 * this request). Opens only the chunks these rows fall in; a chunk that is missing, does not
 * open, or holds a stale entry for one of the rows is rebuilt from the rows first. With
 * `wholeAccount` (the rows are every to-do of the account), a chunk holding entries of rows that
 * no longer exist is rebuilt too, so deleted to-dos do not linger in it.
 */
function readLayer<E extends [number, ...unknown[]], T>(db: Database.Database, o: IndexOwner, layer: Layer<E, T>, rows: readonly StampedRow[], opts: { wholeAccount?: boolean }): Map<string, T> {
  const out = new Map<string, T>();
  if (!rows.length) return out;
  const byBucket = new Map<number, StampedRow[]>();
  for (const r of rows) {
    const b = bucketOf(r.id);
    const list = byBucket.get(b);
    if (list) list.push(r);
    else byBucket.set(b, [r]);
  }
  // A whole-account read checks every bucket: a chunk whose to-dos are all gone must be emptied.
  if (opts.wholeAccount) for (let b = 0; b < BUCKETS; b++) if (!byBucket.has(b)) byBucket.set(b, []);
  const s = stmts(db);
  const stored = new Map<string, Buffer>();
  const wanted = [...byBucket.keys()].map((b) => chunkId(layer, b));
  for (const r of s.some.all(o.userId, JSON.stringify(wanted)) as { id: string; sealed: Buffer }[]) stored.set(r.id, r.sealed);
  const stale: number[] = [];
  for (const [b, list] of byBucket) {
    const id = chunkId(layer, b);
    const blob = stored.get(id);
    // An empty bucket with no chunk is fine (nothing to index there).
    if (!blob && list.length === 0) continue;
    const c = blob ? openChunk<E>(o, id, blob) : null;
    let fresh = c !== null;
    const read: T[] = [];
    for (let n = 0; fresh && n < list.length; n++) {
      const e = c!.e[list[n]!.id];
      if (e === undefined || e[0] !== list[n]!.updatedAt) fresh = false;
      else read.push(layer.read(e));
    }
    // A whole-account read also wants no entries beyond the rows (deleted to-dos).
    if (fresh && opts.wholeAccount) {
      let count = 0;
      for (const key in c!.e) if (Object.prototype.hasOwnProperty.call(c!.e, key)) count++;
      fresh = count === list.length;
    }
    if (!fresh) {
      stale.push(b);
      continue;
    }
    for (let n = 0; n < list.length; n++) out.set(list[n]!.id, read[n]!);
  }
  if (stale.length) {
    // Rebuilding writes: one short transaction (nested as a savepoint inside a caller's).
    db.transaction(() => {
      for (const b of stale) {
        const c = rebuildChunk(db, o, layer, b, opts.wholeAccount ? byBucket.get(b)!.map((r) => r.id) : undefined);
        for (const r of byBucket.get(b)!) {
          const e = c.e[r.id];
          if (e) out.set(r.id, layer.read(e));
        }
      }
    })();
  }
  return out;
}

/** The indexed attributes of the given rows (views, filters, open counts, the status filter). */
export function indexedAttrs(db: Database.Database, o: IndexOwner, rows: readonly StampedRow[], opts: { wholeAccount?: boolean } = {}): Map<string, IndexedTodo> {
  return readLayer(db, o, ATTRS, rows, opts);
}

/** The case-folded search text of the given rows (search). */
export function indexedTexts(db: Database.Database, o: IndexOwner, rows: readonly StampedRow[], opts: { wholeAccount?: boolean } = {}): Map<string, TodoText> {
  return readLayer(db, o, TEXT, rows, opts);
}
