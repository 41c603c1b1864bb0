// The repository root for the OAuth pages (rest/oauth-pages.ts reads console/authorize.js from it).
// The /app console that used to be bundled here is now the web app's Settings (app/, docs/app.md).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from rest/console/ or dist/rest/console/. */
export function rootDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.resolve(here, '..', '..');
  return path.basename(up) === 'dist' ? path.resolve(up, '..') : up;
}
