// Issue 13 item 5: the package a user installs. A clone's files are packed (prepack builds dist/
// and the declarations), the tarball is installed into a scratch project with a strict tsconfig,
// the server's own dependencies are then removed from it, and docs/client.md's example must
// type-check, compile and run against a live server; a wrong input type must fail to compile,
// naming the field.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

/** The first ```ts block of docs/client.md: the example users copy. */
function docsExample(): string {
  const md = readFileSync(path.join(root, 'docs', 'client.md'), 'utf8');
  const m = /```ts\n([\s\S]*?)```/.exec(md);
  if (!m) throw new Error('docs/client.md has no ts example');
  return m[1]!;
}

describe('cairn/client, packed and installed', () => {
  it('type-checks docs/client.md under a strict tsconfig without the server dependencies, runs it, and refuses a wrong input', async () => {
    // What a clone has (tracked files and new unignored ones), built from scratch by prepack.
    const clone = path.join(work, 'clone');
    const files = run('git', ['ls-files', '--cached', '--others', '--exclude-standard'], root).out.trim().split('\n');
    for (const f of files) {
      if (!f || f.startsWith('node_modules/')) continue;
      try {
        cpSync(path.join(root, f), path.join(clone, f), { recursive: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // deleted but not yet committed
      }
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'));
    const pack = run('npm', ['pack', '--pack-destination', work], clone);
    expect(pack.status, pack.out).toBe(0);
    const tarball = path.join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);

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
    const { token } = await createPat(app, (await registerUser(app)).session, ['tags:write', 'todos:read', 'todos:write']);
    const example = docsExample().replace("'http://127.0.0.1:8080'", JSON.stringify(app.url)).replace("'cairn_pat_…'", JSON.stringify(token));
    writeFileSync(path.join(project, 'client.ts'), example);
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    const good = run(process.execPath, [tsc, '-p', '.'], project);
    expect(good.status, good.out).toBe(0);

    // The compiled example against the live server: three procedures plus the list it prints.
    const ran = await runAsync(process.execPath, [path.join('out', 'client.js')], project);
    expect(ran.status, ran.out).toBe(0);
    expect(ran.out).toContain("[ 'Buy milk 1/1' ]");

    // cairn/webhooks: verifyWebhook compiles without Node's types and checks a vector computed with
    // openssl (test/webhooks/verify.test.ts has the same one).
    const body = '{"id":"evt_0123","type":"todo.created","occurredAt":"2023-11-14T22:13:20.000Z","data":{"object":"todo","id":"A","sub":"U"}}';
    writeFileSync(
      path.join(project, 'hook.ts'),
      "import { verifyWebhook } from 'cairn/webhooks';\n" +
        `const body = ${JSON.stringify(body)};\n` +
        "const sig = 't=1700000000,v1=bdb26ada14a8e77d6ecc6503768912dc5e3b6aa34db0e02a74ffa248db57493e';\n" +
        "const ok = verifyWebhook(['whsec_test_secret_one_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'], { 'x-service-signature': sig }, body, 1700000000000);\n" +
        "const bad = verifyWebhook('whsec_other', { 'x-service-signature': sig }, body, 1700000000000);\n" +
        'console.log(JSON.stringify([ok.valid, bad.valid]));\n',
    );
    writeFileSync(path.join(project, 'tsconfig.hook.json'), JSON.stringify({ compilerOptions, files: ['hook.ts'] }));
    const hook = run(process.execPath, [tsc, '-p', 'tsconfig.hook.json'], project);
    expect(hook.status, hook.out).toBe(0);
    const hookRan = run(process.execPath, [path.join('out', 'hook.js')], project);
    expect(hookRan.out.trim()).toBe('[true,false]');

    // A wrong input type does not compile, and the message names the field.
    writeFileSync(
      path.join(project, 'bad.ts'),
      "import { createCairnClient } from 'cairn/client';\n" +
        "const cairn = createCairnClient({ url: 'http://127.0.0.1:8080' });\n" +
        "const input = { limit: 'twenty' };\n" +
        'await cairn.todos.list.query(input);\n',
    );
    writeFileSync(path.join(project, 'tsconfig.bad.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ['bad.ts'] }));
    const bad = run(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], project);
    expect(bad.status).not.toBe(0);
    expect(bad.out).toMatch(/bad\.ts\(4,30\).*\n.*property 'limit' are incompatible/);
  }, 120_000);
});
