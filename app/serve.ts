// The web app at /app (issue 32; docs/app.md): the HTML shell, its script and stylesheet under
// cache-busted names, gzip and brotli, and the public `/.well-known/cairn` that tells a client
// whether sign-up is on. The browser code is app/src/ (React on the project's typed client,
// client/index.ts); this file only serves it. `npm run build` (and prestart) writes dist/app/;
// when that is absent (tests, `npm run dev`) the same esbuild call bundles in memory once, on the
// first request, as the console did (rest/console/bundle.ts before it).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
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

type Bundle = { js: string; css: string };

export function bundleApp(root = rootDir()): Bundle {
  // Loaded only when bundling: a built server serving dist/app/ never loads esbuild.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = buildSync({
    entryPoints: [path.join(root, 'app', 'src', 'main.tsx')],
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
  });
  const js = out.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
  const css = out.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
  return { js, css };
}

/** For scripts/build-app.mjs (via the compiled module): writes dist/app/main.js and main.css. */
export function writeAppBundle(root = rootDir()): string {
  const dir = path.join(root, 'dist', 'app');
  mkdirSync(dir, { recursive: true });
  const b = bundleApp(root);
  writeFileSync(path.join(dir, 'main.js'), b.js);
  writeFileSync(path.join(dir, 'main.css'), b.css);
  return dir;
}

type Asset = { name: string; type: string; raw: Buffer; gzip: Buffer; br: Buffer };

function asset(base: string, ext: string, type: string, text: string): Asset {
  const raw = Buffer.from(text, 'utf8');
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 12);
  return {
    name: `${base}.${hash}.${ext}`,
    type,
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
  };
}

let assets: { js: Asset; css: Asset; html: Asset } | undefined;

/** The bundle (built or in memory), compressed once per process, under names that carry their hash. */
export function appAssets(): { js: Asset; css: Asset; html: Asset } {
  if (assets) return assets;
  const dir = path.join(rootDir(), 'dist', 'app');
  const built = import.meta.url.includes('/dist/') && existsSync(path.join(dir, 'main.js')) && existsSync(path.join(dir, 'main.css'));
  const b: Bundle = built ? { js: readFileSync(path.join(dir, 'main.js'), 'utf8'), css: readFileSync(path.join(dir, 'main.css'), 'utf8') } : bundleApp();
  const js = asset('app', 'js', 'application/javascript; charset=utf-8', b.js);
  const css = asset('app', 'css', 'text/css; charset=utf-8', b.css);
  const html = asset('index', 'html', 'text/html; charset=utf-8', shell(js.name, css.name));
  assets = { js, css, html };
  return assets;
}

/** Static markup: no inline script or style; the app mounts into #root. */
function shell(js: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Cairn</title>
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
  if (ok('br')) {
    res.setHeader('Content-Encoding', 'br');
    body = a.br;
  } else if (ok('gzip')) {
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
  r.get('/app/assets/:name', (req, res, next) => {
    const a = appAssets();
    const hit = [a.js, a.css].find((x) => x.name === req.params.name);
    if (!hit) return next();
    // The name carries the content's hash: a new build is a new name, so this one never changes.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    send(req, res, hit);
  });
  return r;
}
