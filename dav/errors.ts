// How the CalDAV door answers a refusal (docs/caldav.md "Errors"). A failed CalDAV or WebDAV
// precondition (RFC 4918 §16, RFC 4791 §1.3, RFC 6578 §3.2) is a `<D:error>` body naming it, which
// clients read; every other refusal is an RFC 9457 problem, as on the other doors: the models'
// AppErrors through the one error table (routers/middleware/problems.ts), the door's own statuses
// (412, 507…) with `about:blank`. A 401 carries the Basic challenge (never the Bearer one: CalDAV
// clients speak Basic only). Nothing here is ever a 500 except an internal fault, logged with the
// request id and answered without its cause.
import type { ServerResponse } from 'node:http';
import { ERROR_TABLE, type ErrorCode } from '../core/errors.js';
import { finishProblem, toProblem, type Problem } from '../routers/middleware/problems.js';
import type { Deps } from '../routers/deps.js';
import { DavError } from './dav-error.js';
import { errorBody } from './xml.js';

export const BASIC_CHALLENGE = 'Basic realm="Cairn", charset="UTF-8"';

export { DavError, calPrecondition, precondition } from './dav-error.js';

const CODE_OF: Record<number, ErrorCode> = {
  400: 'malformed_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

const TITLES: Record<number, string> = { 412: 'Precondition failed', 507: 'Insufficient storage', 501: 'Not implemented' };

export function sendDavError(deps: Deps, requestId: string, path: string, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let status: number;
  let headers: Record<string, string>;
  let body: string;
  let type = 'application/problem+json';
  if (error instanceof DavError) {
    status = error.status;
    headers = error.headers;
    if (error.condition) {
      body = errorBody(error.condition);
      type = 'application/xml; charset=utf-8';
    } else {
      const code = CODE_OF[status];
      const problem: Problem = code
        ? { type: code, title: ERROR_TABLE[code].title, status, detail: error.detail }
        : { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail: error.detail };
      const full = finishProblem(problem, deps.config.publicUrl, requestId, path);
      if (!code) full.type = 'about:blank';
      body = JSON.stringify(full);
    }
  } else {
    const p = toProblem(error);
    if (p.internalCause !== undefined) deps.log.error({ requestId, err: p.internalCause }, 'internal error (dav)');
    status = p.problem.status;
    headers = { ...p.headers };
    body = JSON.stringify(finishProblem(p.problem, deps.config.publicUrl, requestId, path));
  }
  if (status === 401) headers['WWW-Authenticate'] = BASIC_CHALLENGE;
  res.statusCode = status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}
