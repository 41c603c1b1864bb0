// Seeds the account of the web app scenarios (scripts/bench/app.ts, docs/performance.md "The web
// app in Chromium") into Cairn's DATA_DIR before the server starts, with Cairn's own code as
// seed-cairn.ts and seed-doors.ts do: the account and its projects through the procedures (the
// tRPC caller), the to-dos through the to-do model with the create route's zod input (seed-model.ts).
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
import { closeDb } from '../../db/client.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { fixtureTodo, type FixtureTodo } from './fixtures.js';
import type { AppSeed } from './app-report.js';
import { procedureCaller, runSeeder, seedDeps, seedTodos } from './seed-model.js';

const PROJECTS = 40;

const deps = seedDeps();
const call = procedureCaller(deps, 'bench-seed-app');

/** The i-th to-do of the app account: the fixture, with Anytime held at every fifth one. */
function appTodo(i: number, today: string): FixtureTodo {
  const f = fixtureTodo(i, today);
  if (i % 5 === 0) return { ...f, status: 'open', someday: false, whenDate: null };
  if (f.status === 'open' && !f.someday && f.whenDate === null) return { ...f, status: 'completed' };
  return f;
}

async function main(): Promise<AppSeed> {
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
  seedTodos(deps, principal, {
    count: todos,
    today,
    fixture: (i) => appTodo(i, today),
    parentOf: (i) => {
      const k = i % (PROJECTS + 1);
      return k < PROJECTS ? projectIds[k] : undefined; // one in 41 has no project
    },
    onTodo: (_i, _id, f) => {
      if (f.status === 'completed') counts.completed++;
      else if (f.someday) counts.someday++;
      else if (f.whenDate) counts.dated++;
      else counts.anytime++;
    },
  });
  closeDb(deps.db);
  const result: AppSeed = { type: 'seeded-app', session, todos, projects: PROJECTS, counts, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  return result;
}

runSeeder('app seed', main);
