// Every error → an RFC 9457 problem, in one place (REST-FACADE: the adapter's own error body is
// replaced). Only status < 500 details reach the client; a 500 says `internal` and the cause is
// logged with the request id.
import { TRPCError } from '@trpc/server';
import { AppError, ERROR_TABLE, pointerOf, type ErrorCode, type FieldError } from '../../server/errors.js';
import type { ApiProblem } from '../api-types.js';

/** The problem object; declared in routers/api-types.ts, which typed clients read (issue 13 item 5). */
export type Problem = ApiProblem;

export type ProblemResult = { problem: Problem; headers: Record<string, string>; internalCause?: unknown };

type ZodIssueLike = { code: string; path: PropertyKey[]; message: string; keys?: string[] };

function isZodError(e: unknown): e is { issues: ZodIssueLike[] } {
  return !!e && typeof e === 'object' && (e as Error).name === 'ZodError' && Array.isArray((e as { issues?: unknown }).issues);
}

/** One {pointer, message} per zod issue; one per unknown key (REST-FACADE: keys[] with path []). */
export function zodFieldErrors(issues: ZodIssueLike[], prefix: PropertyKey[] = []): FieldError[] {
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
    };
  }
  if (error instanceof TRPCError) {
    if (error.cause instanceof AppError) return toProblem(error.cause);
    if (isZodError(error.cause)) {
      return { problem: build('validation_failed', 'The request is invalid.', zodFieldErrors(error.cause.issues)), headers: {} };
    }
    switch (error.code) {
      case 'PARSE_ERROR':
        return { problem: build('validation_failed', 'The body is not valid JSON.', [{ pointer: '', message: 'not valid JSON' }]), headers: {} };
      case 'PAYLOAD_TOO_LARGE':
        return { problem: build('payload_too_large', 'The request body is too large.'), headers: {} };
      case 'UNSUPPORTED_MEDIA_TYPE':
        return { problem: build('unsupported_media_type', 'Request bodies must be application/json.'), headers: {} };
      case 'NOT_FOUND':
        return { problem: build('not_found', 'No route matches this path.'), headers: {} };
      default:
        break;
    }
  }
  return { problem: build('internal', undefined), headers: {}, internalCause: error };
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
