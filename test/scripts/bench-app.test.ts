// The web app scenarios' pure parts (scripts/bench/app-report.ts, app.ts selectedApp): the figures
// in docs/performance.md "The web app in Chromium" are only as right as these.
import { describe, expect, it } from 'vitest';
import { APP_IDS, frameStats, renderApp, type AppRecord } from '../../scripts/bench/app-report.js';

describe('frameStats', () => {
  it('counts frames, fps and the frames a 60 Hz display would have shown but were not painted', () => {
    // 10 frames at 16.7 ms, one at 33.4 ms (one dropped), one at 50 ms (two dropped).
    const ts = [0];
    for (let i = 0; i < 10; i++) ts.push(ts.at(-1)! + 1000 / 60);
    ts.push(ts.at(-1)! + 2000 / 60);
    ts.push(ts.at(-1)! + 3000 / 60);
    const s = frameStats(ts, 64, 44);
    expect(s.frames).toBe(12);
    expect(s.dropped).toBe(3);
    expect(s.seconds).toBeCloseTo(15 / 60, 6);
    expect(s.fps).toBeCloseTo(12 / (15 / 60), 6);
    expect(s.frameMs.p50).toBeCloseTo(1000 / 60, 6);
    expect(s.frameMs.max).toBeCloseTo(50, 6);
    expect(s).toMatchObject({ speedPx: 64, maxRows: 44 });
  });
  it('a steady 60 Hz run drops nothing', () => {
    const ts = Array.from({ length: 601 }, (_, i) => i * (1000 / 60));
    const s = frameStats(ts, 64, 40);
    expect(s.dropped).toBe(0);
    expect(s.fps).toBeCloseTo(60, 6);
  });
});

describe('selectedApp', () => {
  it('selects by --only, all in a full run, none in --quick', async () => {
    const { selectedApp } = await import('../../scripts/bench/app.js');
    expect(selectedApp(/^app-/, false)).toEqual([...APP_IDS]);
    expect(selectedApp(/^app-scroll$/, true)).toEqual(['app-scroll']);
    expect(selectedApp(/^dav-/, false)).toEqual([]);
    expect(selectedApp(null, false)).toEqual([...APP_IDS]);
    expect(selectedApp(null, true)).toEqual([]);
  });
});

describe('renderApp', () => {
  const steady = (n: number) => Array.from({ length: n + 1 }, (_, i) => i * (1000 / 60));
  const base: AppRecord = {
    chromium: 'Chromium 1.2.3',
    viewport: { width: 1280, height: 720 },
    todos: 10_000,
    projects: 40,
    counts: { anytime: 2000, dated: 166, someday: 373, completed: 7461 },
    seedSeconds: 9.5,
    anytimeRows: 2085,
    load: { cold: [900, 800, 1100], warm: [300, 350, 500] },
    switchMs: [100, 160, 170],
    quickMs: [90, 95, 99],
    scroll: { first: frameStats(steady(100), 64, 44), loaded: frameStats(steady(1000), 64, 44) },
    js: { files: [{ name: 'app.abc.js', raw: 500_000, gzip: 160 * 1024, br: 140 * 1024 }], raw: 500_000, gzip: 160 * 1024, br: 140 * 1024 },
    errors: [],
    cspErrors: [],
    pageErrors: [],
  };
  it('judges each figure against its target, on the median', () => {
    const md = renderApp(base).join('\n');
    expect(md).toContain('### The web app in Chromium');
    expect(md).toMatch(/cold cache \(new context\) \| 900 ms \| 800–1100 \(n=3\) \| ≤ 1,000 ms \| met \|/);
    expect(md).toMatch(/warm \(same context, next load\) \| 350 ms .* \| met \|/);
    expect(md).toMatch(/switching views.*\| 160 ms .* \| ≤ 150 ms \| NOT met \|/);
    expect(md).toMatch(/quick entry.*\| 95.0 ms .* \| met \|/);
    expect(md).toMatch(/scrolling Anytime \(2085 rows, every page loaded\) \| 60.0 fps \| frame p50 16.7 ms.*0 of 1000 frames dropped.* \| met \|/);
    expect(md).toMatch(/JavaScript shipped for the first view, gzip \| 160.0 KB .* \| ≤ 150.0 KB \| NOT met \|/);
  });
  it('a scroll dropping more than 1% of its frames misses 60 fps; errors and CSP reports are listed', () => {
    const ts = steady(500);
    for (let i = 0; i < 10; i++) ts.push(ts.at(-1)! + 2000 / 60); // 10 dropped of 520
    const md = renderApp({ ...base, scroll: { first: base.scroll!.first, loaded: frameStats(ts, 64, 44) }, errors: [{ id: 'app-quick', reason: 'boom' }], cspErrors: ['Content Security Policy: x'] }).join('\n');
    expect(md).toMatch(/10 of 520 frames dropped.*\| NOT met \|/);
    expect(md).toContain('- app-quick: ERROR boom');
    expect(md).toContain('1 CSP violations');
  });
  it('is empty when no app scenario ran', () => {
    expect(renderApp(undefined)).toEqual([]);
  });
});
