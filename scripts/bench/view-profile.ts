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
import { logbookView, anytimeView, todayView, upcomingView } from '../../routers/views/model.js';
import { createFilter, filterTodos } from '../../routers/filters/model.js';
import { search } from '../../routers/search/model.js';
import { FILTER_CRITERIA, SEARCH_TERM, fixtureTodo, utcToday } from './fixtures.js';
import { seedTodos } from './seed-model.js';
import { quantile, timeCalls } from './stats.js';

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
  seedTodos(deps, p, { count: size, today, fixture: (i) => fixtureTodo(i, today) });
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
for (const [name, fn] of Object.entries(ops)) {
  if (what !== 'all' && !what.split(',').includes(name)) continue;
  const { wall, cpu } = timeCalls(fn, runs);
  console.log(`${name.padEnd(9)} wall p50 ${quantile(wall, 0.5).toFixed(1)} ms (p10 ${quantile(wall, 0.1).toFixed(1)}, p90 ${quantile(wall, 0.9).toFixed(1)}); cpu p50 ${quantile(cpu, 0.5).toFixed(1)} ms`);
}
deps.db.$client.close();
