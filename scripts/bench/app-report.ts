// The report of the web app scenarios (scripts/bench/app.ts): issue 32 "Performance" measured in
// headless Chromium against Cairn. Pure: no I/O (the runner is app.ts).
import { fmtMs, markdownTable, median, percentile, verdict } from './stats.js';

/** The scenario ids, in run order; each is selectable with --only (none runs in --quick unless named). */
export const APP_IDS = ['app-load', 'app-switch', 'app-quick', 'app-scroll', 'app-js'] as const;
export type AppId = (typeof APP_IDS)[number];

/** Issue 32's targets. */
export const APP_TARGETS = { coldMs: 1_000, warmMs: 400, switchMs: 150, quickMs: 100, fps: 60, jsGzipBytes: 150 * 1024 } as const;
/** A 60 fps scroll: at most this share of its frames dropped. */
export const DROPPED_SHARE = 0.01;

/** What seed-app.ts made (the session only over IPC, never printed). */
export type AppSeed = {
  type: 'seeded-app';
  session: string;
  todos: number;
  projects: number;
  counts: { anytime: number; someday: number; dated: number; completed: number };
  seconds: number;
};

/** One programmatic scroll, frame by frame (requestAnimationFrame timestamps). */
export type ScrollRun = {
  /** Pixels scrolled each frame. */
  speedPx: number;
  frames: number;
  seconds: number;
  fps: number;
  frameMs: { p50: number; p95: number; p99: number; max: number };
  /** Frames a 60 Hz display would have shown but the page did not paint (Σ round(Δt / 16.7 ms) − 1). */
  dropped: number;
  /** The most to-do rows in the DOM at once during the scroll. */
  maxRows: number;
};

export type AppRecord = {
  chromium: string | null;
  viewport: { width: number; height: number };
  todos: number;
  projects: number;
  counts: AppSeed['counts'];
  seedSeconds: number;
  /** Rows in Anytime as the app shows them once every page is in. */
  anytimeRows?: number;
  load?: { cold: number[]; warm: number[] };
  switchMs?: number[];
  quickMs?: number[];
  /** The first scroll (pages load on the way), the measured one (every page loaded), and the page held still as long as 600 frames (the control). */
  scroll?: { first: ScrollRun; loaded: ScrollRun; idle?: ScrollRun };
  js?: { files: { name: string; raw: number; gzip: number; br: number }[]; raw: number; gzip: number; br: number };
  errors: { id: AppId; reason: string }[];
  /** CSP violations and page errors Chromium reported during the run. */
  cspErrors: string[];
  pageErrors: string[];
};

/** Frame statistics of rAF timestamps (ms). */
export function frameStats(ts: readonly number[], speedPx: number, maxRows: number): ScrollRun {
  const dts: number[] = [];
  for (let i = 1; i < ts.length; i++) dts.push(ts[i]! - ts[i - 1]!);
  const seconds = ts.length > 1 ? (ts.at(-1)! - ts[0]!) / 1000 : 0;
  const frame = 1000 / 60;
  const dropped = dts.reduce((n, d) => n + Math.max(0, Math.round(d / frame) - 1), 0);
  return {
    speedPx,
    frames: dts.length,
    seconds,
    fps: seconds > 0 ? dts.length / seconds : Number.NaN,
    frameMs: { p50: percentile(dts, 50), p95: percentile(dts, 95), p99: percentile(dts, 99), max: dts.length ? Math.max(...dts) : Number.NaN },
    dropped,
    maxRows,
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const spread = (v: readonly number[]) => (v.length ? `${fmtMs(Math.min(...v))}–${fmtMs(Math.max(...v))} (n=${v.length})` : '–');

function timed(label: string, v: readonly number[] | undefined, limit: number): string[] {
  const p50 = v?.length ? median(v) : Number.NaN;
  return [label, v?.length ? `${fmtMs(p50)} ms` : '–', spread(v ?? []), `≤ ${limit.toLocaleString('en-US')} ms`, verdict(p50, limit, 'atMost')];
}

function scrollRow(label: string, s: ScrollRun | undefined, judged: boolean): string[] {
  if (!s) return [label, '–', '–', judged ? `${APP_TARGETS.fps} fps` : '(informative)', '–'];
  const figures = `${s.fps.toFixed(1)} fps`;
  const detail = `frame p50 ${fmtMs(s.frameMs.p50)} ms, p95 ${fmtMs(s.frameMs.p95)}, p99 ${fmtMs(s.frameMs.p99)}, max ${fmtMs(s.frameMs.max)}; ${s.dropped} of ${s.frames + s.dropped} frames dropped; ${s.speedPx} px a frame, ${s.seconds.toFixed(1)} s; ≤ ${s.maxRows} rows in the DOM`;
  const ok = s.frames > 0 && s.dropped <= DROPPED_SHARE * (s.frames + s.dropped);
  return [label, figures, detail, judged ? `${APP_TARGETS.fps} fps (≤ ${DROPPED_SHARE * 100}% dropped)` : '(informative)', judged ? (ok ? 'met' : 'NOT met') : '–'];
}

/** The web app section of the bench report (empty when no app scenario ran). */
export function renderApp(rec: AppRecord | undefined): string[] {
  if (!rec) return [];
  const c = rec.counts;
  const lines = [
    '### The web app in Chromium',
    '',
    `One account of ${rec.todos.toLocaleString('en-US')} to-dos in ${rec.projects} projects (${c.anytime} open undated, ${c.dated} dated, ${c.someday} someday, ${c.completed} completed; seeded in ${rec.seedSeconds.toFixed(1)} s)` +
      `${rec.anytimeRows !== undefined ? `; Anytime shows ${rec.anytimeRows} rows` : ''}. ` +
      `Headless ${rec.chromium ?? 'Chromium (not found)'} through playwright-core, ${rec.viewport.width}×${rec.viewport.height}, on loopback against the same Cairn process; ` +
      'the built app (dist/app). Times are taken in the page (performance.now(), checked every animation frame): a load from navigation start to Today interactive ' +
      '(its heading, the quick-entry box and its first row rendered, nothing loading); a switch from the click on Anytime in the sidebar to its first rows; ' +
      'quick entry from the submit to the row in Today. Each switch and quick entry sample follows a fresh load of the page (nothing cached in the app).',
    '',
    markdownTable(
      ['figure', 'p50', 'spread', 'target', 'verdict'],
      [
        timed('first load of /app to Today interactive, cold cache (new context)', rec.load?.cold, APP_TARGETS.coldMs),
        timed('first load of /app to Today interactive, warm (same context, next load)', rec.load?.warm, APP_TARGETS.warmMs),
        timed('switching views: click Anytime → its rows visible', rec.switchMs, APP_TARGETS.switchMs),
        timed('quick entry: submit → the row visible in Today', rec.quickMs, APP_TARGETS.quickMs),
        scrollRow(`scrolling Anytime (${rec.anytimeRows ?? '?'} rows, every page loaded)`, rec.scroll?.loaded, true),
        scrollRow('the first scroll of Anytime (its pages load on the way)', rec.scroll?.first, false),
        ...(rec.scroll?.idle ? [scrollRow('control: the same page, not scrolling, 600 frames', rec.scroll.idle, false)] : []),
        rec.js
          ? ['JavaScript shipped for the first view, gzip', kb(rec.js.gzip), `brotli ${kb(rec.js.br)}, raw ${kb(rec.js.raw)}; ${rec.js.files.map((f) => `${f.name} ${kb(f.gzip)}`).join(', ')}`, `≤ ${kb(APP_TARGETS.jsGzipBytes)}`, verdict(rec.js.gzip, APP_TARGETS.jsGzipBytes, 'atMost')]
          : ['JavaScript shipped for the first view, gzip', '–', '–', `≤ ${kb(APP_TARGETS.jsGzipBytes)}`, '–'],
      ],
      ['l', 'r', 'l', 'l', 'l'],
    ),
    '',
  ];
  for (const e of rec.errors) lines.push(`- ${e.id}: ERROR ${e.reason}`);
  if (rec.cspErrors.length || rec.pageErrors.length) lines.push(`- Chromium reported ${rec.cspErrors.length} CSP violations and ${rec.pageErrors.length} page errors: ${[...rec.cspErrors, ...rec.pageErrors].slice(0, 3).join(' / ')}`);
  if (rec.errors.length || rec.cspErrors.length || rec.pageErrors.length) lines.push('');
  return lines;
}
