// createApp(deps) → Express: /healthz, /.well-known, /v1 (REST via trpc-to-openapi), /trpc
// (first-party, superjson), /openapi.json, /docs, /errors. Every error leaves as a problem.
import express, { type NextFunction, type Request, type Response } from 'express';
import { newRequestId } from './ids.js';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import swaggerUi from 'swagger-ui-express';
import { appRouter } from '../routers/index.js';
import { createContextInner } from '../routers/trpc.js';
import { createRestHandler } from '../rest/handler.js';
import { jsonBody, mediaTypeGuard, trpcBody } from '../rest/guards.js';
import { htmlPageHeaders } from '../rest/html.js';
import { hasDotSegment } from '../rest/paths.js';
import { problemScope } from '../routers/middleware/problems.js';
import { methodsAt } from '../rest/routes.js';
import { sendProblem } from '../rest/send.js';
import { initRequestState, requestState } from '../rest/state.js';
import { edgeLimit, requestExtras } from '../rest/rate-limit.js';
import { buildOpenApiDocument } from '../rest/openapi.js';
import { errorPage, errorIndex } from '../rest/error-pages.js';
import { LIMITS } from './config.js';
import type { Deps } from './deps.js';
import { AppError } from './errors.js';

const V1 = /^\/v1(?:[/?]|$)/;

export function createApp(deps: Deps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy ? deps.config.trustProxy.split(',').map((s) => s.trim()) : false);
  app.set('etag', false);

  // Request id, access log (route, status, duration; never query strings, bodies or headers).
  app.use((req: Request, res: Response, next: NextFunction) => {
    const state = initRequestState(req, newRequestId(), req.ip ?? req.socket.remoteAddress ?? '');
    res.setHeader('X-Request-Id', state.requestId);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - state.start) / 1e6;
      deps.log.info(
        { requestId: state.requestId, method: req.method, path: req.path, route: state.procedure ?? state.ctx?.http.procedure, status: res.statusCode, durationMs: Math.round(ms * 100) / 100 },
        'request',
      );
    });
    next();
  });

  // Spec §8.1: the per-IP edge bucket, and RateLimit-* headers on every response.
  app.use(edgeLimit(deps));

  // Issue 11.11: one path, one operation. URL parsers resolve dot segments (`.`, `..`, `%2e`)
  // after routing has looked at the raw path, so such a path would reach another route than the
  // one it names (`/v1/headings/.` the list). It is refused instead of rewritten (docs/api.md).
  app.use((req: Request, _res: Response, next: NextFunction) => {
    if (hasDotSegment(req.url)) return next(new AppError('not_found', 'No route matches this path: dot segments (".", "..") are not resolved.'));
    next();
  });

  // /v1 (REST via trpc-to-openapi): the guards (media type, body) then the adapter, dispatched
  // here so API requests skip every other route's layer (Express tests each one in turn). What
  // the adapter does not know falls through to the 405/404 handlers below.
  const rest = createRestHandler(deps);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!V1.test(req.url)) return next();
    mediaTypeGuard(req, res, (err?: unknown) => {
      if (err) return next(err);
      jsonBody(req, res, (err2?: unknown) => (err2 ? next(err2) : rest(req, res, next)));
    });
  });

  app.get('/healthz', (_req, res) => {
    deps.db.$client.prepare('SELECT 1').get();
    res.json({ status: 'ok' });
  });

  // RFC 9728: where a client learns how to get a token for this API.
  app.get('/.well-known/oauth-protected-resource', (_req, res) => {
    res.json({
      resource: `${deps.config.publicUrl}/v1`,
      authorization_servers: [deps.config.publicUrl],
      bearer_methods_supported: ['header'],
      scopes_supported: undefined,
      resource_documentation: `${deps.config.publicUrl}/docs`,
    });
  });

  const doc = buildOpenApiDocument(deps.config.publicUrl);
  app.get('/openapi.json', (_req, res) => {
    res.json(doc);
  });
  // No validator badge: it would load an image from validator.swagger.io (rest/html.ts: same origin only).
  app.use('/docs', htmlPageHeaders, swaggerUi.serve, swaggerUi.setup(doc, { customSiteTitle: 'Cairn API', swaggerOptions: { validatorUrl: null } }));

  app.get('/errors', htmlPageHeaders, (_req, res) => {
    res.type('html').send(errorIndex(deps.config.publicUrl));
  });
  app.get('/errors/:code', htmlPageHeaders, (req, res, next) => {
    const html = errorPage(deps.config.publicUrl, String(req.params.code));
    if (!html) return next();
    res.type('html').send(html);
  });

  // First-party TypeScript clients: the same procedures, superjson on the wire.
  const trpc = createExpressMiddleware({
    router: appRouter,
    maxBodySize: LIMITS.jsonBodyBytes,
    // Issue 11.1: one request buys bounded work; every call also counts against its buckets.
    maxBatchSize: LIMITS.trpcBatchMax,
    createContext: ({ req }) => {
      const state = requestState(req);
      // A body refused by trpcBody (UTF-8, depth, size) becomes this request's tRPC error.
      if (state.bodyError) throw state.bodyError;
      return createContextInner({ deps, requestId: state.requestId, authorization: req.headers.authorization, ip: state.ip, ...requestExtras(req) });
    },
    // Headers a procedure set (Idempotent-Replayed, Cache-Control, …) and those its errors carry
    // (Retry-After, WWW-Authenticate, Allow). Errors are never cached, as on REST.
    responseMeta: ({ ctx, errors }) => {
      const headers: Record<string, string> = { ...(ctx?.http.headers ?? {}) };
      for (const e of errors) if (e.cause instanceof AppError) Object.assign(headers, e.cause.headers);
      for (const e of errors) if (e instanceof AppError) Object.assign(headers, e.headers);
      if (errors.length) headers['Cache-Control'] = 'no-store';
      return { headers };
    },
    onError: ({ error, path, req }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ requestId: requestState(req as Request).requestId, err: error.cause ?? error, procedure: path }, 'internal error');
    },
  });
  app.use('/trpc', (req: Request, res: Response, next: NextFunction) => {
    const state = requestState(req);
    trpcBody(req, res, (e) => (state.bodyError = e), () => {
      // Problems in /trpc errors are finished like REST's (routers/middleware/problems.ts).
      problemScope.run({ publicUrl: deps.config.publicUrl, requestId: state.requestId, instance: req.originalUrl.split('?')[0] }, () => trpc(req, res, next));
    });
  });

  // Nothing matched: 405 where the path exists with other methods, else 404.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const allowed = req.path.startsWith('/v1/') ? methodsAt(req.path) : [];
    if (allowed.length) {
      return next(new AppError('method_not_allowed', `${req.method} is not allowed here.`, { headers: { Allow: allowed.join(', ') } }));
    }
    next(new AppError('not_found', 'No route matches this path.'));
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      res.end();
      return;
    }
    // Issue 11.10: a route parameter that is not valid percent-encoding (`/errors/%zz`) names no
    // resource; Express reports it as a URIError, which would otherwise be a 500.
    if (err instanceof URIError) err = new AppError('not_found', 'No route matches this path: it is not valid percent-encoding.');
    sendProblem(deps, req, res, err);
  });

  return app;
}
