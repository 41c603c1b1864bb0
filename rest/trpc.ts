// /trpc on node:http (issue 12): the first-party path, served without Express and without tRPC's
// Fetch-API adapter (which builds an undici Request and Response per call). It speaks tRPC's HTTP
// protocol for what @trpc/client's httpLink and httpBatchLink send:
//
//   GET  /trpc/<path>?input=<superjson>                     a query
//   POST /trpc/<path>  body <superjson>                     a mutation
//   GET  /trpc/a,b?batch=1&input={"0":…,"1":…}              a batch of queries (POST: mutations)
//
// and answers exactly as tRPC's own adapter does: `{"result":{"data":<superjson>}}` or
// `{"error":<superjson of the error shape>}` (routers/trpc.ts errorFormatter), an array for a batch,
// the status from the error shapes (`data.httpStatus`; 207 when a batch's statuses differ), the
// procedures' headers and their errors' headers, `Cache-Control: no-store` on errors. The calls of
// a batch share one context and run concurrently, as in tRPC.
//
// Anything else goes to tRPC's own adapter (the `fallback`): streaming (`trpc-accept`), a path that
// names no procedure, a query sent as POST or a mutation as GET, a batch over the limit, a body or
// input that is not valid JSON or was refused by the guards. Those answers are tRPC's, so they
// cannot drift from it. A subscription (`GET /trpc/live.events`, Server-Sent Events) goes to tRPC's
// node adapter directly (createSubscriptionHandler below).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import superjson from 'superjson';
import { getTRPCErrorFromUnknown, type TRPCError } from '@trpc/server/unstable-core-do-not-import';
import { createContextInner, runAfterAnswer, type Context } from '../routers/trpc.js';
import { trpcErrorShape, type ProblemScope } from '../routers/middleware/problems.js';
import { AppError } from '../core/errors.js';
import { LIMITS } from '../core/config.js';
import type { Deps } from '../routers/deps.js';
import { trpcBody } from './guards.js';
import { requestExtras } from './rate-limit.js';
import { requestState } from './state.js';
import { callProcedure, PROCEDURES, type ProcedureFn } from './procedures.js';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { appRouter } from '../routers/index.js';

type Call = { path: string; procedure: ProcedureFn; input: unknown };

/**
 * Whether superjson would send `value` as it is (`{ json: value }`, no `meta`): only strings,
 * booleans, finite numbers other than -0, null, dense arrays and plain objects, with no object
 * reached twice (superjson records shared references) and no undefined anywhere. Anything else
 * (a Date, a Map, undefined, NaN, …) answers false and goes through superjson.
 */
function isPlainJson(value: unknown, seen: Set<object>): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  const obj = value as object;
  if (seen.has(obj)) return false;
  seen.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) if (!(i in obj) || !isPlainJson(obj[i], seen)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(obj) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in obj) if (!isPlainJson((obj as Record<string, unknown>)[key], seen)) return false;
  return true;
}

/**
 * superjson's serialisation of a procedure's answer (issue 12). superjson walks every value
 * building paths (~1 ms for a page of 50 to-dos, ten times JSON.stringify); for answers that are
 * plain JSON, which is nearly all of them, its output is exactly `{ json: value }`, so that is
 * sent directly after one cheap check. test/rest/trpc-serialize.test.ts compares both.
 */
export function serializeAnswer(value: unknown): ReturnType<typeof superjson.serialize> {
  return isPlainJson(value, new Set()) ? { json: value as never } : superjson.serialize(value);
}
type Outcome = { ok: true; data: unknown } | { ok: false; error: TRPCError; status: number; shape: unknown };

/**
 * The error shape tRPC's adapter sends: `getErrorShape` hands the error formatter of
 * routers/trpc.ts a default shape whose `data.path` is the call's path, and the formatter answers
 * `trpcErrorShape(error, path, scope)` with the request's problem scope. The fast path computes
 * that directly with the scope in hand, rather than setting the scope in `problemScope` (an
 * AsyncLocalStorage) around the calls: in Node 20 the first `run()` of any AsyncLocalStorage turns
 * on async hooks for every promise of the process for good, which measured +13–24 µs per read on
 * /v1 and /trpc alike (docs/performance.md "Read path, 2026-11-23"). test/rest/trpc-error-shape.test.ts
 * compares both; trpc-fast-path.rest.test.ts compares the answers with the adapter's.
 */
export function fastErrorShape(error: TRPCError, path: string, scope: ProblemScope): unknown {
  return trpcErrorShape(error, path, scope);
}

/** The calls of a request, or null when it is not one this path serves (tRPC's adapter answers). */
function callsOf(req: IncomingMessage, path: string, search: URLSearchParams): Call[] | null {
  const type = req.method === 'GET' ? 'query' : req.method === 'POST' ? 'mutation' : null;
  if (!type) return null;
  // tRPC reads a POST body only as JSON (else 415, or form data and octet streams: its adapter's).
  if (type === 'mutation' && !String(req.headers['content-type'] ?? '').startsWith('application/json')) return null;
  const batch = search.get('batch') === '1';
  const paths = batch ? path.split(',') : [path];
  if (paths.length > LIMITS.trpcBatchMax) return null;
  let raw: unknown;
  try {
    const text = type === 'query' ? search.get('input') : ((req as Request).body as string | undefined);
    raw = text ? JSON.parse(text) : undefined;
  } catch {
    return null;
  }
  const calls: Call[] = [];
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i]!;
    const procedure = Object.prototype.hasOwnProperty.call(PROCEDURES, p) ? PROCEDURES[p] : undefined;
    if (!procedure || procedure._def.type !== type) return null;
    const serialized = batch ? (raw && typeof raw === 'object' ? (raw as Record<string, unknown>)[String(i)] : undefined) : raw;
    let input: unknown;
    try {
      input = serialized === undefined ? undefined : superjson.deserialize(serialized as Parameters<typeof superjson.deserialize>[0]);
    } catch {
      return null;
    }
    calls.push({ path: p, procedure, input });
  }
  return calls;
}

export type TrpcHandler = (req: IncomingMessage, res: ServerResponse, fallback: () => void) => void;

/**
 * Subscriptions (routers/live; docs/app.md "Live updates"): `GET /trpc/<path>?input=…` answered
 * as Server-Sent Events by tRPC's own node adapter (its SSE producer sets `Content-Type:
 * text/event-stream`, `Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no`; the pings
 * are routers/trpc.ts `sse`). Not through the Express fallback: that one runs each call inside
 * `problemScope` (an AsyncLocalStorage), which would keep Node 20's async hooks on for every
 * promise of the process as long as a stream is open, i.e. as long as the web app is (see
 * fastErrorShape). Errors still get the problem shape (the formatter falls back to the context).
 */
function createSubscriptionHandler(deps: Deps): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  return (req, res, path) => {
    const state = requestState(req as Request);
    void nodeHTTPRequestHandler({
      router: appRouter,
      req,
      res,
      path,
      createContext: () => {
        const ctx = createContextInner({ deps, requestId: state.requestId, authorization: req.headers.authorization, ip: state.ip, ...requestExtras(req as Request) });
        ctx.http.procedure = path;
        state.ctx = ctx;
        return ctx;
      },
      // The rate-limit headers the call set; the stream's own are tRPC's, but for `Connection:
      // close` (tRPC says keep-alive): a stream ends only when its client goes, its session ends
      // or the server stops (server/main.ts), and then the socket must go too rather than idle
      // for the keep-alive timeout and hold a stopping server open.
      responseMeta: ({ ctx }) => ({ headers: { ...(ctx?.http.headers ?? {}), Connection: 'close' } }),
      onError: ({ error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ requestId: state.requestId, err: error.cause ?? error, procedure: path }, 'internal error');
      },
    });
  };
}

let servedHere = 0;

/** Requests this path answered itself (the tests check it is the one that answers). */
export function trpcFastPathCount(): number {
  return servedHere;
}

export function createTrpcHandler(deps: Deps): TrpcHandler {
  const subscribe = createSubscriptionHandler(deps);
  async function run(req: IncomingMessage, res: ServerResponse, calls: Call[], batch: boolean): Promise<void> {
    const state = requestState(req as Request);
    const ctx: Context = createContextInner({ deps, requestId: state.requestId, authorization: req.headers.authorization, ip: state.ip, ...requestExtras(req as Request) });
    // The calls of a batch authenticate once (routers/trpc.ts `batchAuth`).
    if (calls.length > 1) ctx.batchAuth = {};
    state.ctx = ctx;
    ctx.http.procedure = calls.map((c) => c.path).join(',');
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const scope: ProblemScope = { publicUrl: deps.config.publicUrl, requestId: state.requestId, instance: q === -1 ? url : url.slice(0, q) };
    const one = async (call: Call, i: number): Promise<Outcome> => {
      try {
        const data = await callProcedure(call.procedure, { path: call.path, ctx, type: call.procedure._def.type as 'query' | 'mutation', getRawInput: async () => call.input, signal: undefined, batchIndex: i });
        return { ok: true, data };
      } catch (cause) {
        const error = getTRPCErrorFromUnknown(cause);
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ requestId: state.requestId, err: error.cause ?? error, procedure: call.path }, 'internal error');
        const shape = fastErrorShape(error, call.path, scope);
        const status = (shape as { data?: { httpStatus?: number } }).data?.httpStatus ?? 500;
        return { ok: false, error, status, shape };
      }
    };
    // A batch's calls run concurrently (as in tRPC); a single call needs no Promise.all.
    const outcomes = calls.length === 1 ? [await one(calls[0]!, 0)] : await Promise.all(calls.map(one));
    const headers: Record<string, string> = { ...ctx.http.headers };
    let errors = 0;
    const statuses = new Set<number>();
    const bodies = outcomes.map((o) => {
      if (o.ok) {
        statuses.add(200);
        return { result: { data: serializeAnswer(o.data) } };
      }
      errors++;
      statuses.add(o.status);
      const appError = o.error.cause instanceof AppError ? o.error.cause : o.error instanceof AppError ? o.error : undefined;
      if (appError) Object.assign(headers, appError.headers);
      return { error: superjson.serialize(o.shape) };
    });
    if (errors) headers['Cache-Control'] = 'no-store';
    res.statusCode = statuses.size === 1 ? statuses.values().next().value! : 207;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.setHeader('Content-Type', 'application/json');
    runAfterAnswer(ctx.http, res);
    res.end(JSON.stringify(batch ? bodies : bodies[0]));
  }

  return (req, res, fallback) => {
    if (req.headers['trpc-accept'] !== undefined) return fallback();
    const url = req.url ?? '';
    const q = url.indexOf('?');
    let path: string;
    try {
      path = decodeURIComponent(url.slice('/trpc/'.length, q === -1 ? undefined : q));
    } catch {
      return fallback();
    }
    if (req.method === 'GET' && Object.prototype.hasOwnProperty.call(PROCEDURES, path) && PROCEDURES[path]!._def.type === 'subscription') return subscribe(req, res, path);
    const search = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const state = requestState(req as Request);
    // The same body checks as tRPC's path (UTF-8, depth, size); a refusal is tRPC's to answer.
    trpcBody(req as Request, res as Response, (e) => (state.bodyError = e), () => {
      if (state.bodyError) return fallback();
      const calls = callsOf(req, path, search);
      if (!calls) return fallback();
      servedHere++;
      run(req, res, calls, search.get('batch') === '1').catch((err: unknown) => {
        deps.log.error({ requestId: state.requestId, err }, 'trpc: answering failed');
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    });
  };
}
