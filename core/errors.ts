// Errors in one table (ARCHITECTURE: documenso, node-oidc-provider): models throw
// AppError(code, detail, …) with the spec's codes (§7); this table maps code → HTTP status →
// problem title. AppError extends TRPCError so /trpc clients get the matching tRPC code too.
import { TRPCError } from '@trpc/server';

type TrpcCode = ConstructorParameters<typeof TRPCError>[0]['code'];

export const ERROR_TABLE = {
  unauthorized: { status: 401, title: 'Unauthorized', trpc: 'UNAUTHORIZED', about: 'The credential is missing, malformed, expired or revoked, or every credential of the account was disconnected (a password change, a key rotation or revoke-all; docs/security.md "Everything ends at once"). Sign in or approve the app again.' },
  grant_revoked: { status: 401, title: 'Grant revoked', trpc: 'UNAUTHORIZED', about: 'The user revoked the grant behind this token. Send the user through approval again.' },
  grant_expired: { status: 401, title: 'Grant expired', trpc: 'UNAUTHORIZED', about: 'The grant is older than its lifetime and needs approval again.' },
  forbidden_scope: { status: 403, title: 'Missing scope', trpc: 'FORBIDDEN', about: 'The credential is valid but lacks a scope the route needs, or the route is for first-party sessions only. Refreshing does not help.' },
  forbidden: { status: 403, title: 'Forbidden', trpc: 'FORBIDDEN', about: 'The server does not allow this action, for example sign-up when CAIRN_ALLOW_SIGNUP is false.' },
  not_found: { status: 404, title: 'Not found', trpc: 'NOT_FOUND', about: 'No resource of this account has that id, or no route has that path.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', trpc: 'METHOD_NOT_SUPPORTED', about: 'The path exists but not with this method; the Allow header lists the methods it takes.' },
  duplicate_id: { status: 409, title: 'Duplicate id', trpc: 'CONFLICT', about: 'A resource with the client-supplied id already exists.' },
  conflict: { status: 409, title: 'Conflict', trpc: 'CONFLICT', about: 'The request clashes with the current state, for example deleting a live folder or exceeding the number of active tokens.' },
  payload_too_large: { status: 413, title: 'Payload too large', trpc: 'PAYLOAD_TOO_LARGE', about: 'The request body exceeds the limit (1 MiB for JSON).' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', trpc: 'UNSUPPORTED_MEDIA_TYPE', about: 'Request bodies must be application/json.' },
  malformed_request: { status: 400, title: 'Malformed request', trpc: 'BAD_REQUEST', about: 'The request line or headers could not be parsed as HTTP (for example raw bytes that are not allowed in a path). Nothing was done.' },
  request_timeout: { status: 408, title: 'Request timeout', trpc: 'TIMEOUT', about: 'The request did not arrive completely in time. Nothing was done.' },
  headers_too_large: { status: 431, title: 'Request header fields too large', trpc: 'BAD_REQUEST', about: 'The request line and headers together exceed the server\'s limit (16 KiB), for example a very long path. Nothing was done.' },
  validation_failed: { status: 422, title: 'Validation failed', trpc: 'UNPROCESSABLE_CONTENT', about: 'The body, query or a header is invalid. Each entry of `errors` names the offending field with a JSON pointer.' },
  account_too_large: { status: 422, title: 'Account too large', trpc: 'UNPROCESSABLE_CONTENT', about: 'The operation decrypts inside the request and the account is past the size it can handle in one request.' },
  rate_limited: { status: 429, title: 'Rate limited', trpc: 'TOO_MANY_REQUESTS', about: 'A rate-limit bucket is exhausted. Retry after the number of seconds in Retry-After.' },
  internal: { status: 500, title: 'Internal error', trpc: 'INTERNAL_SERVER_ERROR', about: 'The server failed. The request id identifies it in the server log.' },
} as const satisfies Record<string, { status: number; title: string; trpc: TrpcCode; about: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export type FieldError = { pointer: string; message: string };

export type AppErrorOptions = {
  pointer?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
};

export class AppError extends TRPCError {
  readonly problemCode: ErrorCode;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, opts: AppErrorOptions = {}) {
    super({ code: ERROR_TABLE[code].trpc, message: detail, cause: opts.cause });
    this.name = 'AppError';
    this.problemCode = code;
    this.detail = detail;
    this.errors = opts.errors ?? (opts.pointer !== undefined ? [{ pointer: opts.pointer, message: detail }] : undefined);
    this.headers = opts.headers ?? {};
  }

  get status(): number {
    return ERROR_TABLE[this.problemCode].status;
  }
}

/** JSON pointer (RFC 6901) of a path of keys. */
export function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const invalid = (pointer: string, message: string) =>
  new AppError('validation_failed', message, { pointer });
