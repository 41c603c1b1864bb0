// `npm run bench [-- --quick]`: Cairn against its own limits, side by side in one run.
//   A  bare node:http answering a fixed small JSON            (scripts/bench/server-a.ts)
//   B  Express 5 + better-sqlite3 doing the plaintext work    (scripts/bench/server-b.ts)
//   C  Cairn itself (`node dist/server/main.js`), fresh DATA_DIR, real personal access token
// Each runs as its own process on 127.0.0.1; this process drives all three with autocannon,
// interleaving A/B/C per scenario. See docs/performance.md for what is measured and why.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { runLoad, type LoadRequest } from './load.js';
import { buildScenarios, CRUD_ACCOUNT, sizedAccount, type Scenario, type Target } from './scenarios.js';
import { renderReport, type RunRecord, type ScenarioOutcome } from './report.js';
import { fmtMB, fmtMs, fmtPct, fmtRate, ratio, rotate } from './stats.js';
import { utcToday } from './fixtures.js';
import type { AccountSpec, DoorSeed, MicroResult, SeedResult, SeededAccount } from './protocol.js';
import { runDoors, selectedDoors } from './doors.js';
import type { DoorsRecord } from './doors-report.js';
import { runApp, selectedApp } from './app.js';
import type { AppRecord, AppSeed } from './app-report.js';
import {
  ROOT,
  exited,
  forkTs,
  freePort,
  installExitHandlers,
  message,
  onCleanup,
  rssOf,
  resetPeakRss,
  spawnCairn,
  stop,
  stopAll,
  waitHealthy,
  type Child,
} from './procs.js';

const HELP = `npm run bench [-- options]

  --quick            development run, under 2 minutes (short runs; sizes 1000,10000; no tags group)
  --sizes LIST       account sizes for the decrypting scenarios (default 1000,10000,50000)
  --duration S       measured seconds per server per scenario (default 8; quick 1)
  --warmup S         warm-up seconds, excluded (default 2; quick 0.3)
  --connections N    connections for throughput scenarios (default 10)
  --only REGEX       run only scenarios whose id matches (ids: me, trpc-me, todo-get, ...; the doors:
                     dav-propfind, dav-multiget, dav-sync, dav-put, dav-tsdav-sync, mcp-find-today,
                     which --quick leaves out unless named; the web app in Chromium: app-load,
                     app-switch, app-quick, app-scroll, app-js, also left out by --quick unless named)
  --starts N         how many times to time start-to-healthy (default 3; quick 1)
  --log-level L      Cairn's LOG_LEVEL during the run (default info, as deployed)
  --cpu-prof         run Cairn under node --cpu-prof; profiles land in bench-results/
  --skip-build       use dist/ as it is (otherwise it is rebuilt when stale, as npm start does)
  --keep-data        keep the temporary DATA_DIR (its path is printed)
  --durability D     full (default, as deployed) or relaxed: CAIRN_DURABILITY for C and the same
                     synchronous setting for B; the write scenarios then run again under the other
                     setting (skip that with --no-compare)
  --no-compare       do not rerun the write scenarios under the other durability
  --out DIR          where the report goes (default bench-results/)
`;

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      sizes: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      starts: { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      'cpu-prof': { type: 'boolean', default: false },
      'skip-build': { type: 'boolean', default: false },
      'keep-data': { type: 'boolean', default: false },
      durability: { type: 'string', default: 'full' },
      'no-compare': { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(ROOT, 'bench-results') },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const quick = values.quick;
  const num = (v: string | undefined, dflt: number, name: string) => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const sizes = (values.sizes ?? (quick ? '1000,10000' : '1000,10000,50000')).split(',').map((x) => num(x.trim(), 0, 'sizes'));
  if (values.durability !== 'full' && values.durability !== 'relaxed') throw new Error('--durability must be full or relaxed');
  const custom = values.sizes !== undefined || values.duration !== undefined || values.warmup !== undefined || values.only !== undefined;
  return {
    mode: (custom ? 'custom' : quick ? 'quick' : 'full') as RunRecord['mode'],
    quick,
    sizes: [...new Set(sizes.map(Math.round))].sort((a, b) => a - b),
    durationS: num(values.duration, quick ? 1 : 8, 'duration'),
    warmupS: values.warmup === '0' ? 0 : num(values.warmup, quick ? 0.3 : 2, 'warmup'),
    connections: Math.round(num(values.connections, 10, 'connections')),
    only: values.only ? new RegExp(values.only) : null,
    onlySource: values.only,
    starts: Math.round(num(values.starts, quick ? 1 : 3, 'starts')),
    logLevel: values['log-level'],
    cpuProf: values['cpu-prof'],
    skipBuild: values['skip-build'],
    keepData: values['keep-data'],
    durability: values.durability as 'full' | 'relaxed',
    compare: !values['no-compare'],
    out: path.resolve(values.out),
    microMs: quick ? 30 : 100,
    microRounds: quick ? 5 : 9,
    crudTodos: 1000,
  };
}

type Opts = ReturnType<typeof options>;

const T0 = Date.now();
const log = (s: string) => process.stderr.write(`[${((Date.now() - T0) / 1000).toFixed(1).padStart(5)}s] ${s}\n`);

function machine(): RunRecord['machine'] {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown CPU',
    cores: os.availableParallelism?.() ?? cpus.length,
    memGB: Math.round(os.totalmem() / 1e9),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.versions.node,
  };
}

function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** `npm start` runs the compiled server, built by its prestart step; so does the bench. */
function build(): void {
  log('bench: building if stale (scripts/build-if-stale.mjs, as npm start does)…');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-stale.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    const out = `${r.stdout}${r.stderr}`.trim().split('\n').slice(0, 10).join('\n');
    if (!existsSync(path.join(ROOT, 'dist', 'server', 'main.js'))) throw new Error(`build failed:\n${out}`);
    log(`bench: WARNING the build reported errors; running the JS it emitted anyway:\n${out}`);
  }
}

/** The door scenarios' account (seed-doors.ts), into the same DATA_DIR after seed-cairn.ts. */
async function seedDoors(dataDir: string, today: string): Promise<DoorSeed> {
  const child = forkTs('seed-doors.ts', 'door seeder', {
    DATA_DIR: dataDir,
    CAIRN_SCRYPT_LOG_N: '14',
    CAIRN_RATE_LIMIT_FACTOR: '1000000',
    LOG_LEVEL: 'silent',
    BENCH_DOOR_TODOS: '10000',
    BENCH_DOOR_PROJECTS: '50',
    BENCH_TODAY: today,
  });
  const result = await message<DoorSeed>(child, 'seeded-doors', 30 * 60_000);
  await exited(child);
  return result;
}

/** The web app scenarios' account (seed-app.ts), into the same DATA_DIR after the others. */
async function seedApp(dataDir: string, today: string): Promise<AppSeed> {
  const child = forkTs('seed-app.ts', 'app seeder', { DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', CAIRN_RATE_LIMIT_FACTOR: '1000000', LOG_LEVEL: 'silent', BENCH_APP_TODOS: '10000', BENCH_TODAY: today });
  const result = await message<AppSeed>(child, 'seeded-app', 30 * 60_000);
  await exited(child);
  return result;
}

async function seedCairn(dataDir: string, specs: AccountSpec[], today: string): Promise<SeedResult> {
  const child = forkTs('seed-cairn.ts', 'seeder', {
    DATA_DIR: dataDir,
    CAIRN_SCRYPT_LOG_N: '14', // the bench's own users only; the server keeps its default
    CAIRN_RATE_LIMIT_FACTOR: '1000000',
    LOG_LEVEL: 'silent',
    BENCH_ACCOUNTS: JSON.stringify(specs),
    BENCH_TODAY: today,
  });
  const result = await message<SeedResult>(child, 'seeded', 30 * 60_000);
  await exited(child);
  return result;
}

type Running = { child: Child; url: string };

async function startPlain(file: string, name: string, env: Record<string, string>): Promise<Running & { accounts: SeededAccount[] }> {
  const child = forkTs(file, name, env);
  const ready = await message<{ port: number; accounts?: SeededAccount[] }>(child, 'ready', 10 * 60_000);
  return { child, url: `http://127.0.0.1:${ready.port}`, accounts: ready.accounts ?? [] };
}

async function startCairn(o: Opts, dataDir: string, port: number, profDir: string | null, durability = o.durability): Promise<Running & { startMs: number }> {
  const env = {
    CAIRN_DURABILITY: durability,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    CAIRN_RATE_LIMIT_FACTOR: '1000000',
    LOG_LEVEL: o.logLevel,
  };
  const t0 = process.hrtime.bigint();
  const child = spawnCairn(env, profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  const url = `http://127.0.0.1:${port}`;
  const startMs = await waitHealthy(`${url}/healthz`, t0, child);
  return { child, url, startMs };
}

type Probe = { ok: true } | { ok: false; status: 'unavailable' | 'refused' | 'error'; reason: string };

/** One real request to C: a route that does not exist yet answers 404 "No route matches". */
async function probe(url: string, req: LoadRequest): Promise<Probe> {
  const init: RequestInit = { method: req.method, headers: req.headers, signal: AbortSignal.timeout(120_000) };
  if (req.body) init.body = req.body();
  const res = await fetch(url + req.path(), init);
  const text = await res.text();
  if (res.ok) return { ok: true };
  let detail = '';
  try {
    const body = JSON.parse(text) as { detail?: string; error?: { json?: { data?: { problem?: { detail?: string; type?: string } } } }; type?: string };
    detail = body.detail ?? body.error?.json?.data?.problem?.detail ?? '';
    if (res.status === 404 && detail === 'No route matches this path.') return { ok: false, status: 'unavailable', reason: 'route answers 404' };
    const type = String(body.type ?? body.error?.json?.data?.problem?.type ?? '');
    // Spec §7: a decrypting operation may refuse an account that is too large; that is an answer.
    if (res.status === 422 && type.endsWith('/account_too_large')) return { ok: false, status: 'refused', reason: `422 account_too_large: ${detail}` };
    detail = `${type} ${detail}`.trim();
  } catch {
    detail = text.slice(0, 120);
  }
  return { ok: false, status: 'error', reason: `${res.status} ${detail}` };
}

async function main(): Promise<void> {
  const o = options();
  installExitHandlers();
  const started = Date.now();
  const date = new Date().toISOString();
  const today = utcToday();
  const nonce = randomBytes(3).toString('hex');
  log(`bench: ${o.mode} run; sizes ${o.sizes.join(', ')}; ${o.durationS} s per server per scenario after ${o.warmupS} s warm-up`);

  if (!o.skipBuild) build();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-c-'));
  if (o.keepData) log(`bench: DATA_DIR ${dataDir} (kept)`);
  else onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  const profDir = o.cpuProf ? path.join(o.out, `prof-${date.replace(/[:.]/g, '-')}`) : null;
  if (profDir) mkdirSync(profDir, { recursive: true });

  const specs: AccountSpec[] = [{ name: CRUD_ACCOUNT, todos: o.crudTodos, tags: 60 }, ...o.sizes.map((s) => ({ name: sizedAccount(s), todos: s, tags: 8 }))];
  log(`bench: seeding Cairn (${specs.reduce((n, s) => n + s.todos, 0)} to-dos) and B in parallel…`);
  const doorIds = selectedDoors(o.only, o.quick);
  let doorSeed: DoorSeed | null = null;
  const appIds = selectedApp(o.only, o.quick);
  let appSeed: AppSeed | null = null;
  const [seed, b] = await Promise.all([
    // One writer at a time on the database: the door account after the others.
    seedCairn(dataDir, specs, today).then(async (x) => {
      if (doorIds.length) {
        doorSeed = await seedDoors(dataDir, today);
        log(`bench: Cairn seeded the door account (${doorSeed.todos} to-dos in ${doorSeed.projectIds.length} projects) in ${doorSeed.seconds.toFixed(1)} s`);
      }
      if (appIds.length) {
        appSeed = await seedApp(dataDir, today);
        log(`bench: Cairn seeded the web app's account (${appSeed.todos} to-dos, ${appSeed.counts.anytime} open undated) in ${appSeed.seconds.toFixed(1)} s`);
      }
      return x;
    }),
    startPlain('server-b.ts', 'server B', { BENCH_ACCOUNTS: JSON.stringify(specs), BENCH_TODAY: today, BENCH_DURABILITY: o.durability }),
  ]);
  log(`bench: Cairn seeded ${seed.todosSeeded} to-dos in ${seed.seconds.toFixed(1)} s${seed.available.todos ? '' : ' (no to-do routes in this build: to-do scenarios are not available yet)'}`);
  for (const n of seed.notes) log(`bench: seeding note: ${n}`);
  const a = await startPlain('server-a.ts', 'server A', {});

  const port = await freePort();
  const startMs: number[] = [];
  let c!: Running;
  for (let i = 0; i < o.starts; i++) {
    const run = await startCairn(o, dataDir, port, profDir && i === o.starts - 1 ? profDir : null);
    startMs.push(run.startMs);
    log(`bench: Cairn start to healthy: ${fmtMs(run.startMs)} ms`);
    if (i < o.starts - 1) await stop(run.child);
    else c = run;
  }
  const idle = rssOf(c.child.proc.pid);

  const accountsC = new Map(seed.accounts.map((x) => [x.name, x]));
  const accountsB = new Map(b.accounts.map((x) => [x.name, x]));
  const urls: Record<Target, string> = { A: a.url, B: b.url, C: c.url };
  // --quick keeps to the issue's list (the tags group runs in full runs, or when named by --only).
  const scenarios = buildScenarios(o.sizes).filter((s) => (o.only ? o.only.test(s.id) : !(o.quick && s.group === 'tags')));
  const outcomes: ScenarioOutcome[] = [];

  const ctx = { today, nonce };
  // The run's peak: VmHWM is reset per scenario (C's peak per scenario), so the peaks seen before
  // each reset and at the end are folded together.
  const peak = { pid: c.child.proc.pid, max: 0 };
  const run = (list: Scenario[], on: Record<Target, string>, suffix = '', track: typeof peak | null = null) => runScenarios(o, list, on, accountsB, accountsC, seed, ctx, outcomes, suffix, track);
  await run(scenarios, urls, '', peak);
  let doors: DoorsRecord | undefined;
  // Each phase's own peak (VmHWM reset before it): the doors (MCP's scenario does not reset it
  // per scenario) and the web app.
  const phases: { doors?: number | null; app?: number | null } = {};
  if (doorSeed) {
    resetPeakBefore(peak); // fold the peak so far; the door scenarios reset it per scenario
    doors = await runDoors(doorIds, { url: c.url, pid: c.child.proc.pid }, doorSeed, {
      warmupS: o.warmupS,
      durationS: o.durationS,
      syncRuns: o.quick ? 1 : 3,
      keepData: o.keepData,
      only: o.only,
      today,
      log,
    });
    for (const d of doors.outcomes) peak.max = Math.max(peak.max, d.peakRssCairn ?? 0);
    phases.doors = Math.max(rssOf(peak.pid)?.peak ?? 0, ...doors.outcomes.map((d) => d.peakRssCairn ?? 0)) || null;
  }
  let app: AppRecord | undefined;
  if (appSeed) {
    resetPeakBefore(peak);
    log('bench: app: the web app in headless Chromium…');
    app = await runApp(appIds, c.url, appSeed, { samples: o.quick ? 3 : 5, log });
    phases.app = rssOf(peak.pid)?.peak ?? null;
  }
  const after = rssOf(c.child.proc.pid);
  if (after) after.peak = Math.max(after.peak, peak.max);
  await Promise.all([stop(c.child), stop(b.child)]);

  // Issue 10.3: what durability costs. The write scenarios again, B and C both under the other
  // setting (B reseeded with the CRUD account only; C on the same data).
  const writes = scenarios.filter((x) => x.kind === 'write' && x.group === 'core');
  if (o.compare && writes.length) {
    const other = o.durability === 'full' ? 'relaxed' : 'full';
    log(`bench: the write scenarios again with durability ${other} (B and C)…`);
    const b2 = await startPlain('server-b.ts', 'server B', { BENCH_ACCOUNTS: JSON.stringify(specs.filter((x) => x.name === CRUD_ACCOUNT)), BENCH_TODAY: today, BENCH_DURABILITY: other });
    const c2 = await startCairn(o, dataDir, port, null, other);
    const b2Accounts = new Map(b2.accounts.map((x) => [x.name, x]));
    for (const [name, acc] of b2Accounts) accountsB.set(name, acc);
    await run(writes, { A: a.url, B: b2.url, C: c2.url }, other);
    await Promise.all([stop(c2.child), stop(b2.child)]);
  }
  await stop(a.child);

  let micro: MicroResult | null = null;
  const crud = accountsC.get(CRUD_ACCOUNT)!;
  if (!o.only || o.only.test('micro')) {
    log('bench: in-process cost split of one authenticated read…');
    const m = forkTs('micro.ts', 'micro', {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      CAIRN_RATE_LIMIT_FACTOR: '1000000',
      BENCH_TOKEN: crud.token!,
      BENCH_TODO_ID: crud.todoIds[0] ?? '',
      BENCH_TAG_ID: crud.tagIds[0] ?? '',
      BENCH_ACCOUNT_SIZE: String(o.crudTodos),
      BENCH_MICRO_MS: String(o.microMs),
      BENCH_MICRO_ROUNDS: String(o.microRounds),
    });
    micro = await message<MicroResult>(m, 'micro', 5 * 60_000);
    await exited(m);
  }

  let dbBytes: number | null = null;
  try {
    dbBytes = statSync(path.join(dataDir, 'cairn.db')).size;
  } catch {
    /* no db */
  }
  const record: RunRecord = {
    date,
    mode: o.mode,
    machine: machine(),
    commit: commit(),
    settings: { durability: o.durability, connections: o.connections, warmupS: o.warmupS, durationS: o.durationS, sizes: o.sizes, crudTodos: o.crudTodos, logLevel: o.logLevel, ...(o.onlySource ? { only: o.onlySource } : {}) },
    seed: { todos: seed.todosSeeded, seconds: seed.seconds, notes: seed.notes, available: seed.available, dbBytes },
    startMs,
    rss: { idle: idle?.rss ?? null, after: after?.rss ?? null, peak: after?.peak ?? null, largest: Math.max(...o.sizes), ...phases },
    scenarios: outcomes,
    micro,
    ...(doors ? { doors } : {}),
    ...(app ? { app } : {}),
    elapsedS: (Date.now() - started) / 1000,
  };
  const md = renderReport(record);
  mkdirSync(o.out, { recursive: true });
  const stamp = date.replace(/[:.]/g, '-');
  const mdFile = path.join(o.out, `bench-${stamp}.md`);
  writeFileSync(mdFile, md + '\n');
  writeFileSync(path.join(o.out, `bench-${stamp}.json`), JSON.stringify(record, null, 2) + '\n');
  process.stdout.write(`\n${md}\n`);
  log(`bench: report written to ${path.relative(ROOT, mdFile)}${profDir ? `; CPU profiles in ${path.relative(ROOT, profDir)}` : ''}`);
}

let k = 0;

/** Runs scenarios against A, B and C (interleaved, rotated), appending to `outcomes`. */
async function runScenarios(
  o: Opts,
  scenarios: Scenario[],
  urls: Record<Target, string>,
  accountsB: Map<string, SeededAccount>,
  accountsC: Map<string, SeededAccount>,
  seed: SeedResult,
  ctx: { today: string; nonce: string },
  outcomes: ScenarioOutcome[],
  suffix: string,
  peak: { pid: number | undefined; max: number } | null,
): Promise<void> {
  for (const s of scenarios) {
    const conns = s.connections === 'single' ? 1 : o.connections;
    const outcome: ScenarioOutcome = { id: suffix ? `${s.id}@${suffix}` : s.id, label: suffix ? `${s.label} (durability ${suffix})` : s.label, kind: s.kind, group: s.group, connections: conns, status: 'ok', results: {} };
    if (s.size !== undefined) outcome.size = s.size;
    if (s.op !== undefined) outcome.op = s.op;
    outcomes.push(outcome);
    const ac = accountsC.get(s.account)!;
    const ab = accountsB.get(s.account)!;
    const missing = missingData(s, ac, seed);
    if (missing) {
      outcome.status = 'unavailable';
      outcome.reason = missing;
      log(`bench: ${s.label}: not available yet (${missing})`);
      continue;
    }
    const pc = await probe(urls.C, s.build(ac, 'C', ctx));
    if (!pc.ok) {
      outcome.status = pc.status;
      outcome.reason = pc.reason;
      log(`bench: ${s.label}: ${pc.status === 'unavailable' ? 'not available yet' : pc.status === 'refused' ? 'refused by Cairn' : 'ERROR'} (${pc.reason})`);
      continue;
    }
    const pb = await probe(urls.B, s.build(ab, 'B', ctx));
    if (!pb.ok) throw new Error(`server B cannot serve ${s.label}: ${pb.reason}`);

    for (const t of rotate(['A', 'B', 'C'] as const, k++)) {
      // A gets C's exact request (token, ids, body) and answers its fixed JSON.
      const req = () => s.build(t === 'B' ? ab : ac, t === 'B' ? 'B' : 'C', ctx);
      const tracked = t === 'C' && peak !== null && resetPeakBefore(peak);
      if (o.warmupS > 0) await runLoad(urls[t], req(), { connections: conns, seconds: o.warmupS });
      outcome.results[t] = await runLoad(urls[t], req(), { connections: conns, seconds: o.durationS });
      if (tracked) {
        const now = rssOf(peak.pid);
        outcome.peakRssC = now?.peak ?? null;
        if (now) peak.max = Math.max(peak.max, now.peak);
      }
    }
    const r = outcome.results;
    log(
      `bench: ${s.label.padEnd(40)} A ${fmtRate(r.A!.rps).padStart(6)}/s  B ${fmtRate(r.B!.rps).padStart(6)}/s p50 ${fmtMs(r.B!.lat.p50)}  ` +
        `C ${fmtRate(r.C!.rps).padStart(6)}/s p50 ${fmtMs(r.C!.lat.p50)} p99 ${fmtMs(r.C!.lat.p99)}  C/B ${fmtPct(ratio(r.C!.rps, r.B!.rps))}` +
        (outcome.peakRssC ? `  C peak ${fmtMB(outcome.peakRssC)}` : '') +
        (r.C!.non2xx || r.C!.errors ? `  ⚠ C non-2xx ${JSON.stringify(r.C!.statuses)} errors ${r.C!.errors}` : ''),
    );
  }
}

/** Folds C's peak so far into `peak.max`, then resets it; false where it cannot be reset. */
function resetPeakBefore(peak: { pid: number | undefined; max: number }): boolean {
  const now = rssOf(peak.pid);
  if (now) peak.max = Math.max(peak.max, now.peak);
  return resetPeakRss(peak.pid);
}

/** Why a scenario cannot run against this build, judged from what the seeder could create. */
function missingData(s: Scenario, c: SeededAccount, seed: SeedResult): string | null {
  if (s.needs === 'todos' && !seed.available.todos) return 'no to-do routes in this build';
  if (s.needs === 'todos' && c.todoIds.length === 0) return 'account has no to-dos';
  if (s.needs === 'tags' && c.tagIds.length === 0) return 'no tags seeded';
  if (s.needs === 'filter' && !c.filterId) return seed.available.filters ? 'no filter seeded' : 'no filter routes in this build';
  return null;
}

main()
  .then(async () => {
    await stopAll();
    process.exit(0);
  })
  .catch(async (e: unknown) => {
    log(`bench: FAILED: ${e instanceof Error ? e.message : String(e)}`);
    await stopAll();
    process.exit(1);
  });
