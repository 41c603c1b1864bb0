// What a tool answers (issue 31 item 3, docs/mcp.md "Results"): `structuredContent` matching the
// tool's outputSchema plus a compact text summary; a failure is a tool error (`isError`) carrying
// the problem's code, message and field pointers, never a protocol error, so the model can read it
// and correct its call. Every result stays under RESULT_CAP_BYTES: a list is cut where it would
// pass the cap and goes on from a cursor.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { AppError, ERROR_TABLE, type FieldError } from '../core/errors.js';
import { fromB64u, toB64u } from '../core/crypto/secrets.js';
import { invalidDetail, toProblem, zodFieldErrors } from '../routers/middleware/problems.js';
import type { Deps } from '../routers/deps.js';

/** docs/mcp.md "Results": no tool result is larger than this (the JSON of the whole result). */
export const RESULT_CAP_BYTES = 256 * 1024;
/** What the envelope, the summary and the paging fields may take besides the items. */
const ENVELOPE_BYTES = 8 * 1024;

export type ToolOutput = { data: Record<string, unknown>; summary: string };

export function ok(out: ToolOutput): CallToolResult {
  return { content: [{ type: 'text', text: out.summary }], structuredContent: out.data };
}

/** A field pointer of the model's input, renamed to the tool argument it came from. */
export type PointerMap = (pointer: string) => string;

/**
 * Any failure as a tool error: the problem's code, its message (detail) and its field errors.
 * A server fault says only `internal` (the cause is logged with the request id, as REST does).
 */
export function toolError(deps: Deps, requestId: string, e: unknown, mapPointer: PointerMap = (p) => p): CallToolResult {
  const { problem, code, internalCause } = toProblem(e);
  if (internalCause !== undefined) deps.log.error({ err: internalCause, requestId }, 'mcp tool failed');
  const errors = (problem.errors ?? []).map((f) => ({ pointer: mapPointer(f.pointer), message: f.message }));
  const message = problem.detail ?? ERROR_TABLE[code].title;
  const error: Record<string, unknown> = { code, status: problem.status, message };
  if (errors.length) {
    error.pointer = errors[0]!.pointer;
    error.errors = errors;
  }
  const retry = e instanceof AppError ? e.headers['Retry-After'] : undefined;
  if (retry) error.retry_after = Number(retry);
  // The detail of validation_failed already names the fields; other codes get their pointers appended.
  const where = errors.length && code !== 'validation_failed' ? ` (${errors.map((f) => `${f.pointer || '/'}: ${f.message}`).join('; ')})` : '';
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}${where}` }], structuredContent: { error } };
}

/** A zod failure of a tool's arguments, as the `validation_failed` problem REST gives. */
export function invalidArgs(issues: Parameters<typeof zodFieldErrors>[0], prefix: PropertyKey[] = []): AppError {
  const errors: FieldError[] = zodFieldErrors(issues, prefix);
  return new AppError('validation_failed', invalidDetail(errors), { errors });
}

/** Adds a prefix (e.g. `/todos/2`) to every pointer of a model's error, renaming fields on the way. */
export function prefixPointers(e: unknown, prefix: string, rename: Record<string, string> = {}): unknown {
  if (!(e instanceof AppError) || !e.errors) return e;
  const errors = e.errors.map((f) => {
    const head = Object.keys(rename).find((k) => f.pointer === k || f.pointer.startsWith(k + '/'));
    const pointer = head ? rename[head]! + f.pointer.slice(head.length) : f.pointer;
    return { pointer: prefix + pointer, message: f.message };
  });
  return new AppError(e.problemCode, e.detail, { errors, headers: e.headers, cause: e.cause });
}

// ---- Paging past the cap --------------------------------------------------------------------

/**
 * A tool cursor: the model's own cursor (`c`, opaque and MAC'd by the model) and how many items of
 * that page were already answered (`s`), bound to one listing (`q`: the tool and its filters), so
 * a page cut by the size cap goes on where it stopped.
 */
type CursorState = { q: string; c: string | null; s: number };

export function encodeToolCursor(st: CursorState): string {
  return toB64u(Buffer.from(JSON.stringify([st.q, st.c, st.s]), 'utf8'));
}

export function decodeToolCursor(cursor: string | undefined, q: string): { c: string | null; s: number } {
  if (cursor === undefined) return { c: null, s: 0 };
  const bad = () => new AppError('validation_failed', 'The cursor is not valid for this listing; start again without it.', { pointer: '/cursor' });
  const raw = fromB64u(cursor);
  if (!raw) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 3 || v[0] !== q || (v[1] !== null && typeof v[1] !== 'string') || !Number.isSafeInteger(v[2]) || (v[2] as number) < 0) throw bad();
  return { c: v[1] as string | null, s: v[2] as number };
}

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/**
 * One page of a listing under the size cap. `load(cursor, n)` is the model's page (at most `n`
 * items after its cursor; an unpaged model answers everything with `next: null`). The items after
 * the `s` already answered are taken while the result stays under the cap (at least one, cut down
 * by `shrink` when even one is too large); `next_cursor` goes on from the first item left out.
 */
export function pageUnderCap<T>(opts: {
  q: string;
  cursor: string | undefined;
  limit: number;
  /** The model's page size bound (LIMITS.page.maxLimit), or Infinity for an unpaged model. */
  modelMax: number;
  load: (cursor: string | undefined, n: number) => { items: T[]; next: string | null };
  /** Bytes already spent by the rest of the result (summary, other fields). */
  overhead?: number;
  /** Makes one item fit alone (cuts its longest text), when it does not. */
  shrink?: (item: T, budget: number) => T;
}): { items: T[]; next_cursor: string | null } {
  const { c, s } = decodeToolCursor(opts.cursor, opts.q);
  const n = Math.min(opts.modelMax, s + opts.limit);
  const page = opts.load(c ?? undefined, n);
  const rest = page.items.slice(s, s + opts.limit);
  const budget = RESULT_CAP_BYTES - ENVELOPE_BYTES - (opts.overhead ?? 0);
  const items: T[] = [];
  let used = 2;
  for (const item of rest) {
    const size = jsonBytes(item) + 1;
    if (used + size > budget) {
      if (items.length === 0) items.push(opts.shrink ? opts.shrink(item, budget - used) : item);
      break;
    }
    items.push(item);
    used += size;
  }
  const taken = s + items.length;
  if (taken < page.items.length) return { items, next_cursor: encodeToolCursor({ q: opts.q, c, s: taken }) };
  return { items, next_cursor: page.next ? encodeToolCursor({ q: opts.q, c: page.next, s: 0 }) : null };
}

/** Cuts `text` to at most `bytes` UTF-8 bytes (on a character boundary). */
export function cutText(text: string, bytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= bytes) return text;
  let out = Buffer.from(text, 'utf8').subarray(0, Math.max(0, bytes)).toString('utf8');
  if (out.endsWith('\uFFFD')) out = out.slice(0, -1);
  return out;
}
