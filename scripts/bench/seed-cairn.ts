// Seeds Cairn's DATA_DIR before the server starts, in-process with Cairn's own code, so every
// row is a real sealed row written by Cairn under the same master key:
// - accounts, personal tokens, tags and filters through the procedures (the tRPC caller: the same
//   zod inputs, middleware, models and sealing as a /v1 request, minus HTTP);
// - to-dos (tens of thousands) through the to-do model itself (createTodo, finishTodo) with the
//   input parsed by the route's own zod schema, for one principal resolved from the account's
//   personal token; per-request work (auth, rate limits) is left out only because it writes no row.
//   Both ways are in seed-model.ts, shared with seed-doors.ts and seed-app.ts.
// Run by run.ts as a child process: env DATA_DIR, CAIRN_SCRYPT_LOG_N, BENCH_ACCOUNTS, BENCH_TODAY.
// Reports a SeedResult over IPC (the personal tokens travel only there).
import { randomBytes } from 'node:crypto';
import { closeDb } from '../../db/client.js';
import { appRouter } from '../../routers/index.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { FILTER_CRITERIA, FILTER_NAME, TAG_NAMES, fixtureTodo } from './fixtures.js';
import type { AccountSpec, SeedResult, SeededAccount } from './protocol.js';
import { BATCH, procedureCaller, runSeeder, seedDeps, seedTodos } from './seed-model.js';

const SAMPLE = 500;

const deps = seedDeps();
const sqlite = deps.db.$client;
const call = procedureCaller(deps, 'bench-seed');
const procedures = (appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures;
const has = (path: string) => Object.prototype.hasOwnProperty.call(procedures, path);

/** Runs fn inside one SQLite transaction per batch: Cairn's own transactions nest as savepoints. */
async function batched<T>(count: number, fn: (i: number) => Promise<T>): Promise<void> {
  for (let start = 0; start < count; start += BATCH) {
    sqlite.exec('BEGIN');
    try {
      for (let i = start; i < Math.min(count, start + BATCH); i++) await fn(i);
      sqlite.exec('COMMIT');
    } catch (e) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw e;
    }
  }
}

const notes = new Set<string>();
// The create input takes no status (DECISIONS §5: status changes through /complete).
const COMPLETED_NOTE = 'completed fixtures are created, then completed through the model (finishTodo), as POST /v1/todos/{id}/complete does';

async function seedAccount(spec: AccountSpec, today: string, available: SeedResult['available']): Promise<{ account: SeededAccount; todos: number }> {
  const password = randomBytes(18).toString('base64url');
  const reg = (await call(undefined, 'auth.register', { email: `${spec.name}-${randomBytes(4).toString('hex')}@bench.invalid`, password })) as { token: string };
  const key = (await call(reg.token, 'keys.create', { name: `bench ${spec.name}`, scopes: ['tasks:read', 'tasks:write'], expiresInDays: 30 })) as { token: string };
  const token = key.token;

  const tagIds: string[] = [];
  const names = [...TAG_NAMES, ...Array.from({ length: Math.max(0, spec.tags - TAG_NAMES.length) }, (_, k) => `label-${k}`)];
  if (available.tags) {
    await batched(names.length, async (i) => {
      const tag = (await call(token, 'tags.create', { name: names[i]! })) as { id: string };
      if (tagIds.length < SAMPLE) tagIds.push(tag.id);
    });
  }

  const todoIds: string[] = [];
  const principal = await authenticate(deps, `Bearer ${token}`);
  seedTodos(deps, principal, {
    count: spec.todos,
    today,
    fixture: (i) => fixtureTodo(i, today),
    onTodo: (_i, id, f) => {
      if (f.status === 'completed') notes.add(COMPLETED_NOTE);
      if (todoIds.length < SAMPLE) todoIds.push(id);
    },
  });
  const todos = spec.todos;

  let filterId: string | null = null;
  if (available.filters) {
    const filter = (await call(token, 'filters.create', { name: FILTER_NAME, criteria: FILTER_CRITERIA })) as { id: string };
    filterId = filter.id;
  }
  return { account: { name: spec.name, todoIds, tagIds, filterId, token, session: reg.token }, todos };
}

async function main(): Promise<SeedResult> {
  const started = process.hrtime.bigint();
  const specs = JSON.parse(process.env.BENCH_ACCOUNTS ?? '[]') as AccountSpec[];
  const today = process.env.BENCH_TODAY ?? new Date().toISOString().slice(0, 10);
  const available = { todos: true, tags: has('tags.create'), filters: has('filters.create') };
  const accounts: SeededAccount[] = [];
  let todosSeeded = 0;
  for (const spec of specs) {
    const { account, todos } = await seedAccount(spec, today, available);
    accounts.push(account);
    todosSeeded += todos;
  }
  // closeDb runs PRAGMA optimize, as Cairn does at close (and openDb at open), so the seeded file
  // has the planner statistics a real Cairn database gets.
  closeDb(deps.db);
  const result: SeedResult = {
    type: 'seeded',
    accounts,
    available,
    notes: [...notes],
    todosSeeded,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
  return result;
}

runSeeder('seed', main);
