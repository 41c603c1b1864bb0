// Spec §4.1: cursor paging in the app order (stored sort key, ties by id). Cursors are opaque and
// MAC'd under the server key, bound to the user and the list, so a tampered or foreign cursor is
// refused at /cursor (DECISIONS §4).
import { and, eq, gt, gte, or, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { z } from 'zod';
import { LIMITS } from '../core/config.js';
import { invalid } from '../core/errors.js';
import { isRfc3339Instant } from '../core/calendar.js';
import { constantTimeEqual, hmacSha256, toB64u, fromB64u } from '../core/crypto/secrets.js';


/**
 * Query numbers arrive as strings over REST and as numbers over tRPC; both are accepted strictly.
 * The declared input type is the typed client's (tRPC): a number, so `limit` is not `unknown` in
 * `cairn/client` (issue 13 item 5); a REST query string is converted at run time.
 */
export const intParam = (min: number, max: number) =>
  z.preprocess(
    (v: number | undefined) => {
      const raw: unknown = v;
      return typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
    },
    z.number().int().min(min).max(max).optional(),
  );

/** `true`/`false` only; a query string's 'false' must not become true (REST-FACADE). Typed as a boolean for tRPC clients, as intParam. */
export const boolParam = z.preprocess(
  (v: boolean | undefined) => {
    const raw: unknown = v;
    return raw === 'true' ? true : raw === 'false' ? false : raw;
  },
  z.boolean().optional(),
);

export const UpdatedSince = z
  .string()
  .max(LIMITS.updatedSinceMax)
  // Issue 11.12: a real instant (2026-02-30 is refused, as date fields refuse it).
  .refine(isRfc3339Instant, 'must be an RFC 3339 instant, e.g. 2026-11-21T09:30:00Z');

export const ListQueryShape = {
  limit: intParam(1, LIMITS.page.maxLimit).meta({ description: 'Page size, 1..200, default 50.' }),
  cursor: z.string().max(LIMITS.cursorMax).optional().meta({ description: 'Opaque cursor from next_cursor.' }),
  updated_since: UpdatedSince.optional().meta({ description: 'RFC 3339 instant; only items updated at or after it.' }),
};

export type ListQuery = { limit?: number | undefined; cursor?: string | undefined; updated_since?: string | undefined };

export type CursorPos = { k: string; i: string };

export function encodeCursor(key: Buffer, scope: string, pos: CursorPos): string {
  const body = toB64u(Buffer.from(JSON.stringify([pos.k, pos.i]), 'utf8'));
  const mac = toB64u(hmacSha256(key, `${scope}.${body}`).subarray(0, 16));
  return `${body}.${mac}`;
}

export function decodeCursor(key: Buffer, scope: string, cursor: string): CursorPos {
  const bad = () => invalid('/cursor', 'The cursor is not valid for this list; start again without it.');
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw bad();
  const given = fromB64u(mac);
  const want = hmacSha256(key, `${scope}.${body}`).subarray(0, 16);
  if (!given || !constantTimeEqual(given, want)) throw bad();
  try {
    const arr = JSON.parse(fromB64u(body)!.toString('utf8')) as unknown;
    if (Array.isArray(arr) && arr.length === 2 && typeof arr[0] === 'string' && typeof arr[1] === 'string') {
      return { k: arr[0], i: arr[1] };
    }
  } catch {
    /* fall through */
  }
  throw bad();
}

export type PageSpec = {
  key: Buffer;
  scope: string;
  query: ListQuery;
  sortCol: SQLiteColumn;
  idCol: SQLiteColumn;
  updatedCol: SQLiteColumn;
  /** The sort column holds integers (times), not text keys. */
  numericSort?: boolean;
};

/** The WHERE parts a page needs (after the cursor, updated since) and the row count to fetch. */
export function pageConditions(spec: PageSpec): { where: SQL[]; fetch: number; limit: number } {
  const limit = spec.query.limit ?? LIMITS.page.defaultLimit;
  const where: SQL[] = [];
  if (spec.query.cursor) {
    const pos = decodeCursor(spec.key, spec.scope, spec.query.cursor);
    const k = spec.numericSort ? Number(pos.k) : pos.k;
    where.push(or(gt(spec.sortCol, k), and(eq(spec.sortCol, k), gt(spec.idCol, pos.i)))!);
  }
  if (spec.query.updated_since) where.push(gte(spec.updatedCol, Date.parse(spec.query.updated_since)));
  return { where, fetch: limit + 1, limit };
}

export type Page<T> = { data: T[]; next_cursor: string | null };

/** Cuts the fetched rows to the page and makes the next cursor from the last row kept. */
export function finishPage<R, T>(
  spec: PageSpec,
  rows: R[],
  limit: number,
  posOf: (row: R) => CursorPos,
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map(map),
    next_cursor: more && last ? encodeCursor(spec.key, spec.scope, posOf(last)) : null,
  };
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() });
}
