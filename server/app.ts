// createApp(deps) → Express: /healthz, /.well-known, /v1 (REST via trpc-to-openapi), /trpc
// (first-party, superjson), /openapi.json, /docs, /errors. Every error leaves as a problem.
import express, { type NextFunction, type Request, type Response } from 'express';
import { newRequestId } from './ids.js';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import swaggerUi from 'swagger-ui-express';
import { appRouter } from '../routers/index.js';
import { createContextInner } from '../routers/trpc.js';
import { createRestHandler } from '../rest/handler.js';
import { jsonBody, mediaTypeGuard } from '../rest/guards.js';
import { methodsAt } from '../rest/routes.js';
import { sendProblem } from '../rest/send.js';
import { initRequestState, requestState } from '../rest/state.js';
import { edgeLimit, requestExtras } from '../rest/rate-limit.js';
import { buildOpenApiDocument } from '../rest/openapi.js';
import { errorPage, errorIndex } from '../rest/error-pages.js';
import { corsHeaders, preflight } from '../rest/cors.js';
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

  // Browser clients (rest/cors.ts): the CORS headers first, so refusals (429 included) carry them.
  app.use(corsHeaders);

  // Spec §8.1: the per-IP edge bucket, and RateLimit-* headers on every response.
  app.use(edgeLimit(deps));
  app.use(preflight);

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

  // /openapi.json names PUBLIC_URL (a document saved or fed to a generator needs an absolute
  // address); the copy /docs embeds puts the relative `/` first, so "Try it out" calls the origin
  // the page was opened from, whatever PUBLIC_URL says (issue 13 item 2; docs/api.md).
  const doc = buildOpenApiDocument(deps.config.publicUrl);
  const docsCopy = { ...doc, servers: [{ url: '/', description: 'The server this page was loaded from' }, ...(doc.servers ?? [])] };
  app.get('/openapi.json', (_req, res) => {
    res.json(doc);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(docsCopy, { customSiteTitle: 'Cairn API' }));

  app.get('/errors', (_req, res) => {
    res.type('html').send(errorIndex(deps.config.publicUrl));
  });
  app.get('/errors/:code', (req, res, next) => {
    const html = errorPage(deps.config.publicUrl, String(req.params.code));
    if (!html) return next();
    res.type('html').send(html);
  });

  // First-party TypeScript clients: the same procedures, superjson on the wire.
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      maxBodySize: LIMITS.jsonBodyBytes,
      createContext: ({ req }) => {
        const state = requestState(req);
        return createContextInner({ deps, requestId: state.requestId, authorization: req.headers.authorization, ip: state.ip, ...requestExtras(req) });
      },
      // Headers a procedure set (Idempotent-Replayed, …) and those its errors carry (Retry-After).
      responseMeta: ({ ctx, errors }) => {
        const headers: Record<string, string> = { ...(ctx?.http.headers ?? {}) };
        for (const e of errors) if (e.cause instanceof AppError) Object.assign(headers, e.cause.headers);
        for (const e of errors) if (e instanceof AppError) Object.assign(headers, e.headers);
        return { headers };
      },
      onError: ({ error, path }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error.cause ?? error, procedure: path }, 'internal error');
      },
    }),
  );

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
    sendProblem(deps, req, res, err);
  });

  return app;
}
