// The web app at /app (issue 32; docs/app.md): the HTML shell, its script chunks (ES modules,
// split by esbuild) and stylesheet under cache-busted names, gzip and brotli, the web app manifest, its icons and the service worker
// (docs/app.md "Installable and offline"), and the public `/.well-known/cairn` that tells a client
// whether sign-up is on. The browser code is app/src/ (React on the project's typed client,
// client/index.ts); this file only serves it. `npm run build` (and prestart) writes dist/app/bundle/;
// when that is absent (tests, `npm run dev`) the same esbuild call bundles in memory once, on the
// first request, as the console did (rest/console/bundle.ts before it).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { brotliCompressSync, crc32, deflateSync, gzipSync, constants as zlib } from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';
import type { Deps } from '../routers/deps.js';
import { PAGE_CSP } from '../core/page-csp.js';

/**
 * The console's CSP (rest/oauth-pages.ts OAUTH_CSP), the same string (test/oauth/rules.oauth.test.ts
 * compares them): scripts and styles from this origin only (no inline script or style, no
 * third-party origin), images from this origin, calls to this origin only.
 */
export const APP_CSP = PAGE_CSP;

/** The repository root, from app/ or dist/app/. */
export function rootDir(): string {
  const up = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return path.basename(up) === 'dist' ? path.resolve(up, '..') : up;
}

/**
 * The web app as esbuild writes it: ES modules split into chunks (docs/app.md "Serving"). `files`
 * are every script chunk and the stylesheet under esbuild's content-hashed names (a chunk's name
 * also changes with the names of the chunks it imports, so a name never changes content);
 * `entry` is the script the shell loads, `initial` the entry and the chunks it imports statically
 * (what the first view loads; the rest are loaded by `import()` when first used), `css` the
 * stylesheet. `sw` is the service worker (app/src/sw.ts) without the list of what it caches: the
 * names carry hashes, so serving prepends `var CAIRN_SHELL = {…};` (appAssets below).
 */
type Bundle = { files: BundleFile[]; entry: string; initial: string[]; css: string; sw: string };
/** A chunk or the stylesheet; a build on disk carries it compressed both ways too (writeAppBundle). */
type BundleFile = { name: string; text: string; gzip?: Buffer; br?: Buffer };

/** A built file's name: esbuild's `app.<hash>.js`, `chunk.<hash>.js`, `app.<hash>.css`. */
const NAME = /^(?:app|chunk)\.[0-9A-Z]{8}\.(?:js|css)$/;

export function bundleApp(root = rootDir()): Bundle {
  // Loaded only when bundling: a built server serving dist/app/ never loads esbuild.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const outdir = path.join(root, 'dist', 'app', 'bundle');
  const common = {
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    minify: true,
    write: false,
    absWorkingDir: root,
    outdir,
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  } as const;
  // The app: ES modules, split. Each `import()` in app/src (the Markdown renderer, Settings, the
  // quick-entry parser) starts a chunk, and modules shared by chunks get chunks of their own.
  const app = buildSync({
    ...common,
    entryPoints: [path.join(root, 'app', 'src', 'main.tsx')],
    format: 'esm',
    splitting: true,
    entryNames: 'app.[hash]',
    chunkNames: 'chunk.[hash]',
    metafile: true,
  });
  const nameOf = (p: string) => path.relative(outdir, path.resolve(root, p));
  const files = app.outputFiles.map((f) => ({ name: nameOf(f.path), text: f.text }));
  for (const f of files) if (!NAME.test(f.name)) throw new Error(`app bundle: unexpected output ${f.name}`);
  const outputs = app.metafile.outputs;
  const entryKey = Object.keys(outputs).find((k) => outputs[k]!.entryPoint && k.endsWith('.js'))!;
  const cssKey = outputs[entryKey]!.cssBundle;
  // The first view: the entry and, transitively, what it imports statically.
  const initial = new Set<string>();
  const visit = (k: string) => {
    if (initial.has(k)) return;
    initial.add(k);
    for (const i of outputs[k]!.imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(entryKey);
  // The worker: a classic script (registered without `type: 'module'`), one file.
  const sw = buildSync({ ...common, entryPoints: [path.join(root, 'app', 'src', 'sw.ts')], format: 'iife' }).outputFiles.find((f) => f.path.endsWith('.js'))!.text;
  return { files, entry: nameOf(entryKey), initial: [...initial].map(nameOf), css: cssKey ? nameOf(cssKey) : '', sw };
}

/** The index of a build in dist/app/bundle/: which file is which (Bundle without the texts). */
const INDEX = 'bundle.json';
type Index = { entry: string; initial: string[]; css: string; files: string[] };

/**
 * For scripts/build-app.mjs (via the compiled module): writes the chunks, the stylesheet, sw.js
 * and bundle.json (which is which) to dist/app/bundle/, emptied first so no old chunk lingers.
 */
export function writeAppBundle(root = rootDir()): string {
  const dir = path.join(root, 'dist', 'app', 'bundle');
  rmSync(dir, { recursive: true, force: true });
  // The single-script layout this replaced (dist/app/main.js, main.css, sw.js).
  for (const old of ['main.js', 'main.css', 'sw.js']) rmSync(path.join(root, 'dist', 'app', old), { force: true });
  mkdirSync(dir, { recursive: true });
  const b = bundleApp(root);
  for (const f of b.files) {
    writeFileSync(path.join(dir, f.name), f.text);
    // Compressed here, once, not by each server process: brotli's best quality holds ~13 MB
    // while it works on the bundle's largest chunk (docs/performance.md "Memory").
    const z = compress(Buffer.from(f.text, 'utf8'));
    writeFileSync(path.join(dir, `${f.name}.gz`), z.gzip);
    writeFileSync(path.join(dir, `${f.name}.br`), z.br);
  }
  writeFileSync(path.join(dir, 'sw.js'), b.sw);
  const index: Index = { entry: b.entry, initial: b.initial, css: b.css, files: b.files.map((f) => f.name) };
  // Last: its presence says the build is whole (scripts/build-if-stale.mjs looks at it too).
  writeFileSync(path.join(dir, INDEX), JSON.stringify(index, null, 2));
  return dir;
}

/** A build written by writeAppBundle, or undefined when it is absent or incomplete. */
function readBuilt(dir: string): Bundle | undefined {
  if (!existsSync(path.join(dir, INDEX)) || !existsSync(path.join(dir, 'sw.js'))) return undefined;
  const index = JSON.parse(readFileSync(path.join(dir, INDEX), 'utf8')) as Index;
  const whole = (f: string) => NAME.test(f) && [f, `${f}.gz`, `${f}.br`].every((n) => existsSync(path.join(dir, n)));
  if (!index.files.every(whole)) return undefined;
  return {
    files: index.files.map((name) => ({
      name,
      text: readFileSync(path.join(dir, name), 'utf8'),
      gzip: readFileSync(path.join(dir, `${name}.gz`)),
      br: readFileSync(path.join(dir, `${name}.br`)),
    })),
    entry: index.entry,
    initial: index.initial,
    css: index.css,
    sw: readFileSync(path.join(dir, 'sw.js'), 'utf8'),
  };
}

/**
 * The app's icon, drawn here so no image file or third-party tool is involved: a cairn (three
 * stacked stones) in white on the accent blue of the light theme (style.css `--accent`), full
 * bleed, the stones inside the central 60 % so a mask (a circle, a squircle) never cuts them. A
 * deterministic RGBA PNG: the same bytes every time, so its hashed name only changes with this code.
 */
export function iconPng(size: number): Buffer {
  const bg = [0x1a, 0x5f, 0xb4];
  // Stones as ellipses (centre x, centre y, half width, half height) in units of the side.
  const stones = [
    [0.5, 0.67, 0.25, 0.085],
    [0.5, 0.5, 0.18, 0.075],
    [0.5, 0.355, 0.115, 0.065],
  ] as const;
  // 4×4 samples a pixel (smooth edges), counted a sample row at a time over each stone's span
  // (the stones do not overlap, so counts add up).
  const ss = 4;
  const n = size * ss;
  const hits = new Uint8Array(size * size);
  for (let j = 0; j < n; j++) {
    const v = (j + 0.5) / n;
    const y = Math.floor(j / ss);
    for (const [cx, cy, rx, ry] of stones) {
      const d = (v - cy) / ry;
      if (d * d >= 1) continue;
      const hw = rx * Math.sqrt(1 - d * d);
      for (let k = Math.ceil((cx - hw) * n - 0.5); k <= Math.floor((cx + hw) * n - 0.5); k++) hits[y * size + Math.floor(k / ss)]!++;
    }
  }
  const rows = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    const row = y * (size * 4 + 1);
    rows[row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const a = hits[y * size + x]! / (ss * ss);
      const o = row + 1 + x * 4;
      for (let c = 0; c < 3; c++) rows[o + c] = Math.round(bg[c]! + (255 - bg[c]!) * a);
      rows[o + 3] = 255;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter method, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The theme colours (style.css `--bg`): the window's title bar blends with the page, light and dark. */
export const THEME = { light: '#ffffff', dark: '#17191c' } as const;

/** `gzip`/`br` are absent for a PNG (already deflated): it is always sent as it is. */
type Asset = { name: string; type: string; raw: Buffer; gzip?: Buffer; br?: Buffer };

/** Both encodings at their best settings. */
function compress(raw: Buffer): { gzip: Buffer; br: Buffer } {
  return {
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
  };
}

/**
 * `name`, or without one `<base>.<sha256 prefix>.<ext>`; text is compressed both ways once, unless
 * `pre` brings it compressed already (a build's chunks, read from disk).
 */
function asset(base: string, ext: string, type: string, content: string | Buffer, name?: string, pre?: { gzip?: Buffer; br?: Buffer }): Asset {
  const raw = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  name ??= `${base}.${createHash('sha256').update(raw).digest('hex').slice(0, 12)}.${ext}`;
  if (typeof content !== 'string') return { name, type, raw };
  return { name, type, raw, ...(pre?.gzip && pre.br ? { gzip: pre.gzip, br: pre.br } : compress(raw)) };
}

const JS = 'application/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

type AppAssets = {
  /** The script the shell loads (`<script type="module">`). */
  entry: Asset;
  /** The entry and the chunks it imports statically: what the first view loads (the shell preloads them). */
  initial: Asset[];
  /** What /app/assets/ serves, by name: every chunk (those `import()` loads later too), the stylesheet, the icons. */
  files: Map<string, Asset>;
  css: Asset;
  html: Asset;
  /** `/app/manifest.webmanifest` (its `name` is hashed like the others, but it is served at the fixed path). */
  manifest: Asset;
  /** `/app/sw.js`: the worker with the current names prepended. */
  sw: Asset;
  /** The 192 and 512 pixel PNGs, under hashed names in /app/assets/. */
  icons: Asset[];
};

let assets: AppAssets | undefined;

/**
 * The bundle (built or in memory) under names that carry their hash, compressed: a build's chunks
 * as `npm run build` compressed them, an in-memory bundle's once per process.
 */
export function appAssets(): AppAssets {
  if (assets) return assets;
  const b = (import.meta.url.includes('/dist/') ? readBuilt(path.join(rootDir(), 'dist', 'app', 'bundle')) : undefined) ?? bundleApp();
  const files = new Map(b.files.map((f) => [f.name, asset('', '', f.name.endsWith('.css') ? CSS : JS, f.text, f.name, f)]));
  const entry = files.get(b.entry)!;
  const initial = b.initial.map((n) => files.get(n)!);
  const css = files.get(b.css) ?? asset('app', 'css', CSS, '');
  files.set(css.name, css);
  const icons = [192, 512].map((n) => asset(`icon-${n}`, 'png', 'image/png', iconPng(n)));
  const manifest = asset('manifest', 'webmanifest', 'application/manifest+json; charset=utf-8', JSON.stringify(webManifest(icons), null, 2));
  const html = asset('index', 'html', 'text/html; charset=utf-8', shell(entry.name, initial.slice(1).map((a) => a.name), css.name, icons[0]!.name));
  // What the worker caches: the shell and the manifest network-first (fixed paths whose content
  // changes with a deploy), the hashed files cache-first: every chunk, the ones `import()` loads
  // later too, so the app works offline after its first load. Its cache is named by every hash,
  // the worker's own included, so any change is a new worker with a new cache (app/src/sw.ts).
  const hashed = [...files.values(), ...icons];
  const version = createHash('sha256').update([html, manifest, ...hashed].map((a) => a.name).join('\n')).update(b.sw).digest('hex').slice(0, 12);
  const list = {
    cache: `cairn-shell-${version}`,
    network: ['/app', '/app/manifest.webmanifest'],
    hashed: hashed.map((a) => `/app/assets/${a.name}`),
  };
  const sw = asset('sw', 'js', JS, `var CAIRN_SHELL=${JSON.stringify(list)};\n${b.sw}`);
  for (const i of icons) files.set(i.name, i);
  assets = { entry, initial, files, css, html, manifest, sw, icons };
  return assets;
}

/** The web app manifest (docs/app.md "Installable and offline"). */
function webManifest(icons: Asset[]) {
  return {
    id: '/app',
    name: 'Cairn',
    short_name: 'Cairn',
    description: 'Your to-dos, on your own server.',
    start_url: '/app',
    scope: '/app',
    display: 'standalone',
    // One colour in a manifest; the shell's <meta name="theme-color"> pair follows the system theme.
    theme_color: THEME.light,
    background_color: THEME.light,
    icons: icons.flatMap((a) => {
      const size = /^icon-(\d+)\./.exec(a.name)![1];
      // Full bleed with the drawing in the safe zone: good as it is and under a mask.
      return (['any', 'maskable'] as const).map((purpose) => ({ src: `/app/assets/${a.name}`, sizes: `${size}x${size}`, type: 'image/png', purpose }));
    }),
  };
}

/**
 * Static markup: no inline script or style; the app mounts into #root. The entry is a module
 * script (deferred, like any module); the chunks it imports are preloaded, so they download beside
 * it instead of after it. `script-src 'self'` covers module scripts, preloads and `import()`.
 */
function shell(js: string, preload: string[], css: string, icon: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" media="(prefers-color-scheme: light)" content="${THEME.light}">
<meta name="theme-color" media="(prefers-color-scheme: dark)" content="${THEME.dark}">
<title>Cairn</title>
<link rel="manifest" href="/app/manifest.webmanifest">
<link rel="icon" type="image/png" href="/app/assets/${icon}">
<link rel="apple-touch-icon" href="/app/assets/${icon}">
<link rel="stylesheet" href="/app/assets/${css}">
${preload.map((c) => `<link rel="modulepreload" href="/app/assets/${c}">\n`).join('')}<script type="module" src="/app/assets/${js}"></script>
</head>
<body>
<div id="root"><noscript>Cairn needs JavaScript.</noscript></div>
</body>
</html>`;
}

/** Brotli, then gzip, then identity, as Accept-Encoding allows (q=0 refuses). */
function send(req: Request, res: Response, a: Asset): void {
  const accepted = new Map<string, number>();
  for (const part of String(req.headers['accept-encoding'] ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
    if (name) accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const ok = (n: string) => (accepted.get(n) ?? accepted.get('*') ?? 0) > 0;
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Content-Type', a.type);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  let body = a.raw;
  if (a.br && ok('br')) {
    res.setHeader('Content-Encoding', 'br');
    body = a.br;
  } else if (a.gzip && ok('gzip')) {
    res.setHeader('Content-Encoding', 'gzip');
    body = a.gzip;
  }
  res.setHeader('Content-Length', String(body.length));
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function appRoutes(deps: Deps): Router {
  const r = express.Router();

  // Public, documented in docs/app.md and docs/api.md's neighbours: what a client needs to know
  // before anyone signs in. The app hides its register form when signup is false.
  r.get('/.well-known/cairn', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ signup: deps.config.allowSignup, app: `${deps.config.publicUrl}/app` });
  });

  const page = (req: Request, res: Response) => {
    res.setHeader('Content-Security-Policy', APP_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // The shell names the current hashed assets, so it is never cached.
    res.setHeader('Cache-Control', 'no-store');
    send(req, res, appAssets().html);
  };
  r.get('/app', page);
  r.get('/app/', page);
  // The service worker (app/src/sw.ts): at /app/sw.js its default scope would be /app/, which does
  // not cover the shell at /app; Service-Worker-Allowed lets main.tsx register it for scope /app.
  // no-cache: the browser asks again on every update check, so a deploy is noticed at once. Its own
  // CSP governs what it fetches (connect-src 'self').
  r.get('/app/sw.js', (req, res) => {
    res.setHeader('Content-Security-Policy', APP_CSP);
    res.setHeader('Service-Worker-Allowed', '/app');
    res.setHeader('Cache-Control', 'no-cache');
    send(req, res, appAssets().sw);
  });
  // A fixed address (the installed app keeps it), its content changes with the icons' names.
  r.get('/app/manifest.webmanifest', (req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    send(req, res, appAssets().manifest);
  });
  r.get('/app/assets/:name', (req, res, next) => {
    const hit = appAssets().files.get(req.params.name);
    if (!hit) return next();
    // The name carries the content's hash: a new build is a new name, so this one never changes.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    send(req, res, hit);
  });
  return r;
}
