// Idempotent retries (spec §4.2, docs/api.md "Idempotency"): a tRPC procedure middleware, so it
// holds for /v1 and /trpc alike. It runs after authentication and before input parsing, on every
// mutation whose meta says `idempotent`, when the request carries `Idempotency-Key`.
//
//   first request    a `pending` row (unique on user + procedure + key) is inserted before the
//                    procedure runs; its answer (status, procedure-set headers, body, or a 4xx
//                    problem) is then sealed into the row. A 5xx or 429 answer is not kept: the
//                    row is deleted and a retry runs again.
//   retry, done      the stored answer is replayed with `Idempotent-Replayed: true`; the
//                    procedure does not run, so nothing is written and no event is emitted.
//   retry, running   409 `conflict`.
//   other body       422 `validation_failed` (the key belongs to another request).
//
// The request is fingerprinted by SHA-256 of its raw input (body plus path and query parameters),
// serialised with sorted keys, so property order does not matter. Key, fingerprint and answer are
// sealed under the user's data key; only a blind index of the key is plaintext. Rows expire 24
// hours after the first request (purged by server/jobs/purge.ts; an expired row is ignored).
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import stringify from 'safe-stable-stringify';
import type { TRPCError } from '@trpc/server';
import { idempotencyKeys } from '../../db/schema/index.js';
import type { Deps } from '../../server/deps.js';
import type { Principal } from '../../server/auth/credentials.js';
import { AppError, type ErrorCode, type FieldError } from '../../server/errors.js';
import { idempotencyKeyIndex } from '../../server/crypto/blind-index.js';
import { openJson, rowAad, sealJson, SealError } from '../../server/crypto/seal.js';
import { sha256 } from '../../server/crypto/secrets.js';
import { newId } from '../../server/ids.js';
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

type Sealed = { key: string; fingerprint: string; answer?: StoredAnswer };

/** Each app instance (process) marks the pending rows it runs; another's were left by a crash. */
const INSTANCES = new WeakMap<Deps, string>();
function instanceOf(deps: Deps): string {
  let id = INSTANCES.get(deps);
  if (!id) {
    id = randomBytes(12).toString('base64url');
    INSTANCES.set(deps, id);
  }
  return id;
}

export type IdempotencyContext = {
  deps: Deps;
  principal: Principal;
  idempotencyKey?: string | undefined;
  http: { status?: 200 | 201 | 204; headers: Record<string, string> };
};

type NextResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };

export type IdempotencyOptions<R> = {
  ctx: IdempotencyContext;
  mode: boolean | 'no-replay' | undefined;
  successStatus: number | undefined;
  mutation: boolean;
  path: string;
  getRawInput: () => Promise<unknown>;
  next: () => Promise<R>;
};

function fingerprint(path: string, input: unknown): string {
  return sha256(Buffer.from(`${path}\n${stringify(input ?? null)}`, 'utf8')).toString('base64url');
}

type Claim = { kind: 'run'; rowId: string } | { kind: 'replay'; answer: StoredAnswer };

/** Inserts the pending row, or says what the existing row means. Synchronous: one transaction. */
function claim(deps: Deps, p: Principal, route: string, key: string, print: string): Claim {
  const keyIndex = idempotencyKeyIndex(p.dek, key);
  const now = deps.clock();
  const me = instanceOf(deps);
  return deps.db.transaction((tx) => {
    const where = and(eq(idempotencyKeys.userId, p.userId), eq(idempotencyKeys.route, route), eq(idempotencyKeys.keyIndex, keyIndex));
    let row = tx.select().from(idempotencyKeys).where(where).get();
    if (row && row.expiresAt <= now) {
      tx.delete(idempotencyKeys).where(and(eq(idempotencyKeys.userId, p.userId), eq(idempotencyKeys.id, row.id))).run();
      row = undefined;
    }
    if (!row) {
      const id = newId();
      tx.insert(idempotencyKeys)
        .values({
          id,
          userId: p.userId,
          route,
          keyIndex,
          state: 'pending',
          owner: me,
          sealed: sealJson(p.dek, rowAad(p.userId, IDEMPOTENCY_TABLE, id), { key, fingerprint: print } satisfies Sealed),
          createdAt: now,
          expiresAt: now + IDEMPOTENCY_TTL_MS,
        })
        .run();
      return { kind: 'run', rowId: id };
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
    if (stored.fingerprint !== print) {
      throw new AppError(
        'validation_failed',
        'The Idempotency-Key header was already used with a different request body (or parameters) on this route; use a new key for a new request.',
      );
    }
    if (row.state === 'pending') {
      if (row.owner === me) {
        throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry once it has finished.');
      }
      // Left pending by an instance that stopped (a crash between claim and answer): run again.
      tx.update(idempotencyKeys).set({ owner: me }).where(and(eq(idempotencyKeys.userId, p.userId), eq(idempotencyKeys.id, row.id))).run();
      return { kind: 'run', rowId: row.id };
    }
    return { kind: 'replay', answer: stored.answer! };
  });
}

function toStored(result: NextResult, ctx: IdempotencyContext, mode: IdempotencyOptions<unknown>['mode'], successStatus: number | undefined): StoredAnswer | null {
  if (result.ok) {
    if (mode === 'no-replay') {
      const id = result.data && typeof result.data === 'object' && typeof (result.data as { id?: unknown }).id === 'string' ? (result.data as { id: string }).id : null;
      return { kind: 'created', id };
    }
    return {
      kind: 'data',
      status: ctx.http.status ?? successStatus ?? 200,
      headers: { ...ctx.http.headers },
      hasBody: result.data !== undefined,
      body: result.data === undefined ? null : result.data,
    };
  }
  const { problem, headers } = toProblem(result.error);
  // A server fault or a rate-limit refusal says nothing about the request: the retry runs again.
  if (problem.status >= 500 || problem.status === 429) return null;
  return { kind: 'error', code: problem.type as ErrorCode, detail: problem.detail ?? '', errors: problem.errors, headers };
}

function replay<R>(ctx: IdempotencyContext, answer: StoredAnswer): R {
  switch (answer.kind) {
    case 'data':
      ctx.http.status = answer.status as 200 | 201 | 204;
      Object.assign(ctx.http.headers, answer.headers, { [REPLAYED_HEADER]: 'true' });
      // A middleware result that ends the chain here: the procedure (and its writes) never runs.
      return { ok: true, data: answer.hasBody ? answer.body : undefined, marker: 'middlewareMarker' } as unknown as R;
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

/** The middleware body (wired in routers/trpc.ts). */
export async function runIdempotent<R extends NextResult>(opts: IdempotencyOptions<R>): Promise<R> {
  const { ctx } = opts;
  const key = ctx.idempotencyKey;
  if (!opts.mode || !opts.mutation || key === undefined) return opts.next();
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new AppError('validation_failed', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.');
  }
  const { deps, principal: p } = ctx;
  const print = fingerprint(opts.path, await opts.getRawInput());
  const claimed = claim(deps, p, opts.path, key, print);
  if (claimed.kind === 'replay') return replay<R>(ctx, claimed.answer);

  const rowWhere = and(eq(idempotencyKeys.userId, p.userId), eq(idempotencyKeys.id, claimed.rowId));
  let result: R;
  try {
    result = await opts.next();
  } catch (e) {
    deps.db.delete(idempotencyKeys).where(rowWhere).run();
    throw e;
  }
  try {
    const answer = toStored(result, ctx, opts.mode, opts.successStatus);
    if (!answer) {
      deps.db.delete(idempotencyKeys).where(rowWhere).run();
    } else {
      const sealed = sealJson(p.dek, rowAad(p.userId, IDEMPOTENCY_TABLE, claimed.rowId), { key, fingerprint: print, answer } satisfies Sealed);
      deps.db.update(idempotencyKeys).set({ state: 'done', sealed }).where(rowWhere).run();
    }
  } catch (e) {
    // The answer itself went through; only its storage failed. Free the key and say so in the log.
    deps.log.error({ err: e, procedure: opts.path }, 'idempotency: storing the answer failed');
    try {
      deps.db.delete(idempotencyKeys).where(rowWhere).run();
    } catch {
      /* already logged */
    }
  }
  return result;
}
