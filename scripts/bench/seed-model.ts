// What the bench's seeders share: Cairn's own code writes every row, under the DATA_DIR's master key.
// - seedDeps(): the seeder's Deps, from the environment run.ts gives it (DATA_DIR, CAIRN_SCRYPT_LOG_N).
// - procedureCaller(): a procedure by its dotted path through the tRPC caller (the same zod inputs,
//   middleware, models and sealing as a /v1 request, minus HTTP).
// - seedTodos(): fixtures as to-dos through the to-do model itself (createTodo, then finishTodo for a
//   completed one) with the input parsed by the create route's zod schema, one SQLite transaction
//   per 500 (Cairn's own transactions nest as savepoints).
// - runSeeder(): runs a seeder's main, sends its result over IPC (secrets travel only there), exits.
// Used by seed-cairn.ts, seed-doors.ts and seed-app.ts (child processes of run.ts), and by
// index-micro.ts and view-profile.ts (in-process, with their own Deps).
import { loadConfig } from '../../core/config.js';
import { openDb } from '../../db/client.js';
import { deriveServerKeys, loadMasterKey } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { toProblem } from '../../routers/middleware/problems.js';
import type { Principal } from '../../routers/auth/credentials.js';
import { createTodo, finishTodo } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import type { FixtureTodo } from './fixtures.js';

/** To-dos written per SQLite transaction. */
export const BATCH = 500;

/** A seeder's Deps from its environment: the DATA_DIR's database and master key, a silent log. */
export function seedDeps(): Deps {
  const config = loadConfig();
  return {
    db: openDb(config.dbFile, { durability: 'relaxed' }), // a seed is rebuilt, never recovered
    config,
    keys: deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex)),
    clock: systemClock,
    log: createLogger('silent'),
  };
}

/** Calls a procedure by its dotted path with the given bearer token (or none). */
export type CallProcedure = (token: string | undefined, path: string, input?: unknown) => Promise<unknown>;

type AnyFn = (input?: unknown) => Promise<unknown>;
export function procedureCaller(deps: Deps, requestId: string): CallProcedure {
  const factory = createCallerFactory(appRouter);
  return (token, path, input) => {
    const caller = factory(createContextInner({ deps, requestId, authorization: token ? `Bearer ${token}` : undefined })) as unknown as Record<string, Record<string, AnyFn>>;
    const [ns, name] = path.split('.') as [string, string];
    return caller[ns]![name]!(input);
  };
}

export type SeedTodos = {
  /** How many to-dos: fixtures 0 .. count-1, in that order. */
  count: number;
  /** The day the fixtures are dated from and completed on. */
  today: string;
  /** The i-th fixture (fixtureTodo, or a seeder's variant of it). */
  fixture: (i: number) => FixtureTodo;
  /** The i-th to-do's project, or undefined for a standalone one. */
  parentOf?: (i: number) => string | undefined;
  /** Called after each to-do is written (and completed), inside its batch's transaction. */
  onTodo?: (i: number, id: string, f: FixtureTodo) => void;
};

/**
 * Writes fixtures as to-dos through the to-do model: the create route's zod input, createTodo,
 * then finishTodo for a completed one (the create input takes no status: DECISIONS §5, status
 * changes through /complete), one transaction per BATCH.
 */
export function seedTodos(deps: Deps, p: Principal, { count, today, fixture, parentOf, onTodo }: SeedTodos): void {
  const sqlite = deps.db.$client;
  for (let start = 0; start < count; start += BATCH) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(count, start + BATCH); i++) {
        const f = fixture(i);
        const parentId = parentOf?.(i);
        const input = CreateTodoInput.parse({
          title: f.title,
          ...(parentId !== undefined ? { parentId } : {}),
          ...(f.notes !== null ? { notes: f.notes } : {}),
          ...(f.whenDate !== null ? { whenDate: f.whenDate } : {}),
          ...(f.someday ? { someday: true } : {}),
          ...(f.priority !== null ? { priority: f.priority } : {}),
          ...(f.tags.length ? { tags: f.tags } : {}),
        });
        const todo = createTodo(deps, p, input);
        if (f.status === 'completed') finishTodo(deps, p, todo.id, 'completed', today);
        onTodo?.(i, todo.id, f);
      }
    })();
  }
}

/**
 * Runs a seeder's main in a child process of run.ts: its result goes to the parent over IPC, then
 * the process exits; a failure is printed (a problem's JSON, or the error when internal), exit 1.
 */
export function runSeeder(label: string, main: () => Promise<unknown>): void {
  main()
    .then((result) => process.send!(result, () => process.exit(0)))
    .catch((e: unknown) => {
      const { problem } = toProblem(e);
      console.error(`${label} failed:`, problem.type === 'internal' ? e : JSON.stringify(problem));
      process.exit(1);
    });
}
