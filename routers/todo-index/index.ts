// The sealed per-account to-do index (issue 14). Views, saved filters, heading open counts and
// the to-do `status` filter need a few sealed attributes of many to-dos; opening every to-do row
// per request does not scale (~10 µs a row). The index keeps those attributes for every to-do of
// an account in BUCKETS sealed chunks (table todo_index_chunks), one blob each, sealed with
// the seal module (docs/sealed-format.md) under the user's data key, AAD = user id + table + chunk id like every sealed row.
// A to-do belongs to the bucket `bucketOf(id)` (a hash of its id).
//
// Each bucket has a base chunk and, since issue 12's write pass, a small delta chunk ('+N', 't+N')
// holding the entries written since the base was last sealed; a delta entry replaces the base's
// entry for the same id. A write re-seals only its bucket's delta chunk in each layer (a few KB),
// and the write that would take a delta past DELTA_MAX entries folds it into the base (one base
// re-seal per DELTA_MAX writes to a bucket). Readers open base and delta together. Before deltas,
// every write re-sealed two chunks that grow with the account (~150 KB at 50,000 to-dos).
// Since issue 29 a grown bucket (base blob ≥ TIER.fromBytes) has a third tier between them: a
// full delta is folded into the bucket's middle chunk ('~N', 't~N'), and only a middle chunk past
// TIER.midMax entries is folded into the base, so the base re-seals a write pays for stay about
// as rare per write as the account grows (storage.ts TIER; docs/performance.md "Index upkeep at
// 50,000 to-dos"). Readers open base, middle chunk and delta together (a delta entry overrides
// the middle chunk's, either the base's). Data written before has no middle chunks and reads as it
// did. Chunks are stored binary since issue 29 (attr-bytes.ts, text-bytes.ts: the views and
// search read them in place).
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
//
// The parts, one file each: types.ts (the table, buckets, chunk format and the Layer contract),
// layers.ts (the attribute and search-text layers), storage.ts (buckets, statements, opening,
// sealing and rebuilding chunks), merge.ts (the fold of a delta into its base), writes.ts (the
// write hooks), locate.ts (matching rows to entries), reads.ts (the readers), fold.ts (case
// folding of search text). Importers use this file.
export { BUCKETS, FORMAT, INDEX_TABLE, type IndexOwner, type IndexedTodo, type PlacedRow, type StampedRow, type TodoContent, type TodoText } from './types.js';
export { DELTA_MAX, TIER, bucketOf } from './storage.js';
export { indexTodo, restampTodos, unindexTodo, unindexTodos } from './writes.js';
export { Arena, AttrView, accountIndex, todoTotals, withAccountArena, type AttrReader, attrView, indexedAttrs, scanAccountTexts, scanTexts, type AccountIndex } from './reads.js';
export { ATTR_BYTES_VERSION, attrsToBytes } from './attr-bytes.js';
export { TEXT_BYTES_VERSION, textToBytes } from './text-bytes.js';
export { chunkFromPlain } from './layers.js';
