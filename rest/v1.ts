// /v1 on node:http (issue 12): the tRPC procedures as REST, dispatched without Express and without
// trpc-to-openapi's per-request work. trpc-to-openapi still publishes the procedures (the OpenAPI
// document, rest/openapi.ts); this module serves the same contract, with the same rules as its
// node handler (REST-FACADE.md), which the whole REST test suite checks:
//
// - routes come from procedure meta (`openapi.method`, `openapi.path`), matched case-insensitively
//   in registration order, compiled once at start into one table per method;
// - path parameters are percent-decoded (a bad escape stays as sent);
// - input: the JSON body (POST, PUT, PATCH) or the query string (GET, DELETE), then the path
//   parameters over it; meta `queryInput` names query parameters a POST also reads; an array
//   field given once in a query is wrapped; a procedure without input (or `z.void()`) gets none;
// - the procedure is called directly (what tRPC's caller does, without a proxy per request), so
//   its middleware (authentication, scopes, rate limits, idempotency, atomic writes) and its input
//   and output validation all run as before;
// - the answer: the status from `ctx.http.status` or meta `successStatus`, the procedure's headers,
//   `JSON.stringify` of the data; a 204 has no body and no Content-Type; any error becomes a
//   problem (rest/send.ts).
//
// A path that names no route falls through to the Express app (405 with Allow, or 404). The raw
// upload paths (rest/files.ts POST_ONLY_PATHS) answer any method but POST 405 here, before matching.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Request, Response } from 'express';
import { createContextInner, runAfterAnswer, type Meta } from '../routers/trpc.js';
import type { Deps } from '../routers/deps.js';
import { jsonBody, mediaTypeGuard } from './guards.js';
import { requestExtras } from './rate-limit.js';
import { sendProblem } from './send.js';
import { requestState } from './state.js';
import { callProcedure, PROCEDURES, type ProcedureFn } from './procedures.js';
import { POST_ONLY_PATHS } from './files.js';
import { AppError } from '../core/errors.js';

type Route = {
  pattern: RegExp;
  procedurePath: string;
  procedure: ProcedureFn;
  type: 'query' | 'mutation';
  meta: Meta;
  /** False for procedures without input or with `z.void()`: they get `undefined`. */
  takesInput: boolean;
  /** Input fields that are arrays (a single query value is wrapped). */
  arrayFields: string[];
  queryInput: string[];
};

type ZodLike = { _zod?: { def?: { type?: string; innerType?: ZodLike; in?: ZodLike; shape?: Record<string, ZodLike> } }; shape?: Record<string, ZodLike> };

/** The schema under optional / nullable / default / pipe wrappers (zod 4 internals, read-only). */
function unwrap(s: ZodLike | undefined): ZodLike | undefined {
  let cur = s;
  for (let i = 0; i < 10 && cur?._zod?.def; i++) {
    const def = cur._zod.def;
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'prefault' || def.type === 'readonly') cur = def.innerType;
    else if (def.type === 'pipe') cur = def.in;
    else break;
  }
  return cur;
}

function inputShape(procedure: ProcedureFn): { takesInput: boolean; arrayFields: string[] } {
  const parser = procedure._def.inputs[0] as ZodLike | undefined;
  const schema = unwrap(parser);
  const type = schema?._zod?.def?.type;
  if (!schema || type === 'void' || type === 'undefined' || type === 'never') return { takesInput: false, arrayFields: [] };
  const shape = schema._zod?.def?.shape ?? schema.shape ?? {};
  const arrayFields = Object.entries(shape)
    .filter(([, field]) => unwrap(field)?._zod?.def?.type === 'array')
    .map(([key]) => key);
  return { takesInput: true, arrayFields };
}

const normalizePath = (p: string) => `/${p.replace(/^\/|\/$/g, '')}`;

/** One table per method, in registration order (the first match wins, as in trpc-to-openapi). */
function compileRoutes(): Map<string, Route[]> {
  const table = new Map<string, Route[]>();
  for (const [procedurePath, procedure] of Object.entries(PROCEDURES)) {
    const meta = procedure._def.meta;
    const openapi = meta?.openapi;
    if (!meta || !openapi || openapi.enabled === false || procedure._def.type === 'subscription') continue;
    const path = normalizePath(openapi.path);
    const pattern = new RegExp(`^${path.replace(/\{(.+?)\}/g, (_, key: string) => `(?<${key}>[^/]+)`)}$`, 'i');
    const list = table.get(openapi.method) ?? [];
    list.push({ pattern, procedurePath, procedure, type: procedure._def.type, meta, ...inputShape(procedure), queryInput: meta.queryInput ?? [] });
    table.set(openapi.method, list);
  }
  return table;
}

const ROUTES = compileRoutes();

/** The route of a method and normalised path, with its decoded path parameters (exported for the bench's layer budget). */
export function match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
  const list = ROUTES.get(method);
  if (!list) return undefined;
  for (const route of list) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    for (const [key, value] of Object.entries(m.groups ?? {})) {
      try {
        params[key] = decodeURIComponent(value);
      } catch {
        params[key] = value;
      }
    }
    return { route, params };
  }
  return undefined;
}

/** Query parameters as the adapter read them: one value a string, several an array. */
function queryOf(search: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!search) return out;
  const parsed = parseQuery(search);
  for (const [key, value] of Object.entries(parsed)) {
    if (value === undefined || value === '') continue;
    out[key] = value;
  }
  return out;
}

/**
 * Issue 11.12 (docs/api.md "Paging"): on every /v1 route an empty query value (`parent_id=`,
 * `limit=`, a bare `cursor`) is the same as leaving the parameter out. No parameter gives the
 * empty string a meaning of its own, so one rule here serves every route, present and future
 * (a name repeated with a value would otherwise read as an array).
 */
export function dropEmptyQueryValues(search: string): string {
  if (!search) return search;
  const parts = search.split('&');
  const kept = parts.filter((p) => {
    const eq = p.indexOf('=');
    return eq !== -1 && eq < p.length - 1;
  });
  return kept.length === parts.length ? search : kept.join('&');
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export type V1Handler = (req: IncomingMessage, res: ServerResponse, fallthrough: () => void) => void;

export function createV1Handler(deps: Deps): V1Handler {
  async function run(req: IncomingMessage, res: ServerResponse, route: Route, params: Record<string, string>, search: string): Promise<void> {
    const state = requestState(req as Request);
    const ctx = createContextInner({
      deps,
      requestId: state.requestId,
      authorization: req.headers.authorization,
      ip: state.ip,
      ...requestExtras(req as Request),
    });
    state.ctx = ctx;
    ctx.http.procedure = route.procedurePath;
    let input: Record<string, unknown> | undefined;
    if (route.takesInput) {
      if (BODY_METHODS.has(req.method!)) {
        input = { ...((req as Request).body as Record<string, unknown>) };
        if (route.queryInput.length && search) {
          const query = queryOf(search);
          for (const name of route.queryInput) {
            const value = query[name];
            if (typeof value === 'string' && !(name in input)) input[name] = value;
          }
        }
      } else {
        input = queryOf(search);
        for (const key of route.arrayFields) if (input[key] !== undefined && !Array.isArray(input[key])) input[key] = [input[key]];
      }
      Object.assign(input, params);
    }
    try {
      const data = await callProcedure(route.procedure, { path: route.procedurePath, ctx, type: route.type, getRawInput: async () => input, signal: undefined, batchIndex: 0 });
      const status = ctx.http.status ?? route.meta.successStatus ?? 200;
      res.statusCode = status;
      for (const [k, v] of Object.entries(ctx.http.headers)) res.setHeader(k, v);
      runAfterAnswer(ctx.http, res);
      if (status === 204) {
        res.end();
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(data));
    } catch (e) {
      // Tasks of a write that rolled back find nothing to do (each checks its row first).
      runAfterAnswer(ctx.http, res);
      state.error = e;
      state.procedure = route.procedurePath;
      sendProblem(deps, req as Request, res as Response, e);
    }
  }

  return (req, res, fallthrough) => {
    const url = req.url!;
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? '' : dropEmptyQueryValues(url.slice(q + 1));
    const path = normalizePath(pathname);
    const fail = (e: unknown) => {
      try {
        sendProblem(deps, req as Request, res as Response, e);
      } catch (err) {
        deps.log.error({ requestId: requestState(req as Request).requestId, err }, 'writing a problem failed');
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      }
    };
    if (req.method !== 'POST' && POST_ONLY_PATHS.test(path)) {
      return fail(new AppError('method_not_allowed', `${req.method} is not allowed here.`, { headers: { Allow: 'POST' } }));
    }
    const found = match(req.method!, path);
    if (!found) return fallthrough();
    const go = () => void run(req, res, found.route, found.params, search).catch(fail);
    if (!BODY_METHODS.has(req.method!)) return go();
    mediaTypeGuard(req as Request, res as Response, (err?: unknown) => {
      if (err) return fail(err);
      jsonBody(req as Request, res as Response, (err2?: unknown) => (err2 ? fail(err2) : go()));
    });
  };
}
