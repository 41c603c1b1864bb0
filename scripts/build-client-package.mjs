// Builds packages/client (`@cairn/client`, issue 28 item 13; docs/client.md): the typed client on
// its own, without the server. Its files are the ones `cairn/client` already ships, taken from the
// server's build (dist/, compiled first when stale): the client's JS and declarations, and the
// router's declarations they name, followed file by file from the entry points. The build fails,
// naming the file, if any of them imports a package the client package does not depend on, so the
// package can never need the server's dependencies. Plain Node, no dependencies.
//
//   node scripts/build-client-package.mjs          (run by `npm pack` in packages/client: prepack)
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const pkgDir = path.join(root, 'packages', 'client');
const out = path.join(pkgDir, 'dist');
const ENTRIES = ['client/index.js', 'client/index.d.ts', 'client/webhooks.js', 'client/webhooks.d.ts'];

function fail(message) {
  console.error(`build-client-package: ${message}`);
  process.exit(1);
}

// 1. The server's build, as `npm start` makes it (compiles only what changed).
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) fail('the build of dist/ failed');

// 2. The package's manifest agrees with the server's: same version, same client dependencies.
const serverPkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const clientPkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
if (clientPkg.version !== serverPkg.version) fail(`packages/client/package.json version ${clientPkg.version} differs from package.json's ${serverPkg.version}`);
const deps = Object.keys(clientPkg.dependencies ?? {});
for (const d of deps) {
  if (clientPkg.dependencies[d] !== serverPkg.dependencies[d]) {
    fail(`packages/client/package.json wants ${d}@${clientPkg.dependencies[d]}, the server ${d}@${serverPkg.dependencies[d]}: keep them equal`);
  }
}

// 3. The files: the entries and every relative file they import, transitively. `import x from`,
// `export … from`, `import("…")` and `import '…'` are followed, in JS and in declarations.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g;
const files = new Set();
const queue = [...ENTRIES];
while (queue.length) {
  const rel = queue.shift();
  if (files.has(rel)) continue;
  const abs = path.join(root, 'dist', rel);
  if (!existsSync(abs)) fail(`dist/${rel} is missing (imported by the client's files)`);
  files.add(rel);
  const text = readFileSync(abs, 'utf8');
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[2];
    if (spec.startsWith('.')) {
      let target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
      // A declaration names `./x.js`: its types are `./x.d.ts`.
      if (rel.endsWith('.d.ts') && target.endsWith('.js')) target = target.replace(/\.js$/, '.d.ts');
      queue.push(target);
    } else {
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (!spec.startsWith('node:') && !deps.includes(name)) {
        fail(`dist/${rel} imports "${spec}", which @cairn/client does not depend on (its dependencies: ${deps.join(', ')})`);
      }
    }
  }
}

// 4. Copied as they are laid out in dist/, so relative imports need no rewriting. Source maps
// stay behind (they point at sources the package does not ship).
rmSync(out, { recursive: true, force: true });
for (const rel of [...files].sort()) {
  const dest = path.join(out, rel);
  mkdirSync(path.dirname(dest), { recursive: true });
  if (rel.endsWith('.js')) writeFileSync(dest, readFileSync(path.join(root, 'dist', rel), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  else cpSync(path.join(root, 'dist', rel), dest);
}
console.log(`packages/client/dist: ${[...files].sort().join(', ')}`);
