// Seeds the account of the web app scenarios (scripts/bench/app.ts, docs/performance.md "The web
// app in Chromium") into Cairn's DATA_DIR before the server starts, with Cairn's own code as
// seed-cairn.ts and seed-doors.ts do: the account and its projects through the procedures (the
// tRPC caller), the to-dos through the to-do model with the create route's zod input.
//
// Shape (issue 32 "Performance": "an account of 10,000 to-dos", "a 2,000-item Anytime list"):
// 10,000 to-dos from the fixtures (fixtures.ts: titles, notes, tags, priorities, a few dated
// five days back to five ahead, ~5% someday), except that every fifth one is an open undated
// to-do (2,000 in Anytime) and the fixtures' other open undated ones are completed (the Logbook
// holds ~7,000), so Anytime holds 2,000 plus the dated ones due by today. 40 projects; one to-do
// in 41 has none.
// Run by run.ts as a child process: env DATA_DIR, CAIRN_SCRYPT_LOG_N, BENCH_APP_TODOS, BENCH_TODAY.
// Reports an AppSeed over IPC (the session travels only there).
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { deriveServerKeys, loadMasterKey } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { toProblem } from '../../routers/middleware/problems.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { createTodo, finishTodo } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import { fixtureTodo, type FixtureTodo } from './fixtures.js';
import type { AppSeed } from './app-report.js';

const BATCH = 500;
const PROJECTS = 40;

const config = loadConfig();
const deps: Deps = {
  db: openDb(config.dbFile, { durability: 'relaxed' }), // a seed is rebuilt, never recovered
  config,
  keys: deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex)),
  clock: systemClock,
  log: createLogger('silent'),
};
const sqlite = deps.db.$client;
const factory = createCallerFactory(appRouter);

type AnyFn = (input?: unknown) => Promise<unknown>;
function call(token: string | undefined, path: string, input?: unknown): Promise<unknown> {
  const caller = factory(createContextInner({ deps, requestId: 'bench-seed-app', authorization: token ? `Bearer ${token}` : undefined })) as unknown as Record<string, Record<string, AnyFn>>;
  const [ns, name] = path.split('.') as [string, string];
  return caller[ns]![name]!(input);
}

/** The i-th to-do of the app account: the fixture, with Anytime held at every fifth one. */
function appTodo(i: number, today: string): FixtureTodo {
  const f = fixtureTodo(i, today);
  if (i % 5 === 0) return { ...f, status: 'open', someday: false, whenDate: null };
  if (f.status === 'open' && !f.someday && f.whenDate === null) return { ...f, status: 'completed' };
  return f;
}

async function main(): Promise<void> {
  const started = process.hrtime.bigint();
  const todos = Number(process.env.BENCH_APP_TODOS ?? 10_000);
  const today = process.env.BENCH_TODAY ?? new Date().toISOString().slice(0, 10);
  const email = `app-${randomBytes(4).toString('hex')}@bench.invalid`;
  // A first-party session, as the app holds it after sign-in (docs/app.md "Staying signed in").
  const reg = (await call(undefined, 'auth.register', { email, password: randomBytes(18).toString('base64url') })) as { token: string };
  const session = reg.token;
  const projectIds: string[] = [];
  for (let k = 0; k < PROJECTS; k++) {
    const c = (await call(session, 'containers.create', { kind: 'project', name: `Project ${String(k).padStart(2, '0')}` })) as { id: string };
    projectIds.push(c.id);
  }
  const principal = await authenticate(deps, `Bearer ${session}`);
  const counts = { anytime: 0, someday: 0, dated: 0, completed: 0 };
  for (let start = 0; start < todos; start += BATCH) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(todos, start + BATCH); i++) {
        const f = appTodo(i, today);
        const k = i % (PROJECTS + 1);
        const input = CreateTodoInput.parse({
          title: f.title,
          ...(k < PROJECTS ? { parentId: projectIds[k] } : {}),
          ...(f.notes !== null ? { notes: f.notes } : {}),
          ...(f.whenDate !== null ? { whenDate: f.whenDate } : {}),
          ...(f.someday ? { someday: true } : {}),
          ...(f.priority !== null ? { priority: f.priority } : {}),
          ...(f.tags.length ? { tags: f.tags } : {}),
        });
        const todo = createTodo(deps, principal, input);
        if (f.status === 'completed') {
          finishTodo(deps, principal, todo.id, 'completed', today);
          counts.completed++;
        } else if (f.someday) counts.someday++;
        else if (f.whenDate) counts.dated++;
        else counts.anytime++;
      }
    })();
  }
  closeDb(deps.db);
  const result: AppSeed = { type: 'seeded-app', session, todos, projects: PROJECTS, counts, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  process.send!(result, () => process.exit(0));
}

main().catch((e) => {
  const { problem } = toProblem(e);
  console.error('app seed failed:', problem.type === 'internal' ? e : JSON.stringify(problem));
  process.exit(1);
});
