// prestart: compile only when a source file (or the build config) is newer than the last build,
// so `npm start` stays fast after the first run. Plain Node, no dependencies.
import { readdirSync, statSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stamp = path.join(root, 'dist', '.tsbuildinfo');
const sources = ['server', 'core', 'dav', 'mcp', 'routers', 'db', 'rest', 'client', 'app'];

function newest(dir) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(p));
    else if (/\.(ts|tsx|css)$/.test(p)) latest = Math.max(latest, statSync(p).mtimeMs);
  }
  return latest;
}

const appBundle = path.join(root, 'dist', 'app', 'bundle', 'bundle.json');
// The older of the compiled server and the web app's bundle (either missing: build).
const built = existsSync(stamp) && existsSync(appBundle) ? Math.min(statSync(stamp).mtimeMs, statSync(appBundle).mtimeMs) : 0;
const latest = Math.max(
  ...sources.map((s) => newest(path.join(root, s))),
  ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => statSync(path.join(root, f)).mtimeMs),
);
if (latest > built) {
  // Issue 13 item 4: the first build takes ~15 s; say so instead of sitting silent.
  console.log(built ? 'Building Cairn (sources changed)…' : 'Building Cairn (first start, about 15 s)…');
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  // The web app at /app (app/serve.ts bundles app/src/).
  const c = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-app.mjs')], { stdio: 'inherit' });
  process.exit(c.status ?? 1);
}
