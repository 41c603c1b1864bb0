// Every error → an RFC 9457 problem, in one place (REST-FACADE: the adapter's own error body is
// replaced). Only status < 500 details reach the client; a 500 says `internal` and the cause is
// logged with the request id.
import { AsyncLocalStorage } from 'node:async_hooks';
import { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { AppError, ERROR_TABLE, pointerOf, type ErrorCode, type FieldError } from '../../core/errors.js';
import type { ApiProblem } from '../api-types.js';

/** The problem object; declared in routers/api-types.ts, which typed clients read (issue 13 item 5). */
export type Problem = ApiProblem;

export type ProblemResult = { problem: Problem; headers: Record<string, string>; internalCause?: unknown; code: ErrorCode };

type ZodIssueLike = { code: string; path: PropertyKey[]; message: string; keys?: string[] };

function isZodError(e: unknown): e is { issues: ZodIssueLike[] } {
  return !!e && typeof e === 'object' && (e as Error).name === 'ZodError' && Array.isArray((e as { issues?: unknown }).issues);
}

/**
 * One {pointer, message} per field (issue 13.7: the first issue of a field, when a value breaks
 * several rules); one per unknown key (REST-FACADE: keys[] with path []).
 */
export function zodFieldErrors(issues: ZodIssueLike[], prefix: PropertyKey[] = []): FieldError[] {
  const all = fieldErrorsOf(issues, prefix);
  const seen = new Set<string>();
  return all.filter((e) => !seen.has(e.pointer) && seen.add(e.pointer));
}

function fieldErrorsOf(issues: ZodIssueLike[], prefix: PropertyKey[]): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const key of issue.keys) {
        // zod's default message names every key at once; a schema's own message is kept.
        const message = /^Unrecognized key/.test(issue.message) ? `unknown property "${key}"` : issue.message;
        out.push({ pointer: pointerOf([...prefix, ...issue.path, key]), message });
      }
    } else {
      out.push({ pointer: pointerOf([...prefix, ...issue.path]), message: issue.message });
    }
  }
  return out;
}

/**
 * Issue 13.6: the detail names what is wrong in a sentence (a /trpc client shows it as the error
 * message): "The request is invalid: /title: required." At most three fields, then a count.
 */
export function invalidDetail(errors: FieldError[]): string {
  if (!errors.length) return 'The request is invalid.';
  const parts = errors.slice(0, 3).map((e) => `${e.pointer || 'the body'}: ${e.message}`);
  const more = errors.length > 3 ? ` (and ${errors.length - 3} more)` : '';
  return `The request is invalid: ${parts.join('; ')}${more}.`;
}

function build(code: ErrorCode, detail: string | undefined, errors?: FieldError[]): Problem {
  const entry = ERROR_TABLE[code];
  const p: Problem = { type: code, title: entry.title, status: entry.status };
  if (detail) p.detail = detail;
  if (errors && errors.length) p.errors = errors;
  return p;
}

export function toProblem(error: unknown): ProblemResult {
  if (error instanceof AppError) {
    const internal = error.problemCode === 'internal';
    return {
      problem: build(error.problemCode, internal ? undefined : error.detail, internal ? undefined : error.errors),
      headers: error.headers,
      internalCause: internal ? error : undefined,
      code: error.problemCode,
    };
  }
  if (error instanceof TRPCError) {
    if (error.cause instanceof AppError) return toProblem(error.cause);
    // Input validation only: a zod error behind any other code (an output that fails its schema)
    // is a server fault and stays a 500 below.
    if (error.code === 'BAD_REQUEST' && isZodError(error.cause)) {
      const errors = zodFieldErrors(error.cause.issues);
      return { problem: build('validation_failed', invalidDetail(errors), errors), headers: {}, code: 'validation_failed' };
    }
    // tRPC's own refusals (issue 11.6): the problem REST gives for the same mistake.
    switch (error.code) {
      case 'PARSE_ERROR':
        return { problem: build('validation_failed', 'The body is not valid JSON.', [{ pointer: '', message: 'not valid JSON' }]), headers: {}, code: 'validation_failed' };
      case 'BAD_REQUEST':
        // A malformed batch or input envelope; tRPC's message names the mistake and nothing internal.
        return { problem: build('validation_failed', `The request is invalid: ${error.message}`, [{ pointer: '', message: error.message }]), headers: {}, code: 'validation_failed' };
      case 'METHOD_NOT_SUPPORTED':
        return { problem: build('method_not_allowed', error.message), headers: {}, code: 'method_not_allowed' };
      case 'PAYLOAD_TOO_LARGE':
        return { problem: build('payload_too_large', 'The request body is too large.'), headers: {}, code: 'payload_too_large' };
      case 'UNSUPPORTED_MEDIA_TYPE':
        return { problem: build('unsupported_media_type', 'Request bodies must be application/json.'), headers: {}, code: 'unsupported_media_type' };
      case 'NOT_FOUND':
        return { problem: build('not_found', 'No route matches this path.'), headers: {}, code: 'not_found' };
      default:
        break;
    }
  }
  return { problem: build('internal', undefined), headers: {}, internalCause: error, code: 'internal' };
}

/** Fills the fields that depend on where the problem is served. */
export function finishProblem(p: Problem, publicUrl: string, requestId: string, instance?: string): Problem {
  return {
    ...p,
    type: `${publicUrl}/errors/${p.type}`,
    ...(instance ? { instance } : {}),
    request_id: requestId,
  };
}

/** Where a problem is being served: what `finishProblem` needs (set around each /trpc request). */
export type ProblemScope = { publicUrl: string; requestId: string; instance?: string | undefined };

/**
 * The /trpc mount runs each request inside this scope (server/app.ts), so tRPC's error formatter
 * can finish problems even for errors raised before a context exists (a bad batch, a refused body).
 */
export const problemScope = new AsyncLocalStorage<ProblemScope>();

/**
 * Issue 11.6 / 13.6: a /trpc error says exactly what REST says. The envelope stays tRPC's (its
 * client needs it); `message` is the problem's detail (its title when there is none, so a 500 says
 * only "Internal error"), `data.httpStatus` the problem's status (tRPC answers with it), `code` and
 * `data.code` the tRPC code of that problem, and `data.problem` the whole problem.
 */
export function trpcErrorShape(error: unknown, path: string | undefined, scope: ProblemScope | undefined) {
  const { problem, code } = toProblem(error);
  const full = scope ? finishProblem(problem, scope.publicUrl, scope.requestId, scope.instance) : problem;
  const trpcCode = ERROR_TABLE[code].trpc;
  return {
    message: full.detail ?? full.title,
    code: TRPC_ERROR_CODES_BY_KEY[trpcCode],
    data: { code: trpcCode, httpStatus: full.status, path, problem: full },
  };
}
