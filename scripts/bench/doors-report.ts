// The report of the door scenarios (scripts/bench/doors.ts): CalDAV side by side with Radicale
// (issue 30 "Performance") and the MCP tool against its REST twin (issue 31 item 4). Pure: no I/O,
// so test/scripts/bench.test.ts checks it directly.
import type { LoadResult } from './load.js';
import { fmtFactor, fmtMB, fmtMs, fmtPct, fmtRate, markdownTable, median, ratio, verdict } from './stats.js';

export type DoorTarget = 'cairn' | 'radicale' | 'rest';

/** The scenario ids, in run order; each is selectable with --only. */
export const DOOR_IDS = ['dav-propfind', 'dav-multiget', 'dav-sync', 'dav-put', 'dav-tsdav-sync', 'mcp-find-today'] as const;
export type DoorId = (typeof DOOR_IDS)[number];

/** Issue 30's p50 targets (1 connection), issue 30's full-sync and RSS budgets, issue 31's ratio. */
export const DOOR_TARGETS = {
  'dav-propfind': 30,
  'dav-multiget': 40,
  'dav-sync': 10,
  'dav-put': 10,
  fullSyncMs: 5_000,
  rssBytes: 200e6,
  mcpOverRest: 1.3,
} as const;

export type DoorOutcome = {
  id: DoorId;
  label: string;
  status: 'ok' | 'skipped' | 'error';
  reason?: string;
  /** Load scenarios: Cairn and Radicale (CalDAV), or Cairn's MCP tool (`cairn`) and its REST twin (`rest`). */
  results: Partial<Record<DoorTarget, LoadResult>>;
  /** The full sync by tsdav: wall-clock ms of each measured run, per server. */
  syncMs?: Partial<Record<'cairn' | 'radicale', number[]>>;
  /** Calendars and objects one full sync fetched, per server. */
  synced?: Partial<Record<'cairn' | 'radicale', { calendars: number; objects: number; bytes: number }>>;
  /** Cairn's peak RSS (VmHWM, reset before the scenario's Cairn runs), bytes. */
  peakRssCairn?: number | null;
};

export type DoorsRecord = {
  radicale: string | null;
  todos: number;
  projects: number;
  seedSeconds: number;
  outcomes: DoorOutcome[];
};

const cells = (r: LoadResult | undefined): [string, string, string] => {
  if (!r) return ['–', '–', '–'];
  const flag = r.non2xx || r.errors ? ` ⚠${r.non2xx + r.errors}` : '';
  return [fmtRate(r.rps) + flag, fmtMs(r.lat.p50), fmtMs(r.lat.p99)];
};

function davRows(outcomes: DoorOutcome[]): string[][] {
  return outcomes
    .filter((o) => o.status === 'ok' && o.id.startsWith('dav-') && o.id !== 'dav-tsdav-sync')
    .map((o) => {
      const c = o.results.cairn;
      const r = o.results.radicale;
      const t = DOOR_TARGETS[o.id as 'dav-propfind'];
      return [
        o.label,
        ...cells(c),
        ...cells(r),
        fmtPct(ratio(c?.rps, r?.rps)),
        `≤ ${t} ms: ${verdict(c?.lat.p50 ?? Number.NaN, t, 'atMost')}`,
        `≥ 100%: ${verdict(ratio(c?.rps, r?.rps), 1, 'atLeast')}`,
        fmtMB(o.peakRssCairn ?? null),
      ];
    });
}

/** The door section of the bench report (empty when no door scenario ran). */
export function renderDoors(rec: DoorsRecord | undefined): string[] {
  if (!rec || rec.outcomes.length === 0) return [];
  const lines: string[] = [];
  lines.push(
    '### CalDAV and MCP doors',
    '',
    `One account of ${rec.todos} to-dos in ${rec.projects} projects (project 0 holds 500; seeded in ${rec.seedSeconds.toFixed(1)} s). ` +
      `CalDAV: Cairn with an app password over HTTP Basic against ${rec.radicale ? `Radicale ${rec.radicale}` : 'Radicale (not installed)'} holding the same iCalendar under the same names; ` +
      'MCP: `tools/call find_todos {view: today}` (revision 2026-07-28) against `GET /v1/views/today` on the same account. 1 connection; Cairn/Radicale compares requests/s.',
    '',
  );
  const rows = davRows(rec.outcomes);
  if (rows.length) {
    lines.push(
      markdownTable(
        ['scenario', 'Cairn req/s', 'Cairn p50 ms', 'Cairn p99 ms', 'Radicale req/s', 'Radicale p50 ms', 'Radicale p99 ms', 'Cairn/Radicale', 'target p50', 'target throughput', 'Cairn peak RSS'],
        rows,
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l', 'r'],
      ),
      '',
    );
  }
  const full = rec.outcomes.find((o) => o.id === 'dav-tsdav-sync' && o.status === 'ok');
  if (full?.syncMs) {
    const c = full.syncMs.cairn ?? [];
    const r = full.syncMs.radicale ?? [];
    const what = (t: 'cairn' | 'radicale') => {
      const s = full.synced?.[t];
      return s ? `${s.calendars} calendars, ${s.objects} to-dos, ${fmtMB(s.bytes)} of iCalendar` : '–';
    };
    lines.push(
      markdownTable(
        ['first full sync by tsdav', 'Cairn', 'Radicale'],
        [
          ['runs (ms)', c.map((x) => fmtMs(x)).join(', ') || '–', r.map((x) => fmtMs(x)).join(', ') || '–'],
          ['median (ms)', fmtMs(median(c)), fmtMs(median(r))],
          ['fetched', what('cairn'), what('radicale')],
          ['Cairn/Radicale (speed)', fmtPct(ratio(median(r), median(c))), ''],
          ['Cairn peak RSS while serving it', fmtMB(full.peakRssCairn ?? null), ''],
        ],
        ['l', 'r', 'r'],
      ),
      '',
    );
  }
  const mcp = rec.outcomes.find((o) => o.id === 'mcp-find-today' && o.status === 'ok');
  if (mcp) {
    lines.push(
      markdownTable(
        ['MCP against REST', 'req/s', 'p50 ms', 'p99 ms'],
        [
          ['`tools/call find_todos {view: today}`', ...cells(mcp.results.cairn)],
          ['`GET /v1/views/today`', ...cells(mcp.results.rest)],
        ],
        ['l', 'r', 'r', 'r'],
      ),
      '',
    );
  }
  lines.push('Door targets:', '', ...doorTargets(rec), '');
  return lines;
}

/** Each door target with its verdict (or why it was not measured). */
export function doorTargets(rec: DoorsRecord): string[] {
  const out: string[] = [];
  for (const o of rec.outcomes) {
    if (o.status !== 'ok') {
      out.push(`- ${o.label}: not measured (${o.status}${o.reason ? `: ${o.reason}` : ''})`);
      continue;
    }
    if (o.id === 'mcp-find-today') {
      const f = ratio(o.results.cairn?.lat.p50, o.results.rest?.lat.p50);
      out.push(`- ${o.label}: MCP p50 ≤ ${DOOR_TARGETS.mcpOverRest}× REST p50: ${fmtFactor(f)}, ${verdict(f, DOOR_TARGETS.mcpOverRest, 'atMost')}`);
    } else if (o.id === 'dav-tsdav-sync') {
      const c = median(o.syncMs?.cairn ?? []);
      const r = median(o.syncMs?.radicale ?? []);
      out.push(`- ${o.label}: ≤ ${DOOR_TARGETS.fullSyncMs / 1000} s: median ${fmtMs(c)} ms, ${verdict(c, DOOR_TARGETS.fullSyncMs, 'atMost')}`);
      out.push(`- ${o.label}: Cairn at least as fast as Radicale (median ${fmtMs(r)} ms): ${verdict(ratio(r, c), 1, 'atLeast')}`);
      out.push(`- ${o.label}: Cairn's peak RSS < 200 MB: ${fmtMB(o.peakRssCairn ?? null)}, ${verdict(o.peakRssCairn ?? Number.NaN, DOOR_TARGETS.rssBytes, 'atMost')}`);
    } else {
      const t = DOOR_TARGETS[o.id];
      const p50 = o.results.cairn?.lat.p50 ?? Number.NaN;
      const cr = ratio(o.results.cairn?.rps, o.results.radicale?.rps);
      out.push(`- ${o.label}: p50 ≤ ${t} ms: ${fmtMs(p50)} ms, ${verdict(p50, t, 'atMost')}; Cairn ≥ Radicale's requests/s: ${fmtPct(cr)}, ${verdict(cr, 1, 'atLeast')}`);
    }
  }
  return out;
}
