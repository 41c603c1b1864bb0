// createApp(deps) → Express: /healthz, /.well-known, /trpc (first-party, superjson),
// /openapi.json, /docs, /errors, and the 404/405 answers. Every error leaves as a problem. It is
// mounted behind server/handler.ts, which serves /v1 itself.
import express, { type NextFunction, type Request, type Response } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import swaggerUi from 'swagger-ui-express';
import { appRouter } from '../routers/index.js';
import { createContextInner } from '../routers/trpc.js';
import { trpcBody } from '../rest/guards.js';
import { htmlPageHeaders } from '../rest/html.js';
import { problemScope } from '../routers/middleware/problems.js';
import { methodsAt } from '../rest/routes.js';
import { sendProblem } from '../rest/send.js';
import { requestState } from '../rest/state.js';
import { requestExtras } from '../rest/rate-limit.js';
import { errorPage, errorIndex } from '../rest/error-pages.js';
import { captureInboxFile, downloadFile, uploadFile } from '../rest/files.js';
import { exportAccount } from '../rest/export.js';
import { startImport } from '../rest/imports.js';
import { icsPlan } from './import-ics.js';
import { oauthRoutes } from '../rest/oauth.js';
import { appRoutes } from '../app/serve.js';
import { LIMITS } from '../core/config.js';
import type { Deps } from '../routers/deps.js';
import { AppError } from '../core/errors.js';

export function createApp(deps: Deps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy ? deps.config.trustProxy.split(',').map((s) => s.trim()) : false);
  app.set('etag', false);

  // Request id, access log, client address, the edge bucket CORS headers and preflights, and the dot-segment refusal
  // run
  // before this app is reached (server/handler.ts), and /v1 is served there without Express
  // (rest/v1.ts). A /v1 path that names no route falls through to the 405/404 handlers below.

  app.get('/healthz', (_req, res) => {
    deps.db.$client.prepare('SELECT 1').get();
    res.json({ status: 'ok' });
  });

  // OAuth 2.1 (rest/oauth.ts): /.well-known discovery (RFC 9728, RFC 8414), /oauth/register,
  // /oauth/authorize (the page and its wait endpoint), /oauth/token.
  app.use(oauthRoutes(deps));

  // The web app at /app (app/serve.ts, docs/app.md) and /.well-known/cairn (is sign-up on).
  app.use(appRoutes(deps));

  // /openapi.json names PUBLIC_URL (a document saved or fed to a generator needs an absolute
  // address); the copy /docs embeds puts the relative `/` first, so "Try it out" calls the origin
  // the page was opened from, whatever PUBLIC_URL says (issue 13 item 2; docs/api.md).
  // Both are made on their first request, not at start: the generator (trpc-to-openapi), the
  // document and the page's copy hold ~7 MB of heap that a server nobody reads them from never
  // needs (docs/performance.md "Memory"). test/rest/openapi-truths.rest.test.ts builds the
  // document, so a route it cannot describe fails there.
  let doc: Promise<Record<string, unknown> & { servers?: unknown[] }> | undefined;
  const openApi = () => (doc ??= import('../rest/openapi.js').then((m) => m.buildOpenApiDocument(deps.config.publicUrl)));
  app.get('/openapi.json', async (_req, res) => {
    res.json(await openApi());
  });
  // swagger-ui-express's `serve` answers /docs/swagger-ui-init.js with what `setup` made, so the
  // page is set up before `serve` runs, whichever of the two a browser asks for first.
  let docsPage: express.RequestHandler | undefined;
  const setUpDocs: express.RequestHandler = async (_req, _res, next) => {
    if (!docsPage) {
      const d = await openApi();
      const docsCopy = { ...d, servers: [{ url: '/', description: 'The server this page was loaded from' }, ...(d.servers ?? [])] };
      // No validator badge: it would load an image from validator.swagger.io (rest/html.ts: same origin only).
      docsPage = swaggerUi.setup(docsCopy, { customSiteTitle: 'Cairn API', swaggerOptions: { validatorUrl: null } });
    }
    next();
  };
  const page: express.RequestHandler = (req, res, next) => docsPage!(req, res, next);
  app.use('/docs', htmlPageHeaders, setUpDocs, swaggerUi.serve, page);

  app.get('/errors', htmlPageHeaders, (_req, res) => {
    res.type('html').send(errorIndex(deps.config.publicUrl));
  });
  app.get('/errors/:code', htmlPageHeaders, (req, res, next) => {
    const html = errorPage(deps.config.publicUrl, String(req.params.code));
    if (!html) return next();
    res.type('html').send(html);
  });

  // Attachment files (rest/files.ts): raw bodies, not JSON, so plain routes. rest/v1.ts defines no
  // procedure at these paths, so their requests fall through to here.
  app.post('/v1/attachments/files', uploadFile(deps));
  app.post('/v1/inbox/files', captureInboxFile(deps));
  app.get('/v1/attachments/:id/file', downloadFile(deps));
  // The account export and imports (issue 33; docs/api.md "Export", "Imports"): a streamed answer
  // and a raw body, so plain routes too. `.ics` is read by the CalDAV door's mapping (server/import-ics.ts).
  app.get('/v1/export', exportAccount(deps));
  app.post('/v1/imports', startImport(deps, { ics: icsPlan }));

  // First-party TypeScript clients: the same procedures, superjson on the wire.
  const trpc = createExpressMiddleware({
    router: appRouter,
    maxBodySize: LIMITS.jsonBodyBytes,
    // Issue 11.1: one request buys bounded work; every call also counts against its buckets.
    maxBatchSize: LIMITS.trpcBatchMax,
    createContext: ({ req, res }) => {
      const state = requestState(req);
      // A body refused by trpcBody (UTF-8, depth, size) becomes this request's tRPC error.
      if (state.bodyError) throw state.bodyError;
      const ctx = createContextInner({ deps, requestId: state.requestId, authorization: req.headers.authorization, ip: state.ip, ...requestExtras(req) });
      state.ctx = ctx;
      // After-answer tasks (routers/trpc.ts afterAnswer) start once this adapter's answer is sent.
      res.once('close', () => {
        const tasks = ctx.http.afterAnswer ?? [];
        ctx.http.afterAnswer = [];
        for (const t of tasks) {
          t.armed?.();
          t.run();
        }
      });
      return ctx;
    },
    // Headers a procedure set (Idempotent-Replayed, Cache-Control, …) and those its errors carry
    // (Retry-After, WWW-Authenticate, Allow). Errors are never cached, as on REST.
    responseMeta: ({ ctx, errors }) => {
      // Armed before the answer is written (a no-op when armed again at close).
      for (const t of ctx?.http.afterAnswer ?? []) t.armed?.();
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
  // In Node 20 an AsyncLocalStorage that has run keeps async hooks on for every promise of the
  // process (~13–24 µs a read, docs/performance.md "Read path"). The scope is needed only while a
  // request of this fallback is in flight, so it is switched off again when the last one ends:
  // one odd /trpc request must not slow every later request of the process.
  let inScope = 0;
  app.use('/trpc', (req: Request, res: Response, next: NextFunction) => {
    const state = requestState(req);
    inScope++;
    res.once('close', () => {
      if (--inScope === 0) problemScope.disable();
    });
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
