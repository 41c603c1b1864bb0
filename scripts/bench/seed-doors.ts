// Seeds the account of the door scenarios (CalDAV and MCP, scripts/bench/doors.ts) into Cairn's
// DATA_DIR before the server starts, with Cairn's own code as seed-cairn.ts does: the account, its
// projects and credentials through the procedures (the tRPC caller), the to-dos through the to-do
// model with the create route's zod input.
//
// Shape (issue 30 "Performance"): 10,000 to-dos in 50 projects, the fixtures of every sized account
// (fixtures.ts: ~78% completed, a few scheduled today). Project 0 holds 500 to-dos (the
// "500-item collection" of the PROPFIND scenario); the 9,500 others are spread over projects 1–49
// (~194 each). Credentials: an app password (`audience: "dav"`), an `mcp` token and a `rest` token
// (both read-only), so the MCP tool and its REST twin read the same account.
// Run by run.ts as a child process: env DATA_DIR, CAIRN_SCRYPT_LOG_N, BENCH_DOOR_TODOS,
// BENCH_DOOR_PROJECTS, BENCH_TODAY. Reports a DoorSeed over IPC (the secrets travel only there).
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
import { doorProjectOf, fixtureTodo } from './fixtures.js';
import type { DoorSeed } from './protocol.js';

const BATCH = 500;

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
  const caller = factory(createContextInner({ deps, requestId: 'bench-seed-doors', authorization: token ? `Bearer ${token}` : undefined })) as unknown as Record<
    string,
    Record<string, AnyFn>
  >;
  const [ns, name] = path.split('.') as [string, string];
  return caller[ns]![name]!(input);
}

async function main(): Promise<void> {
  const started = process.hrtime.bigint();
  const todos = Number(process.env.BENCH_DOOR_TODOS ?? 10_000);
  const projectCount = Number(process.env.BENCH_DOOR_PROJECTS ?? 50);
  const today = process.env.BENCH_TODAY ?? new Date().toISOString().slice(0, 10);
  const email = `doors-${randomBytes(4).toString('hex')}@bench.invalid`;
  const reg = (await call(undefined, 'auth.register', { email, password: randomBytes(18).toString('base64url') })) as { token: string };
  const session = reg.token;
  const me = (await call(session, 'me.get')) as { sub: string };
  const dav = (await call(session, 'keys.create', { name: 'bench dav', audience: 'dav', expiresInDays: 30 })) as { token: string };
  const mcp = (await call(session, 'keys.create', { name: 'bench mcp', audience: 'mcp', scopes: ['todos:read', 'containers:read'], expiresInDays: 30 })) as { token: string };
  const rest = (await call(session, 'keys.create', { name: 'bench rest', scopes: ['todos:read', 'containers:read'], expiresInDays: 30 })) as { token: string };

  const projectIds: string[] = [];
  for (let k = 0; k < projectCount; k++) {
    const c = (await call(session, 'containers.create', { kind: 'project', name: `Project ${String(k).padStart(2, '0')}` })) as { id: string };
    projectIds.push(c.id);
  }

  // Up to 500 to-do ids of projects 0, 1 and 2 (PROPFIND/multiget, sync, PUT).
  const members: string[][] = [[], [], []];
  const principal = await authenticate(deps, `Bearer ${session}`);
  for (let start = 0; start < todos; start += BATCH) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(todos, start + BATCH); i++) {
        const f = fixtureTodo(i, today);
        const k = doorProjectOf(i, projectCount);
        const input = CreateTodoInput.parse({
          title: f.title,
          parentId: projectIds[k],
          ...(f.notes !== null ? { notes: f.notes } : {}),
          ...(f.whenDate !== null ? { whenDate: f.whenDate } : {}),
          ...(f.someday ? { someday: true } : {}),
          ...(f.priority !== null ? { priority: f.priority } : {}),
        });
        const todo = createTodo(deps, principal, input);
        if (f.status === 'completed') finishTodo(deps, principal, todo.id, 'completed', today);
        if (k < members.length) members[k]!.push(todo.id);
      }
    })();
  }
  closeDb(deps.db);
  const result: DoorSeed = {
    type: 'seeded-doors',
    userId: me.sub,
    email,
    davPassword: dav.token,
    mcpToken: mcp.token,
    restToken: rest.token,
    projectIds,
    members,
    todos,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
  process.send!(result, () => process.exit(0));
}

main().catch((e) => {
  const { problem } = toProblem(e);
  console.error('door seed failed:', problem.type === 'internal' ? e : JSON.stringify(problem));
  process.exit(1);
});
