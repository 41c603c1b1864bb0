// The bench's markdown report: the A/B/C table, scaling of the decrypting operations, resources,
// the cost split of one authenticated read, and each target's verdict.
import type { LoadResult } from './load.js';
import type { MicroResult } from './protocol.js';
import { renderDoors, type DoorsRecord } from './doors-report.js';
import { renderApp, type AppRecord } from './app-report.js';
import type { Kind, Target } from './scenarios.js';
import { fmtFactor, fmtMB, fmtMs, fmtPct, fmtRate, markdownTable, median, ratio, verdict } from './stats.js';

export type ScenarioOutcome = {
  id: string;
  label: string;
  kind: Kind;
  group: 'core' | 'tags' | 'sized';
  size?: number;
  op?: string;
  connections: number;
  status: 'ok' | 'unavailable' | 'refused' | 'error';
  reason?: string;
  results: Partial<Record<Target, LoadResult>>;
  /** C's peak RSS (VmHWM, bytes) during this scenario's warm-up and measured run (null where it cannot be reset). */
  peakRssC?: number | null;
};

export type RunRecord = {
  date: string;
  mode: 'quick' | 'full' | 'custom';
  machine: { cpu: string; cores: number; memGB: number; os: string; node: string };
  commit: string;
  settings: { durability?: 'full' | 'relaxed'; connections: number; warmupS: number; durationS: number; sizes: number[]; crudTodos: number; logLevel: string; only?: string };
  seed: { todos: number; seconds: number; notes: string[]; available: Record<string, boolean>; dbBytes: number | null };
  startMs: number[];
  /** `doors`/`app`: the peak of each phase alone (VmHWM reset before it), when it ran. */
  rss: { idle: number | null; after: number | null; peak: number | null; largest: number; doors?: number | null; app?: number | null };
  scenarios: ScenarioOutcome[];
  micro: MicroResult | null;
  /** The CalDAV and MCP door scenarios (scripts/bench/doors.ts), when any ran. */
  doors?: DoorsRecord;
  /** The web app in Chromium (scripts/bench/app.ts), when any of its scenarios ran. */
  app?: AppRecord;
  elapsedS: number;
};

// Issue 29 item 3 (raising issue 12's 0.75 and 0.6): over /v1 and /trpc, the get at C/B ≥ 0.85,
// the list of 50 at ≥ 0.8, creates and patches at ≥ 0.9; the run's peak RSS ≤ 180 MB (issue 12:
// 200 MB). Item 4: today and upcoming at 50k ≤ 30 ms p50, search at 50k ≤ 60 ms. Issue 6: every
// decrypting operation ≤ 25 ms at 10k and its 50k figure ≤ 5.5× its 10k one.
const GET_TARGET = 0.85;
const LIST_TARGET = 0.8;
const WRITE_TARGET = 0.9;
const P50_AT_10K_MS = 25;
const SCALE_50K_VS_10K = 5.5;
const P50_AT_50K_MS: Record<string, number> = { 'GET /v1/views/today': 30, 'GET /v1/views/upcoming': 30, 'GET /v1/search?q=aurora': 60 };
const RSS_LIMIT = 180e6;
const START_LIMIT_MS = 1_000;

/** The target a scenario is held to (C/B of requests/s), if any. */
function targetOf(o: ScenarioOutcome): number | null {
  if (o.group !== 'core') return null;
  if (['todo-get', 'trpc-todo-get'].includes(o.id)) return GET_TARGET;
  if (['todo-list', 'trpc-todo-list'].includes(o.id)) return LIST_TARGET;
  if (['todo-create', 'todo-update', 'trpc-todo-create', 'trpc-todo-update'].includes(o.id)) return WRITE_TARGET;
  return null;
}

function cellsFor(r: LoadResult | undefined): [string, string, string] {
  if (!r) return ['–', '–', '–'];
  const flag = r.non2xx || r.errors ? ` ⚠${r.non2xx + r.errors}` : '';
  return [fmtRate(r.rps) + flag, fmtMs(r.lat.p50), fmtMs(r.lat.p99)];
}

export function mainTable(outcomes: ScenarioOutcome[]): string {
  const rows = outcomes
    .filter((o) => o.status === 'ok')
    .map((o) => {
      const a = o.results.A;
      const b = o.results.B;
      const c = o.results.C;
      const cb = ratio(c?.rps, b?.rps);
      const t = targetOf(o);
      const tcell = t == null ? '' : `≥ ${fmtPct(t)}: ${verdict(cb, t, 'atLeast')}`;
      return [o.label, String(o.connections), ...cellsFor(a), ...cellsFor(b), ...cellsFor(c), fmtPct(cb), fmtPct(ratio(c?.rps, a?.rps)), tcell];
    });
  return markdownTable(
    ['scenario', 'conns', 'A req/s', 'A p50 ms', 'A p99 ms', 'B req/s', 'B p50 ms', 'B p99 ms', 'C req/s', 'C p50 ms', 'C p99 ms', 'C/B', 'C/A', 'target C/B'],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
  );
}

/** Per decrypting operation: C's p50 at each size, 50k/1k (largest/smallest) and 50k/10k. */
export function scalingTable(outcomes: ScenarioOutcome[], sizes: number[]): string {
  const sized = outcomes.filter((o) => o.group === 'sized' && o.status === 'ok');
  const ops = [...new Set(sized.map((o) => o.op!))];
  const sorted = [...sizes].sort((x, y) => x - y);
  const small = sorted[0];
  const large = sorted.at(-1);
  const p50 = (op: string, size: number | undefined, t: Target = 'C') => sized.find((o) => o.op === op && o.size === size)?.results[t]?.lat.p50;
  const rows = ops.map((op) => {
    const scale = ratio(p50(op, large), p50(op, small));
    const scaleB = ratio(p50(op, large, 'B'), p50(op, small, 'B'));
    const at10k = p50(op, 10_000);
    const vs10k = ratio(p50(op, 50_000), at10k);
    return [
      op,
      ...sorted.map((s) => fmtMs(p50(op, s) ?? Number.NaN)),
      fmtFactor(scale),
      fmtFactor(scaleB),
      at10k === undefined ? '–' : `${verdict(at10k, P50_AT_10K_MS, 'atMost')}`,
      Number.isFinite(vs10k) ? `${fmtFactor(vs10k)}: ${verdict(vs10k, SCALE_50K_VS_10K, 'atMost')}` : '–',
    ];
  });
  return markdownTable(
    ['operation', ...sorted.map((s) => `C p50 ms @${s}`), `C ${large}/${small}`, `B ${large}/${small}`, `10k p50 ≤ ${P50_AT_10K_MS} ms`, `50k/10k ≤ ${SCALE_50K_VS_10K}×`],
    rows,
    ['l', ...sorted.map(() => 'r' as const), 'r', 'r', 'l', 'l'],
  );
}

export function targetsSummary(rec: RunRecord): string[] {
  const out: string[] = [];
  for (const o of rec.scenarios.filter((x) => targetOf(x) != null)) {
    const t = targetOf(o)!;
    if (o.status !== 'ok') {
      out.push(`- ${o.label}: C ≥ ${fmtPct(t)} of B: not measured (${o.status}${o.reason ? `: ${o.reason}` : ''})`);
      continue;
    }
    const r = ratio(o.results.C?.rps, o.results.B?.rps);
    out.push(`- ${o.label}: C ≥ ${fmtPct(t)} of B's requests/s: ${fmtPct(r)}, ${verdict(r, t, 'atLeast')}`);
  }
  const sized = rec.scenarios.filter((o) => o.group === 'sized');
  const ops = [...new Set(sized.map((o) => o.op!))];
  for (const op of ops) {
    const at = (size: number) => sized.find((o) => o.op === op && o.size === size);
    const k10 = at(10_000);
    const k50 = at(50_000);
    if (!k10) out.push(`- ${op}: p50 at 10k: not measured (10k not in --sizes)`);
    else if (k10.status !== 'ok') out.push(`- ${op}: p50 at 10k ≤ ${P50_AT_10K_MS} ms: not measured (${k10.status}${k10.reason ? `: ${k10.reason}` : ''})`);
    else out.push(`- ${op}: p50 at 10k ≤ ${P50_AT_10K_MS} ms: ${fmtMs(k10.results.C!.lat.p50)} ms, ${verdict(k10.results.C!.lat.p50, P50_AT_10K_MS, 'atMost')}`);
    const at50 = P50_AT_50K_MS[op];
    if (at50 !== undefined && k50?.status === 'ok') out.push(`- ${op}: p50 at 50k ≤ ${at50} ms: ${fmtMs(k50.results.C!.lat.p50)} ms, ${verdict(k50.results.C!.lat.p50, at50, 'atMost')}`);
    if (k10?.status === 'ok' && k50?.status === 'ok') {
      const f = ratio(k50.results.C!.lat.p50, k10.results.C!.lat.p50);
      out.push(`- ${op}: p50 at 50k ≤ ${SCALE_50K_VS_10K}× the 10k figure: ${fmtFactor(f)}, ${verdict(f, SCALE_50K_VS_10K, 'atMost')}`);
    } else if (!k50) out.push(`- ${op}: 50k vs 10k: not measured (50k not in --sizes)`);
    else if (k50.status !== 'ok') {
      const why = `${k50.status === 'refused' ? 'Cairn refuses the 50k account' : k50.status}${k50.reason ? `: ${k50.reason}` : ''}`;
      out.push(`- ${op}: p50 at 50k ≤ ${SCALE_50K_VS_10K}× the 10k figure: ${k50.status === 'refused' ? 'NOT met' : 'not measured'} (${why})`);
    }
  }
  // Both targets are stated for a 50k-to-do account; with smaller sizes the figure is shown, not judged.
  const big = rec.rss.largest;
  const judged = big >= 50_000;
  const cond = judged ? '' : ` with ${big} to-dos at most: not judged (needs 50000 in --sizes)`;
  const rssPeak = rec.rss.peak ?? Number.NaN;
  out.push(`- RSS ≤ ${RSS_LIMIT / 1e6} MB with 50k to-dos seeded: peak ${fmtMB(rec.rss.peak)}${cond}${judged ? `, ${verdict(rssPeak, RSS_LIMIT, 'atMost')}` : ''}`);
  const start = median(rec.startMs);
  out.push(`- start to healthy ≤ 1 s: median ${fmtMs(start)} ms of ${rec.startMs.length}${cond}${judged ? `, ${verdict(start, START_LIMIT_MS, 'atMost')}` : ''}`);
  return out;
}

export function microTable(m: MicroResult): string {
  const total = m.split.find((r) => r.name.startsWith('= total'))?.usPerOp ?? Number.NaN;
  // A difference below zero is measurement noise (the parts are measured separately): shown as ~0.
  const rows = m.split.map((r) => [
    r.name,
    r.usPerOp < 0 ? `~0 (${r.usPerOp.toFixed(1)})` : r.usPerOp.toFixed(1),
    r.name.startsWith('for comparison') || r.name.startsWith('=') || r.usPerOp < 0 ? '' : fmtPct(r.usPerOp / total),
  ]);
  return markdownTable(['part of one authenticated read', 'µs', 'share'], rows, ['l', 'r', 'r']);
}

export function renderReport(rec: RunRecord): string {
  const s = rec.settings;
  const lines: string[] = [];
  lines.push(`## Bench run ${rec.date} (${rec.mode})`, '');
  lines.push(
    `- Machine: ${rec.machine.cpu}, ${rec.machine.cores} cores, ${rec.machine.memGB} GB RAM, ${rec.machine.os}; Node ${rec.machine.node}`,
    `- Commit: ${rec.commit}`,
    `- Load: autocannon, ${s.connections} connections for throughput scenarios, 1 for the sized (decrypting) ones; warm-up ${s.warmupS} s (excluded), measured ${s.durationS} s per server per scenario; A/B/C order rotates per scenario`,
    `- Accounts: "crud" with ${s.crudTodos} to-dos (reads and writes), and one account per size: ${s.sizes.join(', ')} to-dos; Cairn LOG_LEVEL=${s.logLevel}`,
    `- Durability: ${s.durability ?? 'relaxed (before CAIRN_DURABILITY existed)'} for B (synchronous=${s.durability === 'full' ? 'FULL' : 'NORMAL'}) and C (CAIRN_DURABILITY); rows marked "durability …" ran under the other setting`,
    `- Seeding Cairn: ${rec.seed.todos} to-dos in ${rec.seed.seconds.toFixed(1)} s through Cairn's own code (procedures; the to-do model); database ${fmtMB(rec.seed.dbBytes)}`,
    `- Whole run: ${rec.elapsedS.toFixed(0)} s${s.only ? `; only scenarios matching /${s.only}/` : ''}`,
    '',
    'A = bare node:http (fixed JSON); B = Express 5 + better-sqlite3, plaintext, no auth; C = Cairn with a personal access token (a first-party session where the scenario says so).',
    'Latencies in ms (2xx only); C/B and C/A compare requests/s. ⚠n marks non-2xx answers or socket errors.',
    '',
  );
  lines.push(mainTable(rec.scenarios), '');
  if (rec.scenarios.some((o) => o.group === 'sized' && o.status === 'ok')) {
    lines.push('### Decrypting operations: scaling with account size (C p50)', '', scalingTable(rec.scenarios, s.sizes), '');
  }
  lines.push('### Resources', '');
  lines.push(
    markdownTable(
      ['measure', 'value'],
      [
        [`start to /healthz 200 (database holding ${rec.seed.todos} to-dos)`, rec.startMs.map((x) => `${fmtMs(x)} ms`).join(', ') || '–'],
        ['RSS at healthy (idle)', fmtMB(rec.rss.idle)],
        ['RSS after the run', fmtMB(rec.rss.after)],
        ['peak RSS (VmHWM) over the run', fmtMB(rec.rss.peak)],
        ...(rec.rss.doors != null ? [['peak RSS during the CalDAV and MCP scenarios', fmtMB(rec.rss.doors)]] : []),
        ...(rec.rss.app != null ? [['peak RSS during the web app scenarios (Chromium)', fmtMB(rec.rss.app)]] : []),
      ],
    ),
    '',
  );
  const peaks = rec.scenarios.filter((x) => x.peakRssC != null);
  if (peaks.length) {
    lines.push(
      "C's peak RSS per scenario (VmHWM reset before the scenario's warm-up, read after its measured run):",
      '',
      markdownTable(
        ['scenario', 'C p50 ms', 'peak RSS'],
        peaks.map((x) => [x.label + (x.size !== undefined && !x.label.includes(`(${x.size})`) ? ` (${x.size})` : ''), fmtMs(x.results.C?.lat.p50 ?? Number.NaN), fmtMB(x.peakRssC ?? null)]),
      ),
      '',
    );
  }
  if (rec.micro) {
    lines.push(
      `### Cost split of one authenticated read (GET /v1/${rec.micro.resource}/{id}, in-process, one at a time)`,
      '',
      microTable(rec.micro),
      '',
    );
    if (rec.micro.layers?.length) {
      lines.push(
        '### Layer budget (issue 12): each layer called on its own, in-process, best of the interleaved rounds',
        '',
        markdownTable(['layer', 'µs per call'], rec.micro.layers.map((r) => [r.name, r.usPerOp.toFixed(2)]), ['l', 'r']),
        '',
      );
    }
  }
  lines.push(...renderDoors(rec.doors));
  lines.push(...renderApp(rec.app));
  lines.push('### Targets', '', ...targetsSummary(rec), '');
  const missing = rec.scenarios.filter((o) => o.status !== 'ok');
  if (missing.length) {
    lines.push('### Not measured', '');
    const word = { unavailable: 'not available yet', refused: 'refused by Cairn', error: 'ERROR', ok: '' } as const;
    for (const o of missing) lines.push(`- ${o.label}: ${word[o.status]}${o.reason ? ` (${o.reason})` : ''}`);
    lines.push('');
  }
  const warnings = rec.scenarios.flatMap((o) =>
    (['A', 'B', 'C'] as const).flatMap((t) => {
      const r = o.results[t];
      return r && (r.non2xx || r.errors) ? [`- ${o.label} on ${t}: ${r.non2xx} non-2xx ${JSON.stringify(r.statuses)}, ${r.errors} errors, ${r.timeouts} timeouts`] : [];
    }),
  );
  if (warnings.length || rec.seed.notes.length) lines.push('### Notes', '', ...rec.seed.notes.map((n) => `- seeding: ${n}`), ...warnings, '');
  return lines.join('\n');
}
