// Issue 33 item 4: what the metrics hook costs a request (server/handler.ts calls routeLabel and
// observeRequest once per finished request). A micro-benchmark, not a test (no timed assertions in
// the suite): `npx tsx test/metrics/hook-cost.bench.ts`. Reported in docs/operations.md "Metrics".
import { loadConfig } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { manualClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Deps } from '../../routers/deps.js';
import { metricsFor, routeLabel } from '../../server/metrics.js';

const dir = mkdtempSync(path.join(tmpdir(), 'cairn-metrics-bench-'));
const config = { ...loadConfig({ DATA_DIR: dir, CAIRN_METRICS: '1', LOG_LEVEL: 'silent' }) };
const db = openDb(config.dbFile, { durability: 'relaxed' });
const deps = { db, config, keys: deriveServerKeys(randomBytes(32)), clock: manualClock(), log: createLogger('silent') } as Deps;
const m = metricsFor(deps)!;

// A mix like real traffic: procedures (matched by name), a tRPC batch, fixed routes, unmatched paths.
const REQS: [string, string | undefined, string, number][] = [
  ['/v1/todos/td_01HZX', 'todos.get', 'GET', 200],
  ['/v1/todos?limit=50', 'todos.list', 'GET', 200],
  ['/v1/todos', 'todos.create', 'POST', 201],
  ['/trpc/todos.get,todos.list?batch=1', 'todos.get,todos.list', 'GET', 200],
  ['/healthz', undefined, 'GET', 200],
  ['/v1/attachments/at_01HZX/file', undefined, 'GET', 200],
  ['/v1/nothing/here', undefined, 'GET', 404],
  ['/dav/usr_1/cal/x.ics', undefined, 'PUT', 201],
];

function run(n: number, hook: boolean): number {
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < n; i++) {
    const r = REQS[i & 7]!;
    const ms = (i % 97) / 10;
    if (hook) m.observeRequest(routeLabel(r[0], r[1]), r[2], r[3], ms);
    else sink += ms + r[3];
  }
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink < 0) console.log(sink);
  return ns / n;
}

const N = 2_000_000;
run(200_000, true); // warm up the children cache and the JIT
run(200_000, false);
const samples: number[] = [];
for (let k = 0; k < 5; k++) samples.push(run(N, true) - run(N, false));
samples.sort((a, b) => a - b);
console.log(`metrics hook (routeLabel + observeRequest): median ${samples[2]!.toFixed(0)} ns a request (min ${samples[0]!.toFixed(0)}, max ${samples[4]!.toFixed(0)}), ${N} calls x 5, node ${process.version}`);
const t = process.hrtime.bigint();
await m.registry.metrics();
console.log(`one scrape (default metrics + Cairn's, ${REQS.length} routes): ${(Number(process.hrtime.bigint() - t) / 1e6).toFixed(2)} ms`);
closeDb(db);
rmSync(dir, { recursive: true, force: true });
