// The sealed to-do index's vocabulary (routers/todo-index/index.ts): its table, buckets and chunk
// format, the entries it keeps, and the Layer contract each kind of chunk implements.


export const INDEX_TABLE = 'todo_index_chunks';
/** Chunks per account: at 50,000 to-dos about 800 entries (~50 KB) each. */
export const BUCKETS = 64;

export type Status = 'open' | 'completed' | 'canceled';
export type Priority = 'low' | 'medium' | 'high';

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
export type Placed = { trashedAt: number | null; parentId: string | null };

// Chunk format (FORMAT): columnar, one array or string per attribute, entries sorted by id (stored
// as JSON for text chunks, binary for attribute chunks: attr-bytes.ts, Layer.toBytes),
// so a reader walks a chunk column-wise without building an object per entry, and matches a
// chunk's entries to the rows (read in id order) by position. A chunk of another version, or one
// that does not open, is rebuilt from the rows (so a format change rebuilds every chunk).
export const FORMAT = 3;
export type Rec = [rule: string, basis: 'schedule' | 'completion', done: number, anchor: string | null];
// Every chunk: `i` the ids joined by '\n' (one string: ids are UUIDs, validated at the API edge),
// `u` their stamps. Attribute chunks: statuses, flags and priorities as one digit per entry;
// when-dates, deadlines and recurrences by position (most to-dos have none); completion times.
// Format 3 adds the rows' plaintext placement (sealed here like the rest): `x` trash times by
// position (few), `P` the chunk's distinct containers and `q` each entry's index into `P` (-1: none).
export type AttrChunk = { v: 3; i: string; u: number[]; s: string; f: string; p: string; w: Record<string, string>; d: Record<string, string>; c: (number | null)[]; r: Record<string, Rec>; x: Record<string, number>; P: string[]; q: number[] };
/** A search-text chunk: ids, stamps, folded titles and folded bodies. */
export type TextChunk = { v: 3; i: string; u: number[]; t: string[]; b: string[] };
export type AnyChunk = { v: number; i: string; u: number[] };
export const idsOf = (c: AnyChunk): string[] => (c.i === '' ? [] : c.i.split('\n'));

/** One layer of chunks: the payload made from a to-do's content, and the chunk's (de)coding. */
export type Layer<C extends AnyChunk, T> = {
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
  /** The chunk's stored plaintext (sealed by storage.ts), and back: throws on any other form (then the chunk is rebuilt). */
  toBytes: (c: C) => Buffer;
  fromBytes: (plain: Buffer) => C;
};
