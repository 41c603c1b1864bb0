// `npx tsx scripts/bench/index-micro.ts [sizes]`: the sealed to-do index's own costs (issue 14),
// in-process (no HTTP): per account size, the cost one write adds for index maintenance
// (re-sealing one attribute chunk and one search-text chunk), and the model time of each view,
// a filter page and a search page. Accounts are seeded with the bench fixtures through the to-do
// model, as scripts/bench/seed-cairn.ts does (seed-model.ts). Prints a Markdown table (medians of repeated runs).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { createTodo, openTodo, updateTodo, type TodoRow } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import { TIER, indexTodo } from '../../routers/todo-index/index.js';
import { eq } from 'drizzle-orm';
import { todos } from '../../db/schema/index.js';
import { anytimeView, logbookView, overviewView, todayView, upcomingView } from '../../routers/views/model.js';
import { createFilter, filterTodos } from '../../routers/filters/model.js';
import { search } from '../../routers/search/model.js';
import { FILTER_CRITERIA, SEARCH_TERM, fixtureTodo, utcToday } from './fixtures.js';
import { seedTodos } from './seed-model.js';
import { clock, quantile, timeCalls, type Timing } from './stats.js';

const sizes = (process.argv[2] ?? '1000,10000,50000').split(',').map(Number);
// Experiment only: INDEX_MICRO_MID_MAX / INDEX_MICRO_TIER_BYTES set the index's third tier
// (routers/todo-index/storage.ts TIER; a huge TIER_BYTES turns it off).
if (process.env.INDEX_MICRO_MID_MAX) TIER.midMax = Number(process.env.INDEX_MICRO_MID_MAX);
if (process.env.INDEX_MICRO_TIER_BYTES) TIER.fromBytes = Number(process.env.INDEX_MICRO_TIER_BYTES);
const today = utcToday();

/** The middle value (the upper of the middle two for an even count), as this script has always reported. */
const median = (xs: number[]) => quantile(xs, 0.5);
/** Median wall-clock and median CPU time (this process, user + system) of `runs` calls after a warm-up, in ms. */
function time(fn: () => unknown, runs: number): Timing {
  const { wall, cpu } = timeCalls(fn, runs);
  return { wall: median(wall), cpu: median(cpu) };
}

async function measure(size: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-index-micro-'));
  const config = loadConfig({ DATA_DIR: dir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent' });
  const deps: Deps = { db: openDb(config.dbFile, { durability: 'full' }), config, keys: deriveServerKeys(randomBytes(32)), clock: systemClock, log: createLogger('silent') };
  // Experiment only (not the server's setting): INDEX_MICRO_CACHE_MB sets SQLite's page cache of
  // this connection (default 2 MB), to see how much of the 50k cost is pages not cached.
  if (process.env.INDEX_MICRO_CACHE_MB) deps.db.$client.pragma(`cache_size = -${Number(process.env.INDEX_MICRO_CACHE_MB) * 1024}`);
  const caller = (token?: string) => createCallerFactory(appRouter)(createContextInner({ deps, requestId: 'micro', authorization: token ? `Bearer ${token}` : undefined }));
  const reg = await caller().auth.register({ email: `micro-${size}@bench.invalid`, password: 'micro bench password' });
  const p = await authenticate(deps, `Bearer ${reg.token}`);
  const sqlite = deps.db.$client;
  const ids: string[] = [];
  seedTodos(deps, p, { count: size, today, fixture: (i) => fixtureTodo(i, today), onTodo: (_i, id) => ids.push(id) });
  const filter = createFilter(deps, p, { name: 'micro', criteria: FILTER_CRITERIA });
  // Per-write index cost: indexTodo alone (both layers re-sealed), on rows spread over the account.
  const rows: TodoRow[] = deps.db.select().from(todos).where(eq(todos.userId, p.userId)).limit(200).all();
  const sample = rows.map((r) => ({ row: r, s: openTodo(p.dek, r) }));
  let k = 0;
  const indexWrite = time(() => {
    const x = sample[k++ % sample.length]!;
    sqlite.transaction(() => indexTodo(sqlite, p, x.row, x.s))();
  }, 200);
  let n = 0;
  const fullWrite = time(() => {
    sqlite.transaction(() => updateTodo(deps, p, { id: ids[n++ % ids.length]!, title: `renamed ${n}` }))();
  }, 200);
  // Per-write cost of a create and of a patch through the to-do model, each in its own
  // transaction (issue 29 item 4). Each round is the MEAN over its writes, so the folds (one base
  // re-seal in many writes) are in it, not hidden by a median; the figure is the median of the
  // rounds (creates and patches alternate, against a shared machine's drift). Commits without
  // fsync (`synchronous = NORMAL`, as `relaxed`): the fsync does not grow with the account and,
  // on a shared disk, drowns the rest.
  const ROUNDS = 7;
  const PER_ROUND = Number(process.env.INDEX_MICRO_WRITES ?? 400);
  sqlite.pragma('synchronous = NORMAL');
  const roundMean = (fn: (i: number) => void, from: number): Timing => {
    const t = clock(() => {
      for (let i = from; i < from + PER_ROUND; i++) fn(i);
    });
    return { wall: t.wall / PER_ROUND, cpu: t.cpu / PER_ROUND };
  };
  const doCreate = (i: number) => {
    const f = fixtureTodo(size + i, today);
    sqlite.transaction(() => createTodo(deps, p, CreateTodoInput.parse({ title: f.title, ...(f.notes !== null ? { notes: f.notes } : {}) })))();
  };
  // Patches on to-dos spread over the account (ids are random, so over every bucket).
  const stride = Math.max(1, Math.floor(ids.length / (ROUNDS * PER_ROUND)));
  const doPatch = (i: number) => {
    sqlite.transaction(() => updateTodo(deps, p, { id: ids[(i * stride) % ids.length]!, title: `patched ${i}` }))();
  };
  roundMean(doCreate, 1_000_000); // warm
  roundMean(doPatch, 1_000_000);
  const creates: Timing[] = [];
  const patches: Timing[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    creates.push(roundMean(doCreate, r * PER_ROUND));
    patches.push(roundMean(doPatch, r * PER_ROUND));
  }
  const mid = (xs: Timing[]): Timing => ({ wall: median(xs.map((x) => x.wall)), cpu: median(xs.map((x) => x.cpu)) });
  const create = mid(creates);
  const patch = mid(patches);
  sqlite.pragma('synchronous = FULL');
  const runs = size >= 50_000 ? 9 : 21;
  const out = {
    size,
    indexWrite,
    fullWrite,
    create,
    patch,
    today: time(() => todayView(deps, p, { today }), runs),
    upcoming: time(() => upcomingView(deps, p, { today }), runs),
    overview: time(() => overviewView(deps, p, { today }), runs),
    anytime: time(() => anytimeView(deps, p, { today }), runs),
    logbook: time(() => logbookView(deps, p, { today }), runs),
    filter: time(() => filterTodos(deps, p, { id: filter.id }), runs),
    search: time(() => search(deps, p, { q: SEARCH_TERM }), runs),
    chunkBytes: (sqlite.prepare("SELECT avg(length(sealed)) AS a FROM todo_index_chunks WHERE user_id = ? AND id NOT LIKE 't%'").get(p.userId) as { a: number }).a,
    textChunkBytes: (sqlite.prepare("SELECT avg(length(sealed)) AS a FROM todo_index_chunks WHERE user_id = ? AND id LIKE 't%'").get(p.userId) as { a: number }).a,
  };
  closeDb(deps.db);
  rmSync(dir, { recursive: true, force: true });
  return out;
}

// Each cell: median wall-clock / median CPU time of this process. On a shared machine the wall
// clock includes waiting for a core; the CPU time is the work itself.
const f = (x: Timing) => `${x.wall.toFixed(2)} / ${x.cpu.toFixed(2)} ms`;
console.log('Each cell: median wall-clock / median CPU time (ms).');
console.log(`load average at start: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| to-dos | index upkeep per write | PATCH model incl. index | today | upcoming | overview | anytime p1 | logbook p1 | filter p1 | search p1 | attr chunk | text chunk |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
const results: Awaited<ReturnType<typeof measure>>[] = [];
for (const size of sizes) {
  const r = await measure(size);
  results.push(r);
  console.log(`| ${r.size} | ${f(r.indexWrite)} | ${f(r.fullWrite)} | ${f(r.today)} | ${f(r.upcoming)} | ${f(r.overview)} | ${f(r.anytime)} | ${f(r.logbook)} | ${f(r.filter)} | ${f(r.search)} | ${Math.round(r.chunkBytes / 1024)} KiB | ${Math.round(r.textChunkBytes / 1024)} KiB |`);
}
// Issue 29 item 4: a create or patch at 50,000 to-dos costs at most 1.25× the cost at 10,000.
console.log('');
console.log('Per write (own transaction, no fsync), median of 7 rounds of the mean over the round (folds included): wall / CPU (ms).');
console.log('| to-dos | create | patch |');
console.log('|---|---|---|');
for (const r of results) console.log(`| ${r.size} | ${f(r.create)} | ${f(r.patch)} |`);
const small = results.find((r) => r.size === 10_000);
const large = results.find((r) => r.size === 50_000);
if (small && large) {
  const ratio = (a: Timing, b: Timing) => `${(a.cpu / b.cpu).toFixed(2)}× CPU, ${(a.wall / b.wall).toFixed(2)}× wall`;
  console.log(`50k/10k: create ${ratio(large.create, small.create)}; patch ${ratio(large.patch, small.patch)}`);
}
