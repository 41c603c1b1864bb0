// The /app console's script (console/main.ts, browser code on client/index.ts) as one file served
// from this origin. `npm run build` (and so `npm start`'s prestart) writes dist/console/app.js;
// when that file is absent (tests and `npm run dev` run the TypeScript sources), the same esbuild
// call bundles in memory once, on the first request for it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

/** The repository root, from rest/console/ or dist/rest/console/. */
export function rootDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.resolve(here, '..', '..');
  return path.basename(up) === 'dist' ? path.resolve(up, '..') : up;
}

export function bundleConsole(root = rootDir()): string {
  // Loaded only when bundling: a built server serving dist/console/app.js never loads esbuild.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = buildSync({
    entryPoints: [path.join(root, 'console', 'main.ts')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

let cached: string | undefined;

export function consoleScript(): string {
  if (cached) return cached;
  const built = path.join(rootDir(), 'dist', 'console', 'app.js');
  cached = existsSync(built) && import.meta.url.includes('/dist/') ? readFileSync(built, 'utf8') : bundleConsole();
  return cached;
}

/** For scripts/build-console.mjs (via the compiled module): writes dist/console/app.js. */
export function writeConsoleBundle(root = rootDir()): string {
  const file = path.join(root, 'dist', 'console', 'app.js');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bundleConsole(root));
  return file;
}
