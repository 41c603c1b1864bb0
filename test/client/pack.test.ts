// Issue 13 item 5: the package a user installs. A clone's files are packed (prepack builds dist/
// and the declarations), the tarball is installed into a scratch project with a strict tsconfig,
// the server's own dependencies are then removed from it, and docs/client.md's example must
// type-check, compile and run against a live server; a wrong input type must fail to compile,
// naming the field.
// Issue 28 item 13: the same for `@cairn/client` (packages/client), the client without the
// server: packed from the same clone, installed with --ignore-scripts into a TypeScript project;
// it brings no server dependency and no install script, and its size and install time are printed.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { createPat, registerUser } from '../helpers/http.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
let app: TestApp;
let work: string;

beforeAll(async () => {
  app = await startApp();
  work = mkdtempSync(path.join(tmpdir(), 'cairn-pack-'));
});
afterAll(async () => {
  await app.close();
  rmSync(work, { recursive: true, force: true });
});

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Like run, but without blocking this process, which serves the live server the child calls. */
function runAsync(cmd: string, args: string[], cwd: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (status) => resolve({ status, out }));
  });
}

/** The first ```ts block of docs/client.md: the example users copy (it imports `@cairn/client`). */
function docsExample(): string {
  const md = readFileSync(path.join(root, 'docs', 'client.md'), 'utf8');
  const m = /```ts\n([\s\S]*?)```/.exec(md);
  if (!m) throw new Error('docs/client.md has no ts example');
  if (!m[1]!.includes("from '@cairn/client'")) throw new Error("docs/client.md's example must import '@cairn/client'");
  return m[1]!;
}

let cloneDir: string | undefined;
/**
 * What a clone has (tracked files and new unignored ones), once per file: both packages are
 * packed from it, so dist/ is built from scratch (by the first prepack) and never in this
 * checkout, where another test may be reading it.
 */
function clone(): string {
  if (cloneDir) return cloneDir;
  const dir = path.join(work, 'clone');
  const files = run('git', ['ls-files', '--cached', '--others', '--exclude-standard'], root).out.trim().split('\n');
  for (const f of files) {
    if (!f || f.startsWith('node_modules/')) continue;
    try {
      cpSync(path.join(root, f), path.join(dir, f), { recursive: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // deleted but not yet committed
    }
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return (cloneDir = dir);
}

/** npm pack of `dir` into a fresh folder; the tarball's path. */
function pack(dir: string, into: string): string {
  mkdirSync(into, { recursive: true });
  const r = run('npm', ['pack', '--pack-destination', into], dir);
  expect(r.status, r.out).toBe(0);
  return path.join(into, readdirSync(into).find((f) => f.endsWith('.tgz'))!);
}

const compilerOptions = {
  target: 'ES2022',
  lib: ['ES2022', 'DOM', 'ESNext.Disposable'],
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  outDir: 'out',
  types: [],
};

/** Bytes of every file under `dir` (symlinks not followed), skipping the named top-level entries. */
function sizeOf(dir: string, skip: string[] = []): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (skip.includes(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += sizeOf(p);
    else total += lstatSync(p).size;
  }
  return total;
}

/** Every installed package under node_modules (nested ones too): name and manifest. */
function installedPackages(nodeModules: string): { name: string; dir: string; manifest: { scripts?: Record<string, string>; gypfile?: boolean } }[] {
  const found: { name: string; dir: string; manifest: { scripts?: Record<string, string>; gypfile?: boolean } }[] = [];
  if (!existsSync(nodeModules)) return found;
  for (const e of readdirSync(nodeModules, { withFileTypes: true })) {
    if (e.name.startsWith('.') || !e.isDirectory()) continue;
    const dirs = e.name.startsWith('@') ? readdirSync(path.join(nodeModules, e.name)).map((n) => path.join(e.name, n)) : [e.name];
    for (const name of dirs) {
      const dir = path.join(nodeModules, name);
      found.push({ name, dir, manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) });
      found.push(...installedPackages(path.join(dir, 'node_modules')));
    }
  }
  return found;
}

/**
 * docs/client.md's example, compiled under a strict tsconfig by `tscPath` and run against the live
 * server; verifyWebhook from `<spec>/webhooks`; a wrong input refused by the compiler, naming
 * the field. `spec`: the package's import name.
 */
async function exercise(project: string, tscPath: string, spec: string): Promise<void> {
  // The npm and tsc runs before this block the event loop (spawnSync) for many seconds, past the
  // server's keep-alive timeout: a pooled socket the server closed meanwhile may be handed to
  // the first request and reset (ECONNRESET) or found closed as the request goes out (undici's
  // UND_ERR_SOCKET, "other side closed"). That request is sent again, once, on a fresh socket.
  const fresh = async <T,>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      const code = (e as { cause?: { code?: string } }).cause?.code;
      if (code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET') throw e;
      return f();
    }
  };
  const { session } = await fresh(() => registerUser(app));
  const { token } = await createPat(app, session, ['tags:write', 'todos:read', 'todos:write']);
  const example = docsExample()
    .replace("from '@cairn/client'", `from '${spec}'`)
    .replace("'http://127.0.0.1:8080'", JSON.stringify(app.url))
    .replace("'cairn_pat_…'", JSON.stringify(token));
  writeFileSync(path.join(project, 'client.ts'), example);
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
  const good = run(process.execPath, [tscPath, '-p', '.'], project);
  expect(good.status, good.out).toBe(0);

  // The compiled example against the live server: three procedures plus the list it prints.
  const ran = await runAsync(process.execPath, [path.join('out', 'client.js')], project);
  expect(ran.status, ran.out).toBe(0);
  expect(ran.out).toContain("[ 'Buy milk 1/1' ]");

  // verifyWebhook compiles without Node's types and checks a vector computed with openssl
  // (test/webhooks/verify.test.ts has the same one).
  const body = '{"id":"evt_0123","type":"todo.created","occurredAt":"2023-11-14T22:13:20.000Z","data":{"object":"todo","id":"A","sub":"U"}}';
  writeFileSync(
    path.join(project, 'hook.ts'),
    `import { verifyWebhook } from '${spec === 'cairn/client' ? 'cairn' : spec}/webhooks';\n` +
      `const body = ${JSON.stringify(body)};\n` +
      "const sig = 't=1700000000,v1=bdb26ada14a8e77d6ecc6503768912dc5e3b6aa34db0e02a74ffa248db57493e';\n" +
      "const ok = verifyWebhook(['whsec_test_secret_one_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'], { 'x-service-signature': sig }, body, 1700000000000);\n" +
      "const bad = verifyWebhook('whsec_other', { 'x-service-signature': sig }, body, 1700000000000);\n" +
      'console.log(JSON.stringify([ok.valid, bad.valid]));\n',
  );
  writeFileSync(path.join(project, 'tsconfig.hook.json'), JSON.stringify({ compilerOptions, files: ['hook.ts'] }));
  const hook = run(process.execPath, [tscPath, '-p', 'tsconfig.hook.json'], project);
  expect(hook.status, hook.out).toBe(0);
  const hookRan = run(process.execPath, [path.join('out', 'hook.js')], project);
  expect(hookRan.out.trim()).toBe('[true,false]');

  // A wrong input type does not compile, and the message names the field.
  writeFileSync(
    path.join(project, 'bad.ts'),
    `import { createCairnClient } from '${spec}';\n` +
      "const cairn = createCairnClient({ url: 'http://127.0.0.1:8080' });\n" +
      "const input = { limit: 'twenty' };\n" +
      'await cairn.todos.list.query(input);\n',
  );
  writeFileSync(path.join(project, 'tsconfig.bad.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ['bad.ts'] }));
  const bad = run(process.execPath, [tscPath, '-p', 'tsconfig.bad.json'], project);
  expect(bad.status).not.toBe(0);
  expect(bad.out).toMatch(/bad\.ts\(4,30\).*\n.*property 'limit' are incompatible/);
}

describe('cairn/client, packed and installed', () => {
  it('type-checks docs/client.md under a strict tsconfig without the server dependencies, runs it, and refuses a wrong input', async () => {
    const tarball = pack(clone(), path.join(work, 'server-pack'));
    const project = path.join(work, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    // --ignore-scripts: the client never loads better-sqlite3, whose native build is not needed here.
    const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], project);
    expect(install.status, install.out).toBe(0);
    // The client's types and code must not need the server's dependencies: take them away.
    for (const dep of ['better-sqlite3', 'express', 'drizzle-orm', 'pino', 'jose', 'trpc-to-openapi', 'zod', 'zod-openapi', 'swagger-ui-express', 'rrule']) {
      rmSync(path.join(project, 'node_modules', dep), { recursive: true, force: true });
    }
    await exercise(project, tsc, 'cairn/client');
  }, 180_000);
});

describe('@cairn/client (packages/client), packed and installed', () => {
  it('installs small, without install scripts or server dependencies, and runs docs/client.md', async () => {
    const serverPkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const tarball = pack(path.join(clone(), 'packages', 'client'), path.join(work, 'client-pack'));
    expect(path.basename(tarball)).toMatch(/^cairn-client-\d+\.\d+\.\d+\.tgz$/);
    const listed = run('tar', ['-tzf', tarball], work).out.trim().split('\n').sort();
    // The package: the client's JS and declarations and the router's declarations, nothing else.
    expect(listed).toEqual([
      'package/README.md',
      'package/dist/client/index.d.ts',
      'package/dist/client/index.js',
      'package/dist/client/webhooks.d.ts',
      'package/dist/client/webhooks.js',
      'package/dist/routers/api-types.d.ts',
      'package/dist/routers/index.d.ts',
      'package/package.json',
    ]);

    // A TypeScript project (it has its compiler; @trpc/client asks for one as a peer).
    const project = path.join(work, 'client-project');
    mkdirSync(project);
    const typescript = JSON.parse(readFileSync(path.join(root, 'node_modules', 'typescript', 'package.json'), 'utf8')).version as string;
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', devDependencies: { typescript } }));
    const started = performance.now();
    const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], project);
    const seconds = (performance.now() - started) / 1000;
    expect(install.status, install.out).toBe(0);

    const installed = installedPackages(path.join(project, 'node_modules'));
    const names = installed.map((p) => p.name);
    expect(names).toContain('@cairn/client');
    // None of the server's own dependencies came along…
    const serverOnly = Object.keys(serverPkg.dependencies).filter((d) => !['@trpc/client', '@trpc/server', 'superjson'].includes(d));
    expect(names.filter((n) => serverOnly.includes(n))).toEqual([]);
    // …and nothing would have run at install without --ignore-scripts: no install script, no
    // native build (a binding.gyp makes npm run node-gyp).
    const scripted = installed.filter(
      (p) => ['preinstall', 'install', 'postinstall', 'prepare'].some((s) => p.manifest.scripts?.[s]) || p.manifest.gypfile || existsSync(path.join(p.dir, 'binding.gyp')),
    );
    expect(scripted.map((p) => p.name)).toEqual([]);
    // Small: everything but the project's own TypeScript (the server's install was 121 MB).
    const bytes = sizeOf(path.join(project, 'node_modules'), ['typescript', '.bin', '.package-lock.json']);
    console.log(`@cairn/client: ${names.filter((n) => n !== 'typescript').sort().join(', ')}; ${(bytes / 1e6).toFixed(1)} MB installed besides typescript; npm install took ${seconds.toFixed(1)} s (typescript included, --prefer-offline)`);
    expect(bytes).toBeLessThan(10e6);

    await exercise(project, path.join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '@cairn/client');
  }, 180_000);
});
