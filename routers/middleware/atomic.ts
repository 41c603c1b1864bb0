// Every mutation's change and its bookkeeping in one SQLite transaction (issue 10): a procedure's
// resolver is wrapped in `atomic(…)`, which runs the (synchronous) model call in an IMMEDIATE
// transaction. Inside it, before the model runs:
// - the credential is checked to still stand (routers/auth/credentials.ts assertCredentialLive),
//   so a write never seals under a data key that a concurrent rotation or password change has
//   replaced;
// - a keyed request of an Idempotent route looks for its answer again and, when none is there,
//   stores the model's answer in this same transaction (routers/middleware/idempotency.ts).
// The models' own `db.transaction(…)` calls nest inside as savepoints. Nothing here awaits: the
// model, its events, the counters and the stored answer commit together or not at all.
//
// A savepoint makes SQLite copy every page the write changes into a sub-journal, which goes to a
// temporary file once past 64 KiB. The transaction of a bounded write runs with SQLite's
// temporary storage in memory (db/client.ts smallWrites); a write declared `bulk` (its size grows
// with the account) keeps it in files, and so does every group that holds one.
//
// Group commit (issue 12, docs/performance.md "Group commit"): the writes that reach `atomic` in
// one turn of the event loop (requests read in the same poll phase) are run together at the end
// of that turn (setImmediate), in ONE IMMEDIATE transaction, each in its own savepoint, then
// committed with one fsync. A write that throws rolls back to its savepoint only; the others
// commit. No answer is sent before the commit: every promise settles after it. The transaction is
// opened, filled and committed in one synchronous stretch: no other request's code, read or
// write, runs while it is open. If SQLite drops the whole transaction (disk full, I/O error),
// every write of the group fails with that error and nothing of the group is kept.
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { assertCredentialLive } from '../auth/credentials.js';
import { flushDeleted, smallWrites } from '../../db/client.js';
import { settleInWrite, type IdempotencyPlan } from './idempotency.js';

type WriteContext = {
  deps: Deps;
  principal: Principal;
  http: { status?: 200 | 201 | 204; headers: Record<string, string> };
  idempotency?: IdempotencyPlan | undefined;
  procedurePath?: string | undefined;
};

const WRITES = new WeakMap<object, WriteOpts>();

/** Whether a resolver is wrapped in `atomic` (routers/index.ts checks every Idempotent route at start). */
export function isAtomic(resolver: unknown): boolean {
  return typeof resolver === 'function' && WRITES.has(resolver);
}

/** Whether an `atomic` resolver was declared `bulk` (WriteOpts). */
export function isBulk(resolver: unknown): boolean {
  return typeof resolver === 'function' && WRITES.get(resolver)?.bulk === true;
}

function isThenable(v: unknown): boolean {
  return !!v && typeof (v as { then?: unknown }).then === 'function';
}

/** The checks above, then the model call; inside the caller's transaction or savepoint. */
function writeBody<T>(ctx: WriteContext, run: () => T): T {
  assertCredentialLive(ctx.deps, ctx.principal);
  const call = () => {
    const out = run();
    // An awaited step inside would split the transaction: refuse it loudly.
    if (isThenable(out)) throw new Error('atomic(): the model call must be synchronous');
    return out;
  };
  return ctx.idempotency ? settleInWrite(ctx, ctx.idempotency, call) : call();
}

/** Runs `tx` under smallWrites (db/client.ts) unless a write of it is `bulk`. */
function inTempStore<T>(deps: Deps, bulk: boolean, tx: () => T): T {
  return bulk ? tx() : smallWrites(deps.db.$client, tx);
}

/** Runs `run` (the model call) alone in one IMMEDIATE transaction with the checks above. */
export function runWrite<T>(ctx: WriteContext, run: () => T, afterCommit?: (deps: Deps) => void, bulk = false): T {
  const { deps } = ctx;
  const result = inTempStore(deps, bulk, () => deps.db.$client.transaction(() => writeBody(ctx, run)).immediate());
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

/** What `atomic` takes besides the resolver. */
export type WriteOpts = {
  /** Runs once the transaction has committed (e.g. flushing deleted key material out of the WAL). */
  afterCommit?: (deps: Deps) => void;
  /**
   * The write changes a number of rows that grows with the account (a container's or a heading's
   * to-dos, a tag's links, the trash): its transaction keeps SQLite's temporary storage in files,
   * so its sub-journal does not hold a copy of every page it changes in memory (db/client.ts
   * smallWrites). Every other write is bounded and runs with it in memory.
   */
  bulk?: boolean;
};

/**
 * Wraps a mutation resolver: `.mutation(atomic(({ ctx, input }) => m.createTodo(…)))`.
 * `afterCommit` runs once the transaction has committed (e.g. flushing deleted key material out
 * of the WAL, which cannot happen inside a transaction).
 */
export function atomic<O extends { ctx: WriteContext }, R>(fn: (opts: O) => R, opts: WriteOpts = {}): (opts: O) => Promise<R> {
  const wrapped = (o: O) => queueWrite(o.ctx, () => fn(o), opts.afterCommit, opts.bulk);
  WRITES.set(wrapped, opts);
  return wrapped;
}

/** At most this many writes share one transaction (one request's work stays bounded, and so does a group's). */
export const GROUP_MAX = 64;

type Queued = {
  ctx: WriteContext;
  run: () => unknown;
  afterCommit: ((deps: Deps) => void) | undefined;
  bulk: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

type Queue = { items: Queued[]; scheduled: boolean; groups: number; writes: number };
const QUEUES = new WeakMap<object, Queue>();

function queueOf(deps: Deps): Queue {
  const key = deps.db.$client;
  let q = QUEUES.get(key);
  if (!q) {
    q = { items: [], scheduled: false, groups: 0, writes: 0 };
    QUEUES.set(key, q);
  }
  return q;
}

/** Groups committed and writes run through them on this database (tests and the bench read it). */
export function groupCommitStats(deps: Deps): { groups: number; writes: number } {
  const q = queueOf(deps);
  return { groups: q.groups, writes: q.writes };
}

/**
 * `runWrite`, joined to the group of this event-loop turn: the promise settles once the group has
 * committed (or failed). See the header comment.
 */
export function queueWrite<T>(ctx: WriteContext, run: () => T, afterCommit?: (deps: Deps) => void, bulk = false): Promise<T> {
  const q = queueOf(ctx.deps);
  return new Promise<T>((resolve, reject) => {
    q.items.push({ ctx, run, afterCommit, bulk, resolve: resolve as (v: unknown) => void, reject });
    if (!q.scheduled) {
      q.scheduled = true;
      setImmediate(flushGroup, ctx.deps, q);
    }
  });
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function flushGroup(deps: Deps, q: Queue): void {
  const group = q.items.splice(0, GROUP_MAX);
  if (q.items.length) setImmediate(flushGroup, deps, q);
  else q.scheduled = false;
  q.groups++;
  q.writes += group.length;
  if (group.length === 1) {
    const only = group[0]!;
    let out: unknown;
    try {
      out = runWrite(only.ctx, only.run, only.afterCommit, only.bulk);
    } catch (e) {
      only.reject(e);
      return;
    }
    only.resolve(out);
    return;
  }
  const sqlite = deps.db.$client;
  const outcomes: Outcome[] = [];
  try {
    const commitGroup = () =>
      sqlite
        .transaction(() => {
          for (const item of group) {
            try {
              // Nested: a savepoint, rolled back alone when this write throws.
              outcomes.push({ ok: true, value: sqlite.transaction(() => writeBody(item.ctx, item.run))() });
            } catch (error) {
              outcomes.push({ ok: false, error });
              // SQLite rolled the whole transaction back (SQLITE_FULL, an I/O error…): the group is lost.
              if (!sqlite.inTransaction) throw error;
            }
          }
        })
        .immediate();
    inTempStore(deps, group.some((item) => item.bulk), commitGroup);
  } catch (error) {
    // Nothing of the group committed: a write that had succeeded fails with the group's error.
    for (let i = 0; i < group.length; i++) {
      const o = outcomes[i];
      if (!o || o.ok) outcomes[i] = { ok: false, error };
    }
  }
  const hooks = new Map<(deps: Deps) => void, unknown>();
  for (let i = 0; i < group.length; i++) {
    const item = group[i]!;
    const o = outcomes[i]!;
    if (!o.ok) {
      item.reject(o.error);
      continue;
    }
    crashAfterCommitHook(deps, item.ctx.procedurePath);
    const hook = item.afterCommit;
    if (hook) {
      // Run once per group (e.g. one WAL truncation after all of the group's deletions).
      if (!hooks.has(hook)) {
        try {
          hook(deps);
          hooks.set(hook, null);
        } catch (e) {
          hooks.set(hook, e ?? new Error('afterCommit failed'));
        }
      }
      const failed = hooks.get(hook);
      if (failed) {
        item.reject(failed);
        continue;
      }
    }
    item.resolve(o.value);
  }
}

/**
 * For writes that delete content or key material (DELETE routes, trash empty, logout, revocation):
 * once committed, the WAL is checkpointed and truncated, so with secure_delete on no copy of the
 * deleted bytes stays in cairn.db or cairn.db-wal (docs/security.md "What deletion guarantees").
 */
export const ERASES: WriteOpts = { afterCommit: (deps: Deps) => flushDeleted(deps.db) };
/** A write whose size grows with the account (WriteOpts.bulk). */
export const BULK: WriteOpts = { bulk: true };
/** Both: a deletion whose size grows with the account. */
export const BULK_ERASES: WriteOpts = { ...ERASES, ...BULK };
