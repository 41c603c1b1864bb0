// Pure helpers of the benchmark: percentiles, ratios, number formatting and markdown tables, and
// the in-process timer of the micro-benchmarks (clock, timeCalls). No I/O here, so
// test/scripts/bench.test.ts can check them directly.

/**
 * The p-th percentile (0..100) of the values by the nearest-rank method: the smallest value
 * with at least p% of the samples at or below it. NaN for an empty sample.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be within 0..100, got ${p}`);
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[rank - 1]!;
}

export type LatencySummary = { n: number; p50: number; p99: number; mean: number; max: number };

/** p50, p99, mean and max of latencies in milliseconds (sorted once). */
export function summarize(values: ArrayLike<number>): LatencySummary {
  const n = values.length;
  if (n === 0) return { n: 0, p50: Number.NaN, p99: Number.NaN, mean: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const at = (p: number) => sorted[Math.max(1, Math.ceil((p / 100) * n)) - 1]!;
  return { n, p50: at(50), p99: at(99), mean: sum / n, max: sorted[n - 1]! };
}

/** a / b, or NaN when either side is missing or b is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

/** The median of a small list (mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The value at fraction q (0..1) of the sorted values: index floor(n·q), at most the last; for
 * q = 0.5 the middle one, the upper of the middle two for an even count (unlike median). NaN when
 * empty. What index-micro.ts and view-profile.ts have always reported.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}

/** Wall-clock and CPU time (this process, user + system) of one call, in ms. */
export type Timing = { wall: number; cpu: number };
export function clock(fn: () => unknown): Timing {
  const c = process.cpuUsage();
  const t = process.hrtime.bigint();
  fn();
  const wall = Number(process.hrtime.bigint() - t) / 1e6;
  const d = process.cpuUsage(c);
  return { wall, cpu: (d.user + d.system) / 1e3 };
}

/** One untimed warm-up call, then `runs` timed calls: each call's wall-clock and CPU ms. */
export function timeCalls(fn: () => unknown, runs: number): { wall: number[]; cpu: number[] } {
  fn();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = clock(fn);
    wall.push(t.wall);
    cpu.push(t.cpu);
  }
  return { wall, cpu };
}

/** Milliseconds with precision that suits their size: 0.183, 2.41, 38.2, 1204. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1) return ms.toFixed(3);
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return Math.round(ms).toString();
}

/** Requests per second, rounded to whole numbers (one decimal under 10). */
export function fmtRate(rps: number): string {
  if (!Number.isFinite(rps)) return '–';
  return rps < 10 ? rps.toFixed(1) : Math.round(rps).toString();
}

/** A ratio as a percentage: 0.523 → "52%"; under 10% one decimal. */
export function fmtPct(r: number): string {
  if (!Number.isFinite(r)) return '–';
  const pct = r * 100;
  return `${pct < 10 ? pct.toFixed(1) : Math.round(pct)}%`;
}

/** A ratio as a factor: 4.213 → "4.21×". */
export function fmtFactor(r: number): string {
  if (!Number.isFinite(r)) return '–';
  return `${r < 10 ? r.toFixed(2) : r.toFixed(1)}×`;
}

/** Bytes in (decimal) megabytes, the unit of the RSS target: 187654321 → "187.7 MB". */
export function fmtMB(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return '–';
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Escapes what would break a markdown table cell. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** A GitHub-flavoured markdown table; `align` per column ('l' or 'r', default 'l'). */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[] = []): string {
  for (const r of rows) {
    if (r.length !== headers.length) throw new Error(`markdownTable: row has ${r.length} cells, header has ${headers.length}`);
  }
  const sep = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(headers), `|${sep.map((s) => ` ${s} `).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Target verdict: "met", "NOT met", or "–" when the measurement is missing. */
export function verdict(value: number, limit: number, direction: 'atLeast' | 'atMost'): 'met' | 'NOT met' | '–' {
  if (!Number.isFinite(value) || !Number.isFinite(limit)) return '–';
  const ok = direction === 'atLeast' ? value >= limit : value <= limit;
  return ok ? 'met' : 'NOT met';
}

/** Rotates a list by k places: the A/B/C order changes from one scenario to the next. */
export function rotate<T>(items: readonly T[], k: number): T[] {
  const n = items.length;
  if (n === 0) return [];
  const s = ((k % n) + n) % n;
  return [...items.slice(s), ...items.slice(0, s)];
}

/** A growable Float64 sample buffer (latencies arrive one at a time, up to millions per run). */
export class Samples {
  private buf = new Float64Array(4096);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  values(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}
