// The web app at /app (issue 32; docs/app.md): the HTML shell, its script and stylesheet under
// cache-busted names, gzip and brotli, the web app manifest, its icons and the service worker
// (docs/app.md "Installable and offline"), and the public `/.well-known/cairn` that tells a client
// whether sign-up is on. The browser code is app/src/ (React on the project's typed client,
// client/index.ts); this file only serves it. `npm run build` (and prestart) writes dist/app/;
// when that is absent (tests, `npm run dev`) the same esbuild call bundles in memory once, on the
// first request, as the console did (rest/console/bundle.ts before it).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
 * `sw` is the service worker (app/src/sw.ts) without the list of what it caches: the names carry
 * hashes, so serving prepends `var CAIRN_SHELL = {…};` (appAssets below).
 */
type Bundle = { js: string; css: string; sw: string };

export function bundleApp(root = rootDir()): Bundle {
  // Loaded only when bundling: a built server serving dist/app/ never loads esbuild.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const build = (entry: string) =>
    buildSync({
      entryPoints: [path.join(root, 'app', 'src', entry)],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      jsx: 'automatic',
      minify: true,
      write: false,
      outdir: path.join(root, 'dist', 'app'),
      define: { 'process.env.NODE_ENV': '"production"' },
      legalComments: 'none',
      logLevel: 'silent',
    }).outputFiles;
  const out = build('main.tsx');
  const js = out.find((f) => f.path.endsWith('.js'))!.text;
  const css = out.find((f) => f.path.endsWith('.css'))?.text ?? '';
  const sw = build('sw.ts').find((f) => f.path.endsWith('.js'))!.text;
  return { js, css, sw };
}

const BUILT = ['main.js', 'main.css', 'sw.js'] as const;

/** For scripts/build-app.mjs (via the compiled module): writes dist/app/main.js, main.css and sw.js. */
export function writeAppBundle(root = rootDir()): string {
  const dir = path.join(root, 'dist', 'app');
  mkdirSync(dir, { recursive: true });
  const b = bundleApp(root);
  writeFileSync(path.join(dir, 'main.js'), b.js);
  writeFileSync(path.join(dir, 'main.css'), b.css);
  writeFileSync(path.join(dir, 'sw.js'), b.sw);
  return dir;
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

function asset(base: string, ext: string, type: string, content: string | Buffer): Asset {
  const raw = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 12);
  if (typeof content !== 'string') return { name: `${base}.${hash}.${ext}`, type, raw };
  return {
    name: `${base}.${hash}.${ext}`,
    type,
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
  };
}

type AppAssets = {
  js: Asset;
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

/** The bundle (built or in memory), compressed once per process, under names that carry their hash. */
export function appAssets(): AppAssets {
  if (assets) return assets;
  const dir = path.join(rootDir(), 'dist', 'app');
  const built = import.meta.url.includes('/dist/') && BUILT.every((f) => existsSync(path.join(dir, f)));
  const b: Bundle = built
    ? { js: readFileSync(path.join(dir, 'main.js'), 'utf8'), css: readFileSync(path.join(dir, 'main.css'), 'utf8'), sw: readFileSync(path.join(dir, 'sw.js'), 'utf8') }
    : bundleApp();
  const js = asset('app', 'js', 'application/javascript; charset=utf-8', b.js);
  const css = asset('app', 'css', 'text/css; charset=utf-8', b.css);
  const icons = [192, 512].map((n) => asset(`icon-${n}`, 'png', 'image/png', iconPng(n)));
  const manifest = asset('manifest', 'webmanifest', 'application/manifest+json; charset=utf-8', JSON.stringify(webManifest(icons), null, 2));
  const html = asset('index', 'html', 'text/html; charset=utf-8', shell(js.name, css.name, icons[0]!.name));
  // What the worker caches: the shell and the manifest network-first (fixed paths whose content
  // changes with a deploy), the hashed files cache-first. Its cache is named by every hash, the
  // worker's own included, so any change is a new worker with a new cache (app/src/sw.ts).
  const version = createHash('sha256').update([html, manifest, js, css, ...icons].map((a) => a.name).join('\n')).update(b.sw).digest('hex').slice(0, 12);
  const list = {
    cache: `cairn-shell-${version}`,
    network: ['/app', '/app/manifest.webmanifest'],
    hashed: [js, css, ...icons].map((a) => `/app/assets/${a.name}`),
  };
  const sw = asset('sw', 'js', 'application/javascript; charset=utf-8', `var CAIRN_SHELL=${JSON.stringify(list)};\n${b.sw}`);
  assets = { js, css, html, manifest, sw, icons };
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

/** Static markup: no inline script or style; the app mounts into #root. */
function shell(js: string, css: string, icon: string): string {
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
<script src="/app/assets/${js}" defer></script>
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
    const a = appAssets();
    const hit = [a.js, a.css, ...a.icons].find((x) => x.name === req.params.name);
    if (!hit) return next();
    // The name carries the content's hash: a new build is a new name, so this one never changes.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    send(req, res, hit);
  });
  return r;
}
