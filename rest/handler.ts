// /v1: the tRPC procedures published through trpc-to-openapi (REST-FACADE). The adapter's own
// error body is replaced with our problem object, success statuses come from procedure meta,
// and a 204 carries no body and no Content-Type.
import type { NextFunction, Request, Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { appRouter } from '../routers/index.js';
import { createContextInner, type Context } from '../routers/trpc.js';
import type { Deps } from '../server/deps.js';
import { REST_ROUTES, ROUTE_BY_PROCEDURE } from './routes.js';
import { LIMITS } from '../server/config.js';
import { sendProblem } from './send.js';
import { requestState } from './state.js';
import { requestExtras } from './rate-limit.js';

/** Meta `queryInput`: query parameters of a POST route join its (already parsed) JSON body. */
function copyQueryInput(req: Request): void {
  if (req.method !== 'POST' || !req.body || typeof req.body !== 'object' || !req.url.includes('?')) return;
  const url = new URL(req.url, 'http://x');
  const route = REST_ROUTES.find((r) => r.method === 'POST' && r.meta.queryInput && r.pattern.test(url.pathname));
  for (const name of route?.meta.queryInput ?? []) {
    const value = url.searchParams.get(name);
    if (value !== null && !(name in req.body)) (req.body as Record<string, unknown>)[name] = value;
  }
}

/**
 * Issue 11.12 (docs/api.md "Paging"): on every /v1 route an empty query value (`parent_id=`,
 * `limit=`, a bare `cursor`) is the same as leaving the parameter out. No parameter gives the
 * empty string a meaning of its own, so one rule here serves every route, present and future.
 * (The adapter already skips a lone empty value on GET; this also covers the POST query input
 * copied below and a name repeated with a value, which the adapter would read as an array.)
 */
export function dropEmptyQueryValues(req: Request): void {
  const q = req.url.indexOf('?');
  if (q === -1) return;
  const parts = req.url.slice(q + 1).split('&');
  const kept = parts.filter((p) => {
    const eq = p.indexOf('=');
    return eq !== -1 && eq < p.length - 1;
  });
  if (kept.length === parts.length) return;
  req.url = req.url.slice(0, q) + (kept.length ? `?${kept.join('&')}` : '');
}

export function createRestHandler(deps: Deps) {
  const handler = createOpenApiNodeHttpHandler({
    router: appRouter,
    maxBodySize: LIMITS.jsonBodyBytes,
    createContext: ({ req: rawReq }: { req: unknown }) => {
      const req = rawReq as Request;
      const state = requestState(req);
      const ctx = createContextInner({
        deps,
        requestId: state.requestId,
        authorization: req.headers.authorization,
        ip: state.ip,
        ...requestExtras(req),
      });
      state.ctx = ctx;
      return ctx;
    },
    responseMeta: ({ ctx, paths, errors }: { ctx?: unknown; paths?: readonly string[]; errors: readonly unknown[] }) => {
      if (errors.length) return {};
      const route = paths?.[0] ? ROUTE_BY_PROCEDURE.get(paths[0]) : undefined;
      const c = ctx as Context | undefined;
      if (c) c.http.procedure = paths?.[0];
      const status = c?.http.status ?? route?.meta.successStatus ?? 200;
      return { status, headers: { ...(c?.http.headers ?? {}) } };
    },
    onError: ({ error, req, path }: { error: unknown; req: unknown; path?: string }) => {
      const state = requestState(req as Request);
      state.error = error;
      state.procedure = path;
    },
  } as unknown as Parameters<typeof createOpenApiNodeHttpHandler>[0]);

  return (req: Request, res: Response, next: NextFunction) => {
    const state = requestState(req);
    dropEmptyQueryValues(req);
    copyQueryInput(req);
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      res.end = end as Response['end'];
      if (state.error) {
        sendProblem(deps, req, res, state.error);
        return res;
      }
      if (res.statusCode === 204) {
        res.removeHeader('Content-Type');
        return end();
      }
      return end(...args);
    }) as Response['end'];
    return handler(req, res, next);
  };
}
