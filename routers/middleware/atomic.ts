// Every mutation's change and its bookkeeping in one SQLite transaction (issue 10): a procedure's
// resolver is wrapped in `atomic(…)`, which opens an IMMEDIATE transaction around the (synchronous)
// model call. Inside it, before the model runs:
// - the credential is checked to still stand (server/auth/credentials.ts assertCredentialLive),
//   so a write never seals under a data key that a concurrent rotation or password change has
//   replaced;
// - a keyed request of an Idempotent route looks for its answer again and, when none is there,
//   stores the model's answer in this same transaction (routers/middleware/idempotency.ts).
// The models' own `db.transaction(…)` calls nest inside as savepoints. Nothing here awaits: the
// model, its events, the counters and the stored answer commit together or not at all.
import type { Deps } from '../../server/deps.js';
import type { Principal } from '../../server/auth/credentials.js';
import { assertCredentialLive } from '../../server/auth/credentials.js';
import { flushDeleted } from '../../db/client.js';
import { settleInWrite, type IdempotencyPlan } from './idempotency.js';

type WriteContext = {
  deps: Deps;
  principal: Principal;
  http: { status?: 200 | 201 | 204; headers: Record<string, string> };
  idempotency?: IdempotencyPlan | undefined;
  procedurePath?: string | undefined;
};

const WRITES = new WeakSet<object>();

/** Whether a resolver is wrapped in `atomic` (routers/index.ts checks every Idempotent route at start). */
export function isAtomic(resolver: unknown): boolean {
  return typeof resolver === 'function' && WRITES.has(resolver);
}

function isThenable(v: unknown): boolean {
  return !!v && typeof (v as { then?: unknown }).then === 'function';
}

/** Runs `run` (the model call) in one IMMEDIATE transaction with the checks above. */
export function runWrite<T>(ctx: WriteContext, run: () => T, afterCommit?: (deps: Deps) => void): T {
  const { deps } = ctx;
  const body = () => {
    assertCredentialLive(deps, ctx.principal);
    const call = () => {
      const out = run();
      // An awaited step inside would split the transaction: refuse it loudly.
      if (isThenable(out)) throw new Error('atomic(): the model call must be synchronous');
      return out;
    };
    return ctx.idempotency ? settleInWrite(ctx, ctx.idempotency, call) : call();
  };
  const result = deps.db.$client.transaction(body).immediate();
  crashAfterCommitHook(deps, ctx.procedurePath);
  afterCommit?.(deps);
  return result;
}

/**
 * Test-only fault injection (docs/operations.md): with `CAIRN_UNSAFE_CRASH_AFTER_COMMIT=<procedure>`
 * the process dies right after that procedure's transaction commits and before any answer is sent,
 * as a power cut or SIGKILL would. The crash tests use it to prove that a retry replays.
 */
function crashAfterCommitHook(deps: Deps, procedure: string | undefined): void {
  const target = deps.config.crashAfterCommit;
  if (target && procedure === target) process.kill(process.pid, 'SIGKILL');
}

/**
 * Wraps a mutation resolver: `.mutation(atomic(({ ctx, input }) => m.createTodo(…)))`.
 * `afterCommit` runs once the transaction has committed (e.g. flushing deleted key material out
 * of the WAL, which cannot happen inside a transaction).
 */
export function atomic<O extends { ctx: WriteContext }, R>(fn: (opts: O) => R, opts: { afterCommit?: (deps: Deps) => void } = {}): (opts: O) => R {
  const wrapped = (o: O) => runWrite(o.ctx, () => fn(o), opts.afterCommit);
  WRITES.add(wrapped);
  return wrapped;
}

/**
 * For writes that delete content or key material (DELETE routes, trash empty, logout, revocation):
 * once committed, the WAL is checkpointed and truncated, so with secure_delete on no copy of the
 * deleted bytes stays in cairn.db or cairn.db-wal (docs/security.md "What deletion guarantees").
 */
export const ERASES = { afterCommit: (deps: Deps) => flushDeleted(deps.db) };
