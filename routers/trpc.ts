// initTRPC, the context and the procedure builders. Scopes live in each procedure's meta, the one
// source of truth read by the auth middleware, the OpenAPI post-processing and the scope tests.
// Loaded first: every schema's messages (routers/zod-messages.ts).
import './zod-messages.js';
import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Deps } from './deps.js';
import { AppError } from '../core/errors.js';
import { authenticate, credentialIsLive, unauthorized, type Principal } from './auth/credentials.js';
import { SealError } from '../core/crypto/seal.js';
import type { Scope } from '../core/scopes.js';
import type { RateBucketName } from '../core/config.js';
import { problemScope, trpcErrorShape } from './middleware/problems.js';
import { limitCredential, limitRoute, presentedBearer, type RateTracker } from './middleware/rate-limit.js';
import { planIdempotent, type IdempotencyPlan } from './middleware/idempotency.js';
import type { RouterContext, RouterMeta } from './api-types.js';

export type Meta = OpenApiMeta & {
  /** HTTP status of a successful REST answer (DECISIONS §4); 200 when absent. */
  successStatus?: 200 | 201 | 204;
  /** Every scope the route needs (spec §4 "Scopes" columns). Absent = any valid credential. */
  scopes?: Scope[];
  /** First-party sessions only (spec §4.14, §4.16); other credentials get forbidden_scope. */
  firstPartyOnly?: boolean;
  /** No credential at all (register, login). */
  public?: boolean;
  /**
   * Issue 11.8: the answer carries a token or secret (sessions, personal tokens, later OAuth and
   * webhook secrets): it is sent with `Cache-Control: no-store` on /v1 and /trpc alike.
   */
  secretInAnswer?: boolean;
  /**
   * Spec §4.2: the route accepts `Idempotency-Key`; a retry with the same key replays the first
   * answer (routers/middleware/idempotency.ts). Mark every Idempotent route and every POST that creates.
   * `'no-replay'`: the key still prevents a second write, but a retry gets 409 `conflict` naming
   * what was created instead of the answer (for answers holding a secret shown once).
   */
  idempotent?: boolean | 'no-replay';
  /** Spec §8.1: route buckets of RATE_BUCKETS (per user or per IP) this procedure counts against. */
  rateLimits?: RateBucketName[];
  /**
   * POST routes that take query parameters (spec §4.5 `today` on complete): the adapter reads a
   * POST's input from the body only, so the REST handler copies these names from the query string
   * into the input (a value in the body wins).
   */
  queryInput?: string[];
};

export type ContextInner = {
  deps: Deps;
  requestId: string;
  authorization?: string | undefined;
  ip?: string | undefined;
  /** The Idempotency-Key request header (spec §4.2), read only on idempotent routes. */
  idempotencyKey?: string | undefined;
  /** Collects this request's rate-limit results for the RateLimit-* headers (routers/middleware/rate-limit.ts). */
  rate?: RateTracker | undefined;
  /**
   * Set by rest/trpc.ts for a batch: its calls come with one Authorization header in one HTTP
   * request, so they share one authentication (one lookup, one key unwrap) instead of one each.
   * It lives in the request's context, so nothing unwrapped outlives the request.
   */
  batchAuth?: { principal?: Promise<Principal> } | undefined;
};

/** What a procedure may say about its HTTP answer beyond the body (status chosen at run time). */
export type HttpOut = {
  status?: 200 | 201 | 204;
  headers: Record<string, string>;
  procedure?: string;
  /** Tasks to start once the answer has gone out (`afterAnswer`); both adapters run them when the response closes. */
  afterAnswer?: AfterAnswerTask[];
};

/**
 * Starts `task` once the request's answer has been sent (the response's 'close', after 'finish'),
 * never inside the request's transaction. Both HTTP adapters (rest/v1.ts, rest/trpc.ts) run these
 * via `runAfterAnswer`; a call without HTTP (the tests' tRPC caller) never runs them.
 */
export type AfterAnswerTask = {
  /** Called when the adapter arms the task, before the answer's first byte is written (may be called twice: must be idempotent). */
  armed?: () => void;
  run: () => void;
};

export function afterAnswer(ctx: { http: HttpOut }, task: AfterAnswerTask): void {
  (ctx.http.afterAnswer ??= []).push(task);
}

/** For the adapters: once `res` closes, start the request's after-answer tasks. */
export function runAfterAnswer(http: HttpOut, res: { once(event: 'close', fn: () => void): unknown }): void {
  const tasks = http.afterAnswer;
  if (!tasks?.length) return;
  http.afterAnswer = [];
  for (const t of tasks) t.armed?.();
  res.once('close', () => {
    for (const t of tasks) t.run();
  });
}

export type Context = ContextInner & { http: HttpOut };

// The router is typed with routers/api-types.ts's interfaces so its emitted declarations name no
// server module (the `cairn/client` package, issue 13 item 5); here they become the full types.
declare module './api-types.js' {
  interface RouterContext extends Context {} // eslint-disable-line @typescript-eslint/no-empty-object-type
  interface RouterMeta extends Meta {} // eslint-disable-line @typescript-eslint/no-empty-object-type
}

/** Tests build a context directly: no HTTP, same procedures. */
export function createContextInner(inner: ContextInner): Context {
  return { ...inner, http: { headers: {} } };
}

const t = initTRPC
  .context<RouterContext>()
  .meta<RouterMeta>()
  .create({
    transformer: superjson,
    // Subscriptions over SSE (routers/live, docs/app.md "Live updates"): a ping every 10 s keeps
    // proxies and the socket idle timeout (CAIRN_SOCKET_IDLE_TIMEOUT_MS, 60 s) from cutting a quiet
    // stream, and tells the client to reconnect when it has heard nothing for 25 s (a dead link).
    sse: { ping: { enabled: true, intervalMs: 10_000 }, client: { reconnectAfterInactivityMs: 25_000 } },
    // /trpc clients get the same problem object REST clients get, under data.problem, and the
    // same HTTP status (routers/middleware/problems.ts trpcErrorShape). No stack, ever.
    errorFormatter({ shape, error, ctx }) {
      const scope = problemScope.getStore() ?? (ctx ? { publicUrl: ctx.deps.config.publicUrl, requestId: ctx.requestId } : undefined);
      return trpcErrorShape(error, shape.data.path, scope);
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
// Each tRPC middleware level copies its options object twice (measured ~10 µs per level per
// request, docs/performance.md), so the checks below run as one middleware per builder rather
// than one per check.

/** Spec §8.1: the per-credential write bucket and the route buckets of meta `rateLimits`, around the call. */
async function withRouteLimit<R extends { ok: boolean }>(ctx: Context, opts: { mutation: boolean; buckets?: RateBucketName[] | undefined; userId?: string | undefined }, call: () => Promise<R>): Promise<R> {
  const done = limitRoute(ctx, opts);
  const result = await call();
  done(result.ok);
  return result;
}

/** Meta `secretInAnswer`: both adapters copy ctx.http.headers onto the response. */
function noStoreSecrets(ctx: Context, meta: Meta | undefined): void {
  if (meta?.secretInAnswer) ctx.http.headers['Cache-Control'] = 'no-store';
}

/** Public procedures: the per-credential bucket (when a token is presented), then the route buckets. */
export const publicProcedure = t.procedure.use(({ ctx, meta, type, next }) => {
  noStoreSecrets(ctx, meta);
  limitCredential(ctx);
  return withRouteLimit(ctx, { mutation: type === 'mutation', buckets: meta?.rateLimits }, () => next());
});

/** The route's grants (spec §5.3 rule 4): first-party only, and every scope of the meta. Shared with the plain file routes (rest/files.ts). */
export function requireGrants(principal: Principal, meta: Pick<Meta, 'scopes' | 'firstPartyOnly'> | undefined): void {
  if (meta?.firstPartyOnly && principal.kind !== 'session') {
    throw new AppError('forbidden_scope', 'This route is for first-party app sessions only.');
  }
  const missing = (meta?.scopes ?? []).filter((s) => !principal.scopes.has(s));
  if (missing.length) {
    throw new AppError('forbidden_scope', `The credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`);
  }
}

/**
 * Authenticated procedures. Order: the per-credential bucket (keyed by the presented token, before
 * any DB lookup); the credential and the meta's scopes (spec §5.3 rule 4); an idempotent replay
 * (spec §4.2; a replay costs no write budget); the write and route buckets; the procedure.
 */
export const authedProcedure = t.procedure.use(async ({ ctx, meta, type, path, getRawInput, next }) => {
  noStoreSecrets(ctx, meta);
  limitCredential(ctx);
  const once = ctx.batchAuth;
  const principal = await (once ? (once.principal ??= authenticate(ctx.deps, ctx.authorization, presentedBearer(ctx))) : authenticate(ctx.deps, ctx.authorization, presentedBearer(ctx)));
  requireGrants(principal, meta);
  const authed: AuthedContext = { ...ctx, principal };
  const mutation = type === 'mutation';
  const result = await planIdempotent({
    ctx: authed,
    mode: meta?.idempotent,
    successStatus: meta?.successStatus,
    mutation,
    path,
    getRawInput,
    next: (idempotency) =>
      withRouteLimit(authed, { mutation, buckets: meta?.rateLimits, userId: principal.userId }, () => next({ ctx: { principal, idempotency, procedurePath: path } })),
  });
  // Content that no longer opens under the request's key: the key was replaced while the request
  // ran (a rotation or password change ended this credential). That is a 401, not a fault.
  if (!result.ok && result.error.cause instanceof SealError && !credentialIsLive(ctx.deps, principal)) {
    throw unauthorized(ctx.deps, 'The credential was revoked or replaced while this request ran.', true);
  }
  return result;
});

export type AuthedContext = Context & {
  principal: Principal;
  /** Set on keyed requests of Idempotent routes: `atomic(…)` stores the answer with the change. */
  idempotency?: IdempotencyPlan | undefined;
  /** The procedure's path (`todos.create`), for the write's test-only fault hook. */
  procedurePath?: string | undefined;
};
