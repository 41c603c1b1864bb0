// The web app scenarios of `npm run bench` (issue 32 "Performance"; docs/performance.md "The web
// app in Chromium"): the built app at /app in headless Debian Chromium (playwright-core, as the
// browser tests drive it) against the bench's Cairn process, signed in to the account seed-app.ts
// made (10,000 to-dos, 2,000 of them in Anytime):
//   app-load    first load of /app to Today interactive: cold (a new browser context, empty cache)
//               and warm (the same context, the next load)
//   app-switch  click Anytime in the sidebar → its first rows visible (after a fresh load each time)
//   app-quick   quick entry on Today: submit → the row visible
//   app-scroll  Anytime scrolled programmatically, one step per animation frame: the first scroll
//               (pages load on the way), then the measured one with every page loaded; frame times
//               from requestAnimationFrame
//   app-js      the JavaScript the first view loads (the module entry and its static imports), its gzip (and brotli) size as served
// Times are read in the page (performance.now(), polled every animation frame), so the driver's
// round trips are not in them. The session reaches the page as the app keeps it (localStorage),
// through the context's storage state: never in a URL.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { APP_IDS, frameStats, type AppId, type AppRecord, type AppSeed, type ScrollRun } from './app-report.js';

export { APP_IDS };

export type AppOpts = { samples: number; log: (s: string) => void };

const VIEWPORT = { width: 1280, height: 720 };
/** Pixels scrolled per frame: a quick fling (~3,800 px/s at 60 fps, 1.6 rows a frame). */
const SCROLL_PX = 64;

/** Which app scenarios `--only` selects (all in a full run; none in --quick unless named). */
export function selectedApp(only: RegExp | null, quick: boolean): AppId[] {
  if (only) return APP_IDS.filter((id) => only.test(id));
  return quick ? [] : [...APP_IDS];
}

export function chromiumPath(): string | undefined {
  return [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
}

// In-page functions, sent as source (they run in the page's main world). tsx compiles this file
// with esbuild's keepNames, which wraps inner functions in `__name(…)`: the source is given a
// local `__name` that does nothing.

// The page's globals these functions use (this program's lib has no DOM; declared here only).
type El = {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(sel: string): El | null;
  querySelectorAll(sel: string): ArrayLike<El> & Iterable<El>;
  click(): void;
  form: { requestSubmit(): void } | null;
};
declare const document: El & { documentElement: { scrollHeight: number } };
declare const window: { scrollY: number; innerHeight: number; scrollBy(x: number, y: number): void; scrollTo(x: number, y: number): void };
declare function requestAnimationFrame(cb: (t: number) => void): number;

/** `fn(arg)` as an expression for page.evaluate (evaluated by the driver, which the CSP allows). */
function inPage<A>(fn: (a: A) => unknown, arg?: A): string {
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)}); })()`;
}

/**
 * Waits, checking once every animation frame, for `fn()` to be truthy, and answers it. (Not
 * page.waitForFunction: its predicate is eval'd inside the page, which the app's CSP refuses.)
 */
function until(page: Page, fn: () => unknown): Promise<unknown> {
  return page.evaluate(`new Promise((resolve, reject) => {
    const __name = (f) => f;
    const test = ${fn.toString()};
    let frames = 0;
    const tick = () => {
      const v = test();
      if (v) resolve(v);
      else if (++frames > 3600) reject(new Error('timed out waiting for ' + ${JSON.stringify(fn.name || 'a condition')}));
      else requestAnimationFrame(tick);
    };
    tick();
  })`);
}

/** Today interactive: its heading, the quick-entry box and its first row, nothing loading. */
function todayReady(): number | false {
  const main = document.querySelector('main');
  if (main?.querySelector('h1')?.textContent !== 'Today') return false;
  if (!main.querySelector('input[aria-label="New to-do"]') || main.querySelector('[role=status]')) return false;
  return main.querySelector('ul[aria-label="Today"] li[data-todo] input[type=checkbox]') ? performance.now() : false;
}

/** Clicks a sidebar link and times it to the view's heading and first row. */
function switchTo(a: { href: string; title: string }): Promise<number> {
  const link = document.querySelector(`nav a[href="${a.href}"]`);
  if (!link) throw new Error(`no link ${a.href}`);
  const t0 = performance.now();
  link.click();
  return new Promise((resolve, reject) => {
    let frames = 0;
    const tick = () => {
      const main = document.querySelector('main');
      if (main?.querySelector('h1')?.textContent === a.title && main.querySelector('li[data-todo] input[type=checkbox]')) resolve(performance.now() - t0);
      else if (++frames > 3600) reject(new Error(`${a.title} did not show rows`));
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/** Submits the quick-entry form (already filled) and times it to the row in Today. */
function quickSubmit(title: string): Promise<number> {
  const input = document.querySelector('main input[aria-label="New to-do"]')!;
  const t0 = performance.now();
  input.form!.requestSubmit();
  return new Promise((resolve, reject) => {
    let frames = 0;
    const tick = () => {
      const boxes = document.querySelectorAll('main ul[aria-label="Today"] input[type=checkbox]');
      if ([...boxes].some((b) => b.getAttribute('aria-label') === title)) resolve(performance.now() - t0);
      else if (++frames > 3600) reject(new Error('the row did not show'));
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

type Scrolled = { ts: number[]; maxRows: number; atEnd: boolean; loaded: boolean };

/** Scrolls by `speed` px each animation frame until the end (and, if asked, every page loaded). */
function scrollDown(a: { speed: number; maxFrames: number; untilLoaded: boolean; still?: boolean }): Promise<Scrolled> {
  const ts: number[] = [];
  let maxRows = 0;
  return new Promise((resolve) => {
    const step = (t: number) => {
      ts.push(t);
      const rows = document.querySelectorAll('main li[data-todo]');
      maxRows = Math.max(maxRows, rows.length);
      const last = rows[rows.length - 1];
      const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1;
      const loaded = !document.querySelector('main [role=status]') && !!last && last.getAttribute('aria-setsize') !== '-1' && last.getAttribute('aria-posinset') === last.getAttribute('aria-setsize');
      if ((!a.still && atEnd && (!a.untilLoaded || loaded)) || ts.length >= a.maxFrames) return resolve({ ts, maxRows, atEnd, loaded });
      window.scrollBy(0, a.speed);
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
}

async function loadToday(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  await page.goto(`${url}/app`, { waitUntil: 'commit' });
  return (await until(page, todayReady)) as number;
}

/**
 * The scripts the first view loads: the shell's module entry and the chunks it imports statically,
 * transitively (what runs before Today renders; the chunks `import()` loads when first used, and
 * those the service worker fetches to cache after the load, are not counted). The same definition
 * as test/app/serve.app.test.ts.
 */
async function firstViewScripts(url: string): Promise<string[]> {
  const html = await (await fetch(`${url}/app`)).text();
  const entry = /<script type="module" src="([^"]+)">/.exec(html)?.[1];
  if (!entry) throw new Error('the shell names no module script');
  const seen = new Set<string>();
  const walk = async (u: string): Promise<void> => {
    if (seen.has(u)) return;
    seen.add(u);
    const js = await (await fetch(u)).text();
    for (const m of js.matchAll(/\bimport\s*(?:[^"'();]*?\bfrom\s*)?["'](\.\/[^"']+)["']/g)) await walk(new URL(m[1]!, u).href);
  };
  await walk(new URL(entry, url).href);
  return [...seen];
}

/** Content-Length of an asset as served under an Accept-Encoding (the server compresses once per process). */
async function servedBytes(url: string, encoding: string): Promise<number> {
  const res = await fetch(url, { headers: { 'accept-encoding': encoding } });
  const len = Number(res.headers.get('content-length'));
  await res.arrayBuffer();
  return len;
}

async function anytimeRows(url: string, session: string): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const res = await fetch(`${url}/v1/views/anytime?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${session}` } });
    if (!res.ok) throw new Error(`GET /v1/views/anytime: ${res.status}`);
    const body = (await res.json()) as { groups: { todos: unknown[] }[]; next_cursor: string | null };
    n += body.groups.reduce((k, g) => k + g.todos.length, 0);
    cursor = body.next_cursor ?? undefined;
  } while (cursor);
  return n;
}

/** Runs the selected app scenarios against a running Cairn holding the account seed-app.ts made. */
export async function runApp(ids: AppId[], url: string, seed: AppSeed, o: AppOpts): Promise<AppRecord> {
  const rec: AppRecord = {
    chromium: null,
    viewport: VIEWPORT,
    todos: seed.todos,
    projects: seed.projects,
    counts: seed.counts,
    seedSeconds: seed.seconds,
    errors: [],
    cspErrors: [],
    pageErrors: [],
  };
  const executablePath = chromiumPath();
  if (!executablePath) {
    for (const id of ids) rec.errors.push({ id, reason: 'no chromium (apt-get install chromium, or set CHROMIUM_PATH)' });
    return rec;
  }
  rec.anytimeRows = await anytimeRows(url, seed.session);
  // The server compresses the bundle once per process, on the first request: not part of a load.
  const shell = await (await fetch(`${url}/app`)).text();
  for (const m of shell.matchAll(/(?:src|href)="(\/app\/[^"]+)"/g)) await servedBytes(url + m[1]!, 'br');

  const browser: Browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  rec.chromium = `Chromium ${browser.version()}`;
  const contexts: BrowserContext[] = [];
  const newContext = async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT, storageState: { cookies: [], origins: [{ origin: url, localStorage: [{ name: 'cairn.session', value: seed.session }] }] } });
    contexts.push(ctx);
    return ctx;
  };
  const newPage = async (ctx: BrowserContext) => {
    const page = await ctx.newPage();
    page.on('console', (m) => m.text().includes('Content Security Policy') && rec.cspErrors.push(m.text()));
    page.on('pageerror', (e) => rec.pageErrors.push(String(e)));
    return page;
  };
  const attempt = async (id: AppId, fn: () => Promise<void>) => {
    if (!ids.includes(id)) return;
    try {
      await fn();
    } catch (e) {
      rec.errors.push({ id, reason: e instanceof Error ? e.message.split('\n')[0]! : String(e) });
      o.log(`bench: app: ${id}: ERROR ${rec.errors.at(-1)!.reason}`);
    }
  };

  try {
    // Warm-up, discarded: the server's first reads of the account.
    {
      const ctx = await newContext();
      const page = await newPage(ctx);
      await loadToday(page, url);
      await page.evaluate<number>(inPage(switchTo, { href: '#/anytime', title: 'Anytime' }));
      await ctx.close();
    }

    await attempt('app-load', async () => {
      rec.load = { cold: [], warm: [] };
      for (let i = 0; i < o.samples; i++) {
        const ctx = await newContext();
        const page = await newPage(ctx);
        rec.load.cold.push(await loadToday(page, url));
        rec.load.warm.push(await loadToday(page, url));
        await ctx.close();
      }
      o.log(`bench: app: load cold ${rec.load.cold.map((x) => x.toFixed(0)).join(', ')} ms; warm ${rec.load.warm.map((x) => x.toFixed(0)).join(', ')} ms`);
    });

    await attempt('app-js', async () => {
      const scripts = await firstViewScripts(url);
      const files: { name: string; raw: number; gzip: number; br: number }[] = [];
      for (const s of scripts) {
        files.push({ name: new URL(s).pathname.split('/').pop()!, raw: await servedBytes(s, 'identity'), gzip: await servedBytes(s, 'gzip'), br: await servedBytes(s, 'br') });
      }
      const sum = (k: 'raw' | 'gzip' | 'br') => files.reduce((n, f) => n + f[k], 0);
      rec.js = { files, raw: sum('raw'), gzip: sum('gzip'), br: sum('br') };
      o.log(`bench: app: first view's JavaScript ${(rec.js.gzip / 1024).toFixed(1)} KB gzip (${files.length} files)`);
    });

    const ctx = await newContext();
    const page = await newPage(ctx);

    await attempt('app-switch', async () => {
      rec.switchMs = [];
      for (let i = 0; i < o.samples; i++) {
        await loadToday(page, url);
        rec.switchMs.push(await page.evaluate<number>(inPage(switchTo, { href: '#/anytime', title: 'Anytime' })));
      }
      o.log(`bench: app: switch to Anytime ${rec.switchMs.map((x) => x.toFixed(0)).join(', ')} ms`);
    });

    await attempt('app-quick', async () => {
      rec.quickMs = [];
      for (let i = 0; i < o.samples; i++) {
        await loadToday(page, url);
        const title = `Bench quick entry ${i + 1} ${Date.now().toString(36)}`;
        await page.getByRole('textbox', { name: 'New to-do' }).fill(title);
        rec.quickMs.push(await page.evaluate<number>(inPage(quickSubmit, title)));
      }
      o.log(`bench: app: quick entry ${rec.quickMs.map((x) => x.toFixed(0)).join(', ')} ms`);
    });

    await attempt('app-scroll', async () => {
      await page.goto('about:blank');
      await page.goto(`${url}/app#/anytime`);
      await until(page, () => !!document.querySelector('main li[data-todo]'));
      const run = async (untilLoaded: boolean): Promise<ScrollRun> => {
        await page.evaluate('window.scrollTo(0, 0)');
        await until(page, () => window.scrollY === 0 && !!document.querySelector('main li[data-todo]'));
        const s = await page.evaluate<Scrolled>(inPage(scrollDown, { speed: SCROLL_PX, maxFrames: 20_000, untilLoaded }));
        if (!s.atEnd || (untilLoaded && !s.loaded)) throw new Error(`the scroll stopped after ${s.ts.length} frames before the end of the list`);
        return frameStats(s.ts, SCROLL_PX, s.maxRows);
      };
      const first = await run(true);
      const loaded = await run(false);
      // The control: the same page for 600 frames, not scrolling (what the busy machine drops anyway).
      const still = await page.evaluate<Scrolled>(inPage(scrollDown, { speed: 0, maxFrames: 601, untilLoaded: false, still: true }));
      const idle = frameStats(still.ts, 0, still.maxRows);
      rec.scroll = { first, loaded, idle };
      o.log(`bench: app: scroll ${loaded.fps.toFixed(1)} fps, frame p50 ${loaded.frameMs.p50.toFixed(2)} ms, ${loaded.dropped} dropped of ${loaded.frames + loaded.dropped}; first scroll ${first.fps.toFixed(1)} fps, ${first.dropped} dropped; still ${idle.dropped} dropped of ${idle.frames + idle.dropped}`);
    });
  } finally {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser.close();
  }
  return rec;
}
