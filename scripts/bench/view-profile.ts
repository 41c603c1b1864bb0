// `npx tsx scripts/bench/view-profile.ts DIR [size] [what] [runs]`: the whole-account reads at one
// account size, in-process, for profiling (`node --cpu-prof --import tsx …`). The first call seeds
// an account of `size` to-dos (bench fixtures, through the to-do model) into DIR and keeps it
// with its token, so later calls measure the same data. `what`: today, upcoming, search, filter,
// anytime, logbook or all. Prints the median and p10/p90 wall and CPU per call.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/config.js';
import { openDb } from '../../db/client.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { createTodo, finishTodo } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import { logbookView, anytimeView, todayView, upcomingView } from '../../routers/views/model.js';
import { createFilter, filterTodos } from '../../routers/filters/model.js';
import { search } from '../../routers/search/model.js';
import { FILTER_CRITERIA, SEARCH_TERM, fixtureTodo, utcToday } from './fixtures.js';

const [dir = '/tmp/cairn-view-profile', sizeArg = '50000', what = 'all', runsArg = '15'] = process.argv.slice(2);
const size = Number(sizeArg);
const runs = Number(runsArg);
const today = utcToday();
mkdirSync(dir, { recursive: true });
const keyFile = path.join(dir, 'bench.json');
const seeded = existsSync(keyFile);
const saved = seeded ? (JSON.parse(readFileSync(keyFile, 'utf8')) as { master: string; token: string; filter: string }) : undefined;
const master = saved ? Buffer.from(saved.master, 'hex') : (await import('node:crypto')).randomBytes(32);
const config = loadConfig({ DATA_DIR: dir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent' });
const deps: Deps = { db: openDb(config.dbFile, { durability: 'full' }), config, keys: deriveServerKeys(master), clock: systemClock, log: createLogger('silent') };
let token = saved?.token;
let filterId = saved?.filter;
if (!token) {
  const caller = createCallerFactory(appRouter)(createContextInner({ deps, requestId: 'profile' }));
  token = (await caller.auth.register({ email: `profile-${size}@bench.invalid`, password: 'profile bench password' })).token;
  const p = await authenticate(deps, `Bearer ${token}`);
  for (let start = 0; start < size; start += 500) {
    deps.db.$client.transaction(() => {
      for (let i = start; i < Math.min(size, start + 500); i++) {
        const f = fixtureTodo(i, today);
        const t = createTodo(deps, p, CreateTodoInput.parse({ title: f.title, ...(f.notes !== null ? { notes: f.notes } : {}), ...(f.whenDate !== null ? { whenDate: f.whenDate } : {}), ...(f.someday ? { someday: true } : {}), ...(f.priority !== null ? { priority: f.priority } : {}), ...(f.tags.length ? { tags: f.tags } : {}) }));
        if (f.status === 'completed') finishTodo(deps, p, t.id, 'completed', today);
      }
    })();
  }
  filterId = createFilter(deps, p, { name: 'profile', criteria: FILTER_CRITERIA }).id;
  writeFileSync(keyFile, JSON.stringify({ master: master.toString('hex'), token, filter: filterId }));
}
const p = await authenticate(deps, `Bearer ${token}`);
const ops: Record<string, () => unknown> = {
  today: () => todayView(deps, p, { today }),
  upcoming: () => upcomingView(deps, p, { today }),
  anytime: () => anytimeView(deps, p, { today }),
  logbook: () => logbookView(deps, p, { today }),
  filter: () => filterTodos(deps, p, { id: filterId!, today, limit: 50 }),
  search: () => search(deps, p, { q: SEARCH_TERM, limit: 50 }),
};
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
for (const [name, fn] of Object.entries(ops)) {
  if (what !== 'all' && !what.split(',').includes(name)) continue;
  fn();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = process.hrtime.bigint();
    fn();
    wall.push(Number(process.hrtime.bigint() - t) / 1e6);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1e3);
  }
  console.log(`${name.padEnd(9)} wall p50 ${pct(wall, 0.5).toFixed(1)} ms (p10 ${pct(wall, 0.1).toFixed(1)}, p90 ${pct(wall, 0.9).toFixed(1)}); cpu p50 ${pct(cpu, 0.5).toFixed(1)} ms`);
}
deps.db.$client.close();
