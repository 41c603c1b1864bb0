// Seeds the account of the door scenarios (CalDAV and MCP, scripts/bench/doors.ts) into Cairn's
// DATA_DIR before the server starts, with Cairn's own code as seed-cairn.ts does: the account, its
// projects and credentials through the procedures (the tRPC caller), the to-dos through the to-do
// model with the create route's zod input (seed-model.ts).
//
// Shape (issue 30 "Performance"): 10,000 to-dos in 50 projects, the fixtures of every sized account
// (fixtures.ts: ~78% completed, a few scheduled today). Project 0 holds 500 to-dos (the
// "500-item collection" of the PROPFIND scenario); the 9,500 others are spread over projects 1–49
// (~194 each). Credentials: an app password (`audience: "dav"`), an `mcp` token and a `rest` token
// (both read-only), so the MCP tool and its REST twin read the same account.
// Run by run.ts as a child process: env DATA_DIR, CAIRN_SCRYPT_LOG_N, BENCH_DOOR_TODOS,
// BENCH_DOOR_PROJECTS, BENCH_TODAY. Reports a DoorSeed over IPC (the secrets travel only there).
import { randomBytes } from 'node:crypto';
import { closeDb } from '../../db/client.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { doorProjectOf, fixtureTodo } from './fixtures.js';
import type { DoorSeed } from './protocol.js';
import { procedureCaller, runSeeder, seedDeps, seedTodos } from './seed-model.js';

const deps = seedDeps();
const call = procedureCaller(deps, 'bench-seed-doors');

async function main(): Promise<DoorSeed> {
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
  seedTodos(deps, principal, {
    count: todos,
    today,
    // Without the fixtures' tags: this account has always been seeded without them.
    fixture: (i) => ({ ...fixtureTodo(i, today), tags: [] }),
    parentOf: (i) => projectIds[doorProjectOf(i, projectCount)],
    onTodo: (i, id) => {
      const k = doorProjectOf(i, projectCount);
      if (k < members.length) members[k]!.push(id);
    },
  });
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
  return result;
}

runSeeder('door seed', main);
