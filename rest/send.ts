// Writing a problem answer (spec §2.13, §7): application/problem+json, the request id, and the
// headers the error carries (WWW-Authenticate, Retry-After, Allow). 5xx causes are logged, never sent.
import type { Request, Response } from 'express';
import type { Deps } from '../routers/deps.js';
import { finishProblem, toProblem } from '../routers/middleware/problems.js';
import { requestState } from './state.js';

/**
 * `members`: extension members added to the problem (RFC 9457 §3.2), e.g. RFC 6749's `error` and
 * `error_description` on a /oauth/* refusal so an OAuth client library reads it too.
 */
export function sendProblem(deps: Deps, req: Request, res: Response, error: unknown, members?: Record<string, string>): void {
  const state = requestState(req);
  const { problem, headers, internalCause } = toProblem(error);
  if (internalCause !== undefined) {
    deps.log.error({ requestId: state.requestId, err: internalCause, procedure: state.procedure }, 'internal error');
  }
  // req.originalUrl is Express's; /v1 requests are served on node:http (rest/v1.ts) and have only url.
  const body = finishProblem(problem, deps.config.publicUrl, state.requestId, (req.originalUrl ?? req.url ?? '').split('?')[0]);
  res.statusCode = problem.status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify(members ? { ...body, ...members } : body));
}
