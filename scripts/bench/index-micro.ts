// `npx tsx scripts/bench/index-micro.ts [sizes]`: the sealed to-do index's own costs (issue 14),
// in-process (no HTTP): per account size, the cost one write adds for index maintenance
// (re-sealing one attribute chunk and one search-text chunk), and the model time of each view,
// a filter page and a search page. Accounts are seeded with the bench fixtures through the to-do
// model, as scripts/bench/seed-cairn.ts does. Prints a Markdown table (medians of repeated runs).
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
import { createTodo, finishTodo, openTodo, updateTodo, type TodoRow } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import { indexTodo } from '../../routers/todo-index/index.js';
import { eq } from 'drizzle-orm';
import { todos } from '../../db/schema/index.js';
import { anytimeView, logbookView, overviewView, todayView, upcomingView } from '../../routers/views/model.js';
import { createFilter, filterTodos } from '../../routers/filters/model.js';
import { search } from '../../routers/search/model.js';
import { FILTER_CRITERIA, SEARCH_TERM, fixtureTodo, utcToday } from './fixtures.js';

const sizes = (process.argv[2] ?? '1000,10000,50000').split(',').map(Number);
const today = utcToday();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
/** Median wall-clock and median CPU time (this process, user + system) of `runs` calls, in ms. */
type Timing = { wall: number; cpu: number };
function time(fn: () => unknown, runs: number): Timing {
  fn(); // warm
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
  for (let start = 0; start < size; start += 500) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(size, start + 500); i++) {
        const f = fixtureTodo(i, today);
        const t = createTodo(deps, p, CreateTodoInput.parse({ title: f.title, ...(f.notes !== null ? { notes: f.notes } : {}), ...(f.whenDate !== null ? { whenDate: f.whenDate } : {}), ...(f.someday ? { someday: true } : {}), ...(f.priority !== null ? { priority: f.priority } : {}), ...(f.tags.length ? { tags: f.tags } : {}) }));
        if (f.status === 'completed') finishTodo(deps, p, t.id, 'completed', today);
        ids.push(t.id);
      }
    })();
  }
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
  const runs = size >= 50_000 ? 9 : 21;
  const out = {
    size,
    indexWrite,
    fullWrite,
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
for (const size of sizes) {
  const r = await measure(size);
  console.log(`| ${r.size} | ${f(r.indexWrite)} | ${f(r.fullWrite)} | ${f(r.today)} | ${f(r.upcoming)} | ${f(r.overview)} | ${f(r.anytime)} | ${f(r.logbook)} | ${f(r.filter)} | ${f(r.search)} | ${Math.round(r.chunkBytes / 1024)} KiB | ${Math.round(r.textChunkBytes / 1024)} KiB |`);
}
