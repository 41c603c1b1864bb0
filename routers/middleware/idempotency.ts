// Idempotent retries (spec §4.2, docs/api.md "Idempotency"): exactly once, across crashes.
// It holds for /v1 and /trpc alike, in two parts:
//
//   the middleware   (`planIdempotent`, wired in routers/trpc.ts) runs after authentication, on
//                    every mutation whose meta says `idempotent` when the request carries
//                    `Idempotency-Key`. It fingerprints the request and looks for a stored
//                    answer: one is replayed at once (`Idempotent-Replayed: true`; the procedure
//                    does not run and no write budget is spent); a stored answer of another
//                    request is 422. Otherwise it hands the procedure an `IdempotencyPlan`.
//   the write        (`settleInWrite`, called by routers/middleware/atomic.ts inside the write's
//                    own SQLite transaction) looks again (a concurrent twin may have committed
//                    meanwhile: it then replays), runs the procedure's model, and stores the
//                    answer in that same transaction. The change, its events and its stored
//                    answer commit together or not at all, with no `await` between them: a crash
//                    after the commit replays on retry, a crash before it leaves no trace.
//
// A 4xx answer (the model refused; nothing was written) is stored afterwards in a transaction of
// its own, so a retry gets the same refusal. A 5xx or 429 answer is never stored: the retry runs
// again. There is no "pending" state: a request either committed its answer or left nothing.
//
// The request is fingerprinted by SHA-256 of its raw input (body plus path and query parameters),
// serialised with sorted keys, so property order does not matter. Key, fingerprint and answer are
// sealed under the user's data key; only a blind index of the key is plaintext. Rows expire 24
// hours after the first request (purged by server/jobs/purge.ts; an expired row is ignored).
import { and, eq } from 'drizzle-orm';
import stringify from 'safe-stable-stringify';
import type { TRPCError } from '@trpc/server';
import { idempotencyKeys } from '../../db/schema/index.js';
import type { Db } from '../../db/client.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, type ErrorCode, type FieldError } from '../../core/errors.js';
import { idempotencyKeyIndex } from '../../core/crypto/blind-index.js';
import { openJson, rowAad, sealJson, SealError } from '../../core/crypto/seal.js';
import { sha256 } from '../../core/crypto/secrets.js';
import { newId } from '../../core/ids.js';
import { toProblem } from './problems.js';

export const IDEMPOTENCY_TABLE = 'idempotency_keys';
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Spec §4.2 (issue 3): 1..255 printable characters. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;
export const REPLAYED_HEADER = 'Idempotent-Replayed';

type StoredAnswer =
  | { kind: 'data'; status: number; headers: Record<string, string>; hasBody: boolean; body: unknown }
  /** `idempotent: 'no-replay'`: only the id of what was created is kept, never the answer. */
  | { kind: 'created'; id: string | null }
  | { kind: 'error'; code: ErrorCode; detail: string; errors?: FieldError[] | undefined; headers: Record<string, string> };

type Sealed = { key: string; fingerprint: string; answer: StoredAnswer };

/** What the middleware hands the procedure: enough to find, check and store the answer. */
export type IdempotencyPlan = {
  route: string;
  key: string;
  keyIndex: Buffer;
  fingerprint: string;
  mode: true | 'no-replay';
  successStatus: number | undefined;
  /** Set once the answer was stored or replayed, so the middleware never stores it twice. */
  settled: boolean;
};

type HttpOut = { status?: 200 | 201 | 204; headers: Record<string, string> };

export type IdempotencyContext = {
  deps: Deps;
  principal: Principal;
  idempotencyKey?: string | undefined;
  http: HttpOut;
};

type NextResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };

export type IdempotencyOptions<R> = {
  ctx: IdempotencyContext;
  mode: boolean | 'no-replay' | undefined;
  successStatus: number | undefined;
  mutation: boolean;
  path: string;
  getRawInput: () => Promise<unknown>;
  /** Runs the rest of the chain with the plan (or none when the request is not keyed). */
  next: (plan: IdempotencyPlan | undefined) => Promise<R>;
};

function fingerprint(path: string, input: unknown): string {
  return sha256(Buffer.from(`${path}\n${stringify(input ?? null)}`, 'utf8')).toString('base64url');
}

const rowWhere = (userId: string, id: string) => and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.id, id));

/**
 * The live stored answer for this key, if any (an expired row is deleted). Throws 422 when the
 * key was used with another request, 409 when the answer can no longer be opened.
 */
function findAnswer(db: Db, p: Principal, plan: IdempotencyPlan, now: number): StoredAnswer | undefined {
  const row = db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, p.userId), eq(idempotencyKeys.route, plan.route), eq(idempotencyKeys.keyIndex, plan.keyIndex)))
    .get();
  if (!row) return undefined;
  if (row.expiresAt <= now) {
    db.delete(idempotencyKeys).where(rowWhere(p.userId, row.id)).run();
    return undefined;
  }
  let stored: Sealed;
  try {
    stored = openJson<Sealed>(p.dek, rowAad(p.userId, IDEMPOTENCY_TABLE, row.id), row.sealed);
  } catch (e) {
    if (e instanceof SealError) {
      throw new AppError('conflict', 'The answer stored for this Idempotency-Key can no longer be read (the data key changed); use a new key.');
    }
    throw e;
  }
  if (stored.fingerprint !== plan.fingerprint) {
    throw new AppError(
      'validation_failed',
      'The Idempotency-Key header was already used with a different request body (or parameters) on this route; use a new key for a new request.',
    );
  }
  return stored.answer;
}

function storeAnswer(db: Db, p: Principal, plan: IdempotencyPlan, answer: StoredAnswer, now: number): void {
  const id = newId();
  db.insert(idempotencyKeys)
    .values({
      id,
      userId: p.userId,
      route: plan.route,
      keyIndex: plan.keyIndex,
      state: 'done',
      owner: '',
      sealed: sealJson(p.dek, rowAad(p.userId, IDEMPOTENCY_TABLE, id), { key: plan.key, fingerprint: plan.fingerprint, answer } satisfies Sealed),
      createdAt: now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    })
    .run();
}

/** Replays a stored answer: sets the HTTP status and headers, returns the body or throws the refusal. */
function replay(ctx: { http: HttpOut }, answer: StoredAnswer): unknown {
  switch (answer.kind) {
    case 'data':
      ctx.http.status = answer.status as 200 | 201 | 204;
      Object.assign(ctx.http.headers, answer.headers, { [REPLAYED_HEADER]: 'true' });
      return answer.hasBody ? answer.body : undefined;
    case 'created':
      throw new AppError(
        'conflict',
        `This Idempotency-Key already created ${answer.id ? `the resource ${answer.id}` : 'the resource'}; its answer held a secret that is shown only once, so it is not replayed.`,
        { headers: { [REPLAYED_HEADER]: 'true' } },
      );
    case 'error':
      throw new AppError(answer.code, answer.detail, { errors: answer.errors, headers: { ...answer.headers, [REPLAYED_HEADER]: 'true' } });
  }
}

function dataAnswer(ctx: { http: HttpOut }, plan: IdempotencyPlan, data: unknown): StoredAnswer {
  if (plan.mode === 'no-replay') {
    const id = data && typeof data === 'object' && typeof (data as { id?: unknown }).id === 'string' ? (data as { id: string }).id : null;
    return { kind: 'created', id };
  }
  return {
    kind: 'data',
    status: ctx.http.status ?? plan.successStatus ?? 200,
    headers: { ...ctx.http.headers },
    hasBody: data !== undefined,
    body: data === undefined ? null : data,
  };
}

/**
 * Inside the write's transaction (routers/middleware/atomic.ts): replays an answer a concurrent
 * twin committed since the middleware looked, or runs the model and stores its answer in the same
 * transaction. `run` must be synchronous.
 */
export function settleInWrite<T>(ctx: { deps: Deps; principal: Principal; http: HttpOut }, plan: IdempotencyPlan, run: () => T): T {
  const { deps, principal: p } = ctx;
  const now = deps.clock();
  let found: StoredAnswer | undefined;
  try {
    found = findAnswer(deps.db, p, plan, now);
  } catch (e) {
    plan.settled = true; // a refusal about the key itself is not the request's answer
    throw e;
  }
  if (found) {
    plan.settled = true;
    return replay(ctx, found) as T;
  }
  // A refusal thrown by the model leaves `settled` false: the middleware stores it afterwards.
  const data = run();
  storeAnswer(deps.db, p, plan, dataAnswer(ctx, plan, data), now);
  plan.settled = true;
  return data;
}

/** A refusal worth keeping: the model said no (nothing was written). Faults and 429s are not kept. */
function refusalOf(result: { ok: false; error: TRPCError }): StoredAnswer | null {
  const { problem, headers } = toProblem(result.error);
  // A 401 (the credential ended while the request ran) says nothing about the request either.
  if (problem.status >= 500 || problem.status === 429 || problem.status === 401) return null;
  return { kind: 'error', code: problem.type as ErrorCode, detail: problem.detail ?? '', errors: problem.errors, headers };
}

/** The middleware body (wired in routers/trpc.ts). */
export async function planIdempotent<R extends NextResult>(opts: IdempotencyOptions<R>): Promise<R> {
  const { ctx } = opts;
  const key = ctx.idempotencyKey;
  if (!opts.mode || !opts.mutation || key === undefined) return opts.next(undefined);
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new AppError('validation_failed', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.');
  }
  const { deps, principal: p } = ctx;
  const plan: IdempotencyPlan = {
    route: opts.path,
    key,
    keyIndex: idempotencyKeyIndex(p.dek, key),
    fingerprint: fingerprint(opts.path, await opts.getRawInput()),
    mode: opts.mode,
    successStatus: opts.successStatus,
    settled: false,
  };
  const found = findAnswer(deps.db, p, plan, deps.clock());
  if (found) {
    // A middleware result that ends the chain here: the procedure (and its writes) never runs.
    return { ok: true, data: replay(ctx, found), marker: 'middlewareMarker' } as unknown as R;
  }
  const result = await opts.next(plan);
  if (plan.settled) return result;
  if (!result.ok) {
    const refusal = refusalOf(result);
    if (refusal) {
      deps.db.transaction((tx) => {
        const now = deps.clock();
        // A twin that committed meanwhile keeps its answer.
        if (!findAnswerQuietly(tx as unknown as Db, p, plan, now)) storeAnswer(tx as unknown as Db, p, plan, refusal, now);
      });
    }
    return result;
  }
  // A success nobody stored: the procedure is marked idempotent but its resolver is not a
  // `atomic(…)` (routers/index.ts refuses to start with one; this guards routers built elsewhere).
  deps.log.error({ procedure: opts.path }, 'idempotency: an idempotent procedure ran outside atomic(); its answer was not stored');
  return result;
}

function findAnswerQuietly(db: Db, p: Principal, plan: IdempotencyPlan, now: number): boolean {
  try {
    return findAnswer(db, p, plan, now) !== undefined;
  } catch {
    return true;
  }
}
