// Per-request state shared by the Express layers and the adapter hooks (which see only `req`).
import type { Request } from 'express';
import type { Context } from '../routers/trpc.js';

export type RequestState = {
  requestId: string;
  ip: string;
  start: bigint;
  ctx?: Context;
  error?: unknown;
  /** A /trpc body refused before tRPC parses it (rest/guards.ts trpcBody); the context factory throws it. */
  bodyError?: unknown;
  procedure?: string | undefined;
};

const STATE = new WeakMap<object, RequestState>();

export function initRequestState(req: Request, requestId: string, ip: string): RequestState {
  const s: RequestState = { requestId, ip, start: process.hrtime.bigint() };
  STATE.set(req, s);
  return s;
}

export function requestState(req: Request): RequestState {
  let s = STATE.get(req);
  if (!s) {
    s = { requestId: 'unknown', ip: req.socket.remoteAddress ?? '', start: process.hrtime.bigint() };
    STATE.set(req, s);
  }
  return s;
}
