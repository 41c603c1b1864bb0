// The bench's pure helpers: the numbers in docs/performance.md are only as right as these.
import { describe, expect, it } from 'vitest';
import {
  Samples,
  fmtFactor,
  fmtMB,
  fmtMs,
  fmtPct,
  fmtRate,
  markdownTable,
  median,
  percentile,
  ratio,
  rotate,
  summarize,
  verdict,
} from '../../scripts/bench/stats.js';
import { fixtureTodo, isoDay, prng, SEARCH_TERM } from '../../scripts/bench/fixtures.js';
import { renderReport, scalingTable, targetsSummary, mainTable, type RunRecord, type ScenarioOutcome } from '../../scripts/bench/report.js';
import type { LoadResult } from '../../scripts/bench/load.js';

describe('percentile (nearest rank)', () => {
  it('picks the smallest value with at least p% at or below it', () => {
    const v = [15, 20, 35, 40, 50];
    expect(percentile(v, 30)).toBe(20);
    expect(percentile(v, 40)).toBe(20);
    expect(percentile(v, 50)).toBe(35);
    expect(percentile(v, 100)).toBe(50);
    expect(percentile(v, 0)).toBe(15);
  });

  it('sorts numerically, not as strings, and leaves the input alone', () => {
    const v = [10, 9, 100, 1];
    expect(percentile(v, 50)).toBe(9);
    expect(v).toEqual([10, 9, 100, 1]);
  });

  it('p99 of 1..1000 is 990; empty is NaN; out-of-range p throws', () => {
    const v = Array.from({ length: 1000 }, (_, i) => i + 1).reverse();
    expect(percentile(v, 99)).toBe(990);
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile(v, 101)).toThrow(RangeError);
    expect(() => percentile(v, -1)).toThrow(RangeError);
  });

  it('summarize agrees with percentile and computes mean and max', () => {
    const v = [3, 1, 4, 1, 5, 9, 2, 6];
    const s = summarize(v);
    expect(s).toEqual({ n: 8, p50: percentile(v, 50), p99: percentile(v, 99), mean: 31 / 8, max: 9 });
    expect(summarize([]).n).toBe(0);
    expect(summarize([]).p50).toBeNaN();
  });
});

describe('ratio, median, rotate', () => {
  it('ratio is NaN when a side is missing or the divisor is zero', () => {
    expect(ratio(50, 200)).toBe(0.25);
    expect(ratio(undefined, 2)).toBeNaN();
    expect(ratio(1, null)).toBeNaN();
    expect(ratio(1, 0)).toBeNaN();
    expect(ratio(Number.NaN, 1)).toBeNaN();
  });

  it('median of odd and even counts', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('rotate changes the A/B/C order per scenario', () => {
    expect(rotate(['A', 'B', 'C'], 0)).toEqual(['A', 'B', 'C']);
    expect(rotate(['A', 'B', 'C'], 1)).toEqual(['B', 'C', 'A']);
    expect(rotate(['A', 'B', 'C'], 5)).toEqual(['C', 'A', 'B']);
    expect(rotate(['A', 'B', 'C'], -1)).toEqual(['C', 'A', 'B']);
    expect(rotate([], 3)).toEqual([]);
  });
});

describe('Samples', () => {
  it('grows past its initial capacity and keeps every value', () => {
    const s = new Samples();
    for (let i = 0; i < 10_000; i++) s.push(i);
    expect(s.length).toBe(10_000);
    expect(s.values()[9_999]).toBe(9_999);
    expect(percentile(s.values(), 50)).toBe(4_999);
  });
});

describe('formatting', () => {
  it('numbers keep a precision that suits their size', () => {
    expect(fmtMs(0.18349)).toBe('0.183');
    expect(fmtMs(2.414)).toBe('2.41');
    expect(fmtMs(38.24)).toBe('38.2');
    expect(fmtMs(1204.4)).toBe('1204');
    expect(fmtMs(Number.NaN)).toBe('–');
    expect(fmtRate(1234.6)).toBe('1235');
    expect(fmtRate(4.26)).toBe('4.3');
    expect(fmtPct(0.523)).toBe('52%');
    expect(fmtPct(0.0712)).toBe('7.1%');
    expect(fmtFactor(4.213)).toBe('4.21×');
    expect(fmtMB(187_654_321)).toBe('187.7 MB');
    expect(fmtMB(null)).toBe('–');
  });

  it('markdownTable aligns columns, escapes pipes and refuses ragged rows', () => {
    const t = markdownTable(['a', 'b'], [['x|y', '1']], ['l', 'r']);
    expect(t).toBe('| a | b |\n| --- | ---: |\n| x\\|y | 1 |');
    expect(() => markdownTable(['a', 'b'], [['only one']])).toThrow(/1 cells/);
  });

  it('verdict compares in the right direction and says so when a figure is missing', () => {
    expect(verdict(0.55, 0.5, 'atLeast')).toBe('met');
    expect(verdict(0.45, 0.5, 'atLeast')).toBe('NOT met');
    expect(verdict(20, 25, 'atMost')).toBe('met');
    expect(verdict(26, 25, 'atMost')).toBe('NOT met');
    expect(verdict(Number.NaN, 25, 'atMost')).toBe('–');
  });
});

describe('fixtures', () => {
  it('are deterministic: the same index gives the same to-do in B and C', () => {
    expect(fixtureTodo(123, '2026-01-10')).toEqual(fixtureTodo(123, '2026-01-10'));
    expect(fixtureTodo(123, '2026-01-10')).not.toEqual(fixtureTodo(124, '2026-01-10'));
    const r1 = prng(7);
    const r2 = prng(7);
    expect([r1(), r1(), r1()]).toEqual([r2(), r2(), r2()]);
  });

  it('have the documented mix: mostly completed, some open, a rare search term', () => {
    const items = Array.from({ length: 10_000 }, (_, i) => fixtureTodo(i, '2026-01-10'));
    const share = (f: (t: (typeof items)[number]) => boolean) => items.filter(f).length / items.length;
    expect(share((t) => t.status === 'completed')).toBeGreaterThan(0.74);
    expect(share((t) => t.status === 'completed')).toBeLessThan(0.82);
    expect(share((t) => t.someday)).toBeGreaterThan(0.03);
    expect(share((t) => t.whenDate !== null)).toBeGreaterThan(0.01);
    expect(share((t) => t.title.includes(SEARCH_TERM))).toBeCloseTo(1 / 97, 3);
    for (const t of items) {
      expect(t.title.length).toBeLessThanOrEqual(4096);
      if (t.whenDate) expect(t.whenDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('isoDay crosses month and year ends', () => {
    expect(isoDay('2026-12-30', 3)).toBe('2027-01-02');
    expect(isoDay('2026-03-01', -1)).toBe('2026-02-28');
  });
});

function load(rps: number, p50: number): LoadResult {
  return { ok: Math.round(rps), non2xx: 0, statuses: {}, errors: 0, timeouts: 0, seconds: 1, rps, lat: { n: 10, p50, p99: p50 * 2, mean: p50, max: p50 * 3 } };
}

function outcome(id: string, o: Partial<ScenarioOutcome>): ScenarioOutcome {
  return { id, label: id, kind: 'read', group: 'core', connections: 10, status: 'ok', results: {}, ...o };
}

function record(scenarios: ScenarioOutcome[], extra: Partial<RunRecord> = {}): RunRecord {
  return {
    date: '2026-01-10T00:00:00.000Z',
    mode: 'quick',
    machine: { cpu: 'cpu', cores: 2, memGB: 4, os: 'os', node: '20' },
    commit: 'abc',
    settings: { connections: 10, warmupS: 1, durationS: 1, sizes: [1000, 10000, 50000], crudTodos: 1000, logLevel: 'info' },
    seed: { todos: 0, seconds: 0, notes: [], available: {}, dbBytes: null },
    startMs: [800, 1200, 900],
    rss: { idle: 100e6, after: 200e6, peak: 260e6, largest: 50000 },
    scenarios,
    micro: null,
    elapsedS: 1,
    ...extra,
  };
}

describe('report', () => {
  it('holds the get to 85%, the list to 80% and writes to 90% of B on /v1 and /trpc (issue 29), and shows C/B and C/A', () => {
    const rec = record([
      outcome('todo-get', { label: 'GET one', results: { A: load(10000, 0.5), B: load(2000, 2), C: load(1700, 4) } }),
      outcome('trpc-todo-get', { label: 'tRPC get', results: { A: load(10000, 0.5), B: load(2000, 2), C: load(1680, 4) } }),
      outcome('todo-list', { label: 'GET list', results: { A: load(10000, 0.5), B: load(2000, 2), C: load(1600, 4) } }),
      outcome('trpc-todo-list', { label: 'tRPC list', results: { A: load(10000, 0.5), B: load(2000, 2), C: load(1580, 4) } }),
      outcome('todo-create', { label: 'POST', kind: 'write', results: { A: load(10000, 0.5), B: load(1000, 2), C: load(890, 4) } }),
      outcome('trpc-todo-update', { label: 'tRPC update', kind: 'write', results: { A: load(10000, 0.5), B: load(1000, 2), C: load(900, 4) } }),
    ]);
    const lines = targetsSummary(rec);
    expect(lines).toContain("- GET one: C ≥ 85% of B's requests/s: 85%, met");
    expect(lines).toContain("- tRPC get: C ≥ 85% of B's requests/s: 84%, NOT met");
    expect(lines).toContain("- GET list: C ≥ 80% of B's requests/s: 80%, met");
    expect(lines).toContain("- tRPC list: C ≥ 80% of B's requests/s: 79%, NOT met");
    expect(lines).toContain("- POST: C ≥ 90% of B's requests/s: 89%, NOT met");
    expect(lines).toContain("- tRPC update: C ≥ 90% of B's requests/s: 90%, met");
    const table = mainTable(rec.scenarios);
    expect(table).toContain('| GET one | 10 | 10000 | 0.500 | 1.00 | 2000 | 2.00 | 4.00 | 1700 | 4.00 | 8.00 | 85% | 17% | ≥ 85%: met |');
  });

  it('judges the decrypting operations at 10k and their 50k/10k scaling', () => {
    const sized = (size: number, p50: number) =>
      outcome(`view@${size}`, { group: 'sized', kind: 'decrypting', size, op: 'GET /v1/views/today', connections: 1, results: { A: load(1, 1), B: load(100, p50 / 10), C: load(10, p50) } });
    const rec = record([sized(1000, 2), sized(10000, 20), sized(50000, 120)]);
    const lines = targetsSummary(rec);
    expect(lines).toContain('- GET /v1/views/today: p50 at 10k ≤ 25 ms: 20.0 ms, met');
    expect(lines).toContain('- GET /v1/views/today: p50 at 50k ≤ 5.5× the 10k figure: 6.00×, NOT met');
    // Issue 29 item 4: today and upcoming at 50k ≤ 30 ms, search ≤ 60 ms.
    expect(lines).toContain('- GET /v1/views/today: p50 at 50k ≤ 30 ms: 120 ms, NOT met');
    expect(lines).toContain('- RSS ≤ 180 MB with 50k to-dos seeded: peak 260.0 MB, NOT met');
    const search = (size: number, p50: number) =>
      outcome(`search@${size}`, { group: 'sized', kind: 'decrypting', size, op: 'GET /v1/search?q=aurora', connections: 1, results: { A: load(1, 1), B: load(100, 1), C: load(10, p50) } });
    const met = targetsSummary(record([search(10000, 12), search(50000, 59.5)], { rss: { idle: 100e6, after: 150e6, peak: 179.9e6, largest: 50000 } }));
    expect(met).toContain('- GET /v1/search?q=aurora: p50 at 50k ≤ 60 ms: 59.5 ms, met');
    expect(met).toContain('- RSS ≤ 180 MB with 50k to-dos seeded: peak 179.9 MB, met');
    // Operations without a 50k target of their own get none.
    expect(targetsSummary(record([sized(10000, 4)])).some((l) => / p50 at 50k ≤ \d+ ms/.test(l))).toBe(false);
    expect(lines).toContain('- start to healthy ≤ 1 s: median 900 ms of 3, met');
    const table = scalingTable(rec.scenarios, [1000, 10000, 50000]);
    expect(table).toContain('| GET /v1/views/today | 2.00 | 20.0 | 120 | 60.0× | 60.0× | met | 6.00×: NOT met |');
  });

  it("lists C's peak RSS per scenario where it was measured (issue 12's memory target)", () => {
    const rec = record([
      outcome('search@50000', { label: 'GET /v1/search (50000)', group: 'sized', kind: 'decrypting', size: 50000, op: 'GET /v1/search', connections: 1, results: { A: load(1, 1), B: load(100, 1), C: load(8, 120) }, peakRssC: 187.65e6 }),
      outcome('todo-get', { label: 'GET one', results: { A: load(10000, 0.5), B: load(2000, 2), C: load(1600, 4) } }),
    ]);
    const md = renderReport(rec);
    expect(md).toContain("C's peak RSS per scenario");
    expect(md).toContain('| GET /v1/search (50000) | 120 | 187.7 MB |');
    // A scenario without a measured peak (no /proc, or not run against C) gets no row.
    expect(md).not.toMatch(/\| GET one \| [^|]+ \| [0-9.]+ MB \|/);
  });

  it('says plainly when a target was not measured', () => {
    const rec = record([outcome('todo-list', { label: 'GET list', status: 'unavailable', reason: 'route answers 404' })], {
      rss: { idle: null, after: null, peak: null, largest: 10000 },
    });
    const lines = targetsSummary(rec);
    expect(lines).toContain('- GET list: C ≥ 80% of B: not measured (unavailable: route answers 404)');
    expect(lines.find((l) => l.startsWith('- RSS'))).toBe('- RSS ≤ 180 MB with 50k to-dos seeded: peak – with 10000 to-dos at most: not judged (needs 50000 in --sizes)');
    expect(mainTable(rec.scenarios).split('\n')).toHaveLength(2);
  });

  it('counts a 50k account refused with account_too_large as a target not met', () => {
    const base = { group: 'sized' as const, kind: 'decrypting' as const, op: 'GET /v1/search', connections: 1 };
    const rec = record([
      outcome('search@10000', { ...base, size: 10000, results: { A: load(1, 1), B: load(100, 1), C: load(50, 20) } }),
      outcome('search@50000', { ...base, size: 50000, status: 'refused', reason: '422 account_too_large: more than 20000 rows' }),
    ]);
    expect(targetsSummary(rec)).toContain(
      '- GET /v1/search: p50 at 50k ≤ 5.5× the 10k figure: NOT met (Cairn refuses the 50k account: 422 account_too_large: more than 20000 rows)',
    );
  });
});

describe('micro table', () => {
  it('shows shares of the total and a negative difference as noise', async () => {
    const { microTable } = await import('../../scripts/bench/report.js');
    const t = microTable({
      type: 'micro',
      resource: 'todos',
      accountSize: 1000,
      rows: [],
      split: [
        { name: 'decrypt', usPerOp: 50 },
        { name: 'access log', usPerOp: -3.2 },
        { name: '= total GET /v1 (log info)', usPerOp: 200 },
      ],
    });
    expect(t).toContain('| decrypt | 50.0 | 25% |');
    expect(t).toContain('| access log | ~0 (-3.2) |  |');
    expect(t).toContain('| = total GET /v1 (log info) | 200.0 |  |');
  });
});

describe('Cairn as npm start runs it', () => {
  it('takes the Node flags from the start script, which names dist/server/main.js', async () => {
    const { startScriptFlags } = await import('../../scripts/bench/procs.js');
    expect(startScriptFlags()).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=30']);
  });
});

describe('the CalDAV and MCP door scenarios (issues 30 and 31)', () => {
  it('are selectable with --only, run in a full run, and stay out of --quick unless named', async () => {
    const { selectedDoors, DOOR_IDS } = await import('../../scripts/bench/doors.js');
    expect(selectedDoors(/^(dav|mcp)-/, false)).toEqual([...DOOR_IDS]);
    expect(selectedDoors(/^dav-put$/, true)).toEqual(['dav-put']);
    expect(selectedDoors(/mcp/, false)).toEqual(['mcp-find-today']);
    expect(selectedDoors(/^todo-get$/, false)).toEqual([]);
    expect(selectedDoors(null, false)).toEqual([...DOOR_IDS]);
    expect(selectedDoors(null, true)).toEqual([]);
  });

  it('seed 10,000 to-dos in 50 projects with a 500-item project 0', async () => {
    const { doorProjectOf } = await import('../../scripts/bench/fixtures.js');
    const counts = new Array<number>(50).fill(0);
    for (let i = 0; i < 10_000; i++) counts[doorProjectOf(i, 50)]!++;
    expect(counts[0]).toBe(500);
    expect(Math.min(...counts.slice(1))).toBe(193);
    expect(Math.max(...counts.slice(1))).toBe(194);
  });

  it("let autocannon send WebDAV's PROPFIND and REPORT", async () => {
    await import('../../scripts/bench/load.js');
    const { createRequire } = await import('node:module');
    const methods = createRequire(import.meta.url)('autocannon/lib/httpMethods.js') as string[];
    expect(methods).toEqual(expect.arrayContaining(['GET', 'PUT', 'PROPFIND', 'REPORT']));
  });

  it('judge each p50 target, Cairn against Radicale, the full sync, its RSS and MCP against REST', async () => {
    const { renderDoors, doorTargets } = await import('../../scripts/bench/doors-report.js');
    const rec = {
      radicale: '3.1.8',
      todos: 10000,
      projects: 50,
      seedSeconds: 9.5,
      outcomes: [
        { id: 'dav-propfind' as const, label: 'PROPFIND', status: 'ok' as const, results: { cairn: load(50, 20), radicale: load(25, 40) }, peakRssCairn: 150e6 },
        { id: 'dav-put' as const, label: 'PUT', status: 'ok' as const, results: { cairn: load(80, 12), radicale: load(100, 9) } },
        { id: 'dav-sync' as const, label: 'sync', status: 'error' as const, reason: 'Radicale: 500', results: {} },
        { id: 'dav-tsdav-sync' as const, label: 'full sync', status: 'ok' as const, results: {}, syncMs: { cairn: [4000, 6000, 4500], radicale: [9000, 9100, 8000] }, synced: { cairn: { calendars: 51, objects: 10000, bytes: 4.1e6 } }, peakRssCairn: 210e6 },
        { id: 'mcp-find-today' as const, label: 'MCP today', status: 'ok' as const, results: { cairn: load(40, 13), rest: load(50, 10) } },
      ],
    };
    const lines = doorTargets(rec);
    expect(lines).toContain("- PROPFIND: p50 ≤ 30 ms: 20.0 ms, met; Cairn ≥ Radicale's requests/s: 200%, met");
    expect(lines).toContain("- PUT: p50 ≤ 10 ms: 12.0 ms, NOT met; Cairn ≥ Radicale's requests/s: 80%, NOT met");
    expect(lines).toContain('- sync: not measured (error: Radicale: 500)');
    expect(lines).toContain('- full sync: ≤ 5 s: median 4500 ms, met');
    expect(lines).toContain('- full sync: Cairn at least as fast as Radicale (median 9000 ms): met');
    expect(lines).toContain("- full sync: Cairn's peak RSS < 200 MB: 210.0 MB, NOT met");
    expect(lines).toContain('- MCP today: MCP p50 ≤ 1.3× REST p50: 1.30×, met');
    const md = renderDoors(rec).join('\n');
    expect(md).toContain('| PROPFIND | 50 | 20.0 | 40.0 | 25 | 40.0 | 80.0 | 200% | ≤ 30 ms: met | ≥ 100%: met | 150.0 MB |');
    expect(md).toContain('| median (ms) | 4500 | 9000 |');
    // The section goes into the bench report after the A/B/C tables.
    expect(renderReport(record([], { doors: rec }))).toContain('### CalDAV and MCP doors');
    expect(renderDoors(undefined)).toEqual([]);
  });
});

describe('the door scenarios\' serial client', () => {
  it('survives a server that closes after every answer, and names the item in the path before writing its body', async () => {
    const http = await import('node:http');
    const { runSerial } = await import('../../scripts/bench/serial.js');
    // Like Radicale (wsgiref): every answer closes the connection. A PUT whose body is not the item
    // its path names is refused, as Cairn refuses a UID change (409).
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        res.writeHead(body === `UID:${req.url!.slice(1)}` ? 204 : 409, { connection: 'close' });
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    let n = 0;
    let item = '';
    const result = await runSerial(`http://127.0.0.1:${port}`, { method: 'PUT', path: () => `/${(item = `t${n++}`)}`, headers: {}, body: () => `UID:${item}` }, 0.2);
    server.close();
    expect(result.errors).toBe(0);
    expect(result.statuses).toEqual({});
    expect(result.ok).toBeGreaterThan(1);
    expect(result.lat.n).toBe(result.ok);
  });
});
