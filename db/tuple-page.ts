// Cursor paging over a composite order (spec §4.1): the task core orders rows by several keys
// (container, heading, sort key, id), so the cursor carries the whole tuple. It reuses the MAC'd
// cursor of db/paging.ts. Lists filtered on a sealed field (spec §1: `status`) decrypt inside the
// request: rows are scanned in order until the page is full, each decryption counted against the
// request's budget (account_too_large).
import { sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { LIMITS } from '../core/config.js';
import { invalid } from '../core/errors.js';
import type { DecryptBudget } from '../core/decrypt-budget.js';
import { decodeCursor, encodeCursor, type ListQuery, type Page } from './paging.js';

export type TuplePos = { k: string[]; i: string };

export function encodeTupleCursor(key: Buffer, scope: string, pos: TuplePos): string {
  return encodeCursor(key, scope, { k: JSON.stringify(pos.k), i: pos.i });
}

export function decodeTupleCursor(key: Buffer, scope: string, cursor: string, arity: number): TuplePos {
  const pos = decodeCursor(key, scope, cursor);
  try {
    const k = JSON.parse(pos.k) as unknown;
    if (Array.isArray(k) && k.length === arity && k.every((v) => typeof v === 'string')) return { k: k as string[], i: pos.i };
  } catch {
    /* fall through */
  }
  throw invalid('/cursor', 'The cursor is not valid for this list; start again without it.');
}

/** Rows strictly after `pos` in the order (cols…, id): a row-value comparison. */
export function afterTuple(cols: SQL[], idCol: SQLiteColumn, pos: TuplePos): SQL {
  const left = sql.join([...cols, sql`${idCol}`], sql`, `);
  const right = sql.join([...pos.k.map((v) => sql`${v}`), sql`${pos.i}`], sql`, `);
  return sql`(${left}) > (${right})`;
}

/** `afterTuple` for a prepared query: the position comes as placeholders `k0`…`k{arity-1}` and `i`. */
export function afterTuplePlaceholders(cols: SQL[], idCol: SQLiteColumn): SQL {
  const left = sql.join([...cols, sql`${idCol}`], sql`, `);
  const right = sql.join([...cols.map((_, n) => sql`${sql.placeholder(`k${n}`)}`), sql`${sql.placeholder('i')}`], sql`, `);
  return sql`(${left}) > (${right})`;
}

/** The placeholder values `afterTuplePlaceholders` reads. */
export function tupleParams(pos: TuplePos): Record<string, string> {
  const out: Record<string, string> = { i: pos.i };
  pos.k.forEach((v, n) => (out[`k${n}`] = v));
  return out;
}

export function updatedSince(col: SQLiteColumn, query: ListQuery): SQL | undefined {
  return query.updated_since ? sql`${col} >= ${Date.parse(query.updated_since)}` : undefined;
}

export type TuplePageSpec<R, T> = {
  key: Buffer;
  scope: string;
  query: ListQuery;
  arity: number;
  /** Up to `n` rows in list order, strictly after `after` when given. */
  fetch: (after: TuplePos | null, n: number) => R[];
  posOf: (row: R) => TuplePos;
  /** The wire item, or null when a sealed-field filter leaves the row out. */
  map: (row: R) => T | null;
  /** Present when `map` filters on sealed content: every row opened counts against it. */
  budget?: DecryptBudget;
};

export function tuplePage<R, T>(spec: TuplePageSpec<R, T>): Page<T> {
  const limit = spec.query.limit ?? LIMITS.page.defaultLimit;
  let pos = spec.query.cursor ? decodeTupleCursor(spec.key, spec.scope, spec.query.cursor, spec.arity) : null;
  if (!spec.budget) {
    // One fetch of limit + 1 rows: the extra row only says whether there is more; it is not mapped
    // (mapping opens sealed content).
    const rows = spec.fetch(pos, limit + 1);
    const more = rows.length > limit;
    const n = more ? limit : rows.length;
    const data = new Array<T>(n);
    for (let i = 0; i < n; i++) data[i] = spec.map(rows[i]!) as T;
    return { data, next_cursor: more && n > 0 ? encodeTupleCursor(spec.key, spec.scope, spec.posOf(rows[n - 1]!)) : null };
  }
  const kept: { row: R; item: T }[] = [];
  const batch = Math.max(limit + 1, 100);
  for (;;) {
    const rows = spec.fetch(pos, batch);
    for (const row of rows) {
      spec.budget.spend();
      const item = spec.map(row);
      if (item !== null) kept.push({ row, item });
      if (kept.length > limit) break;
    }
    if (kept.length > limit || rows.length < batch) break;
    pos = spec.posOf(rows[rows.length - 1]!);
  }
  const more = kept.length > limit;
  const page = more ? kept.slice(0, limit) : kept;
  const last = page[page.length - 1];
  return {
    data: page.map((p) => p.item),
    next_cursor: more && last ? encodeTupleCursor(spec.key, spec.scope, spec.posOf(last.row)) : null,
  };
}
