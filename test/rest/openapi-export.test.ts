// Issue 28 item 11: `npm run openapi` named a script that did not exist. It runs the command of
// package.json's `openapi` script (scripts/openapi-export.ts) as npm would, and checks that it
// writes exactly the document a server with the same PUBLIC_URL serves at /openapi.json: to
// stdout, or to the file it is given; a wrong environment or an unwritable file exits 1 with one line.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { root, tsx } from '../helpers/process.js';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'cairn-openapi-'));
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** package.json's `openapi` script: `tsx <file>`, run with the project's tsx (what npm runs). */
function exportCommand(): string {
  const script = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.openapi!;
  const m = /^tsx (\S+)$/.exec(script);
  if (!m) throw new Error(`unexpected openapi script: ${script}`);
  return m[1]!;
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No DATA_DIR and no master key: the export needs neither (cwd is a fresh empty directory).
    execFile(tsx, [path.join(root, exportCommand()), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run openapi (scripts/openapi-export.ts)', () => {
  it('the script package.json names exists', () => {
    expect(existsSync(path.join(root, exportCommand()))).toBe(true);
  });

  it('prints the served document to stdout, and writes it to a file when given one', async () => {
    const served = (await call(app, 'GET', '/openapi.json')).body;
    const out = await run([], { PUBLIC_URL: app.url });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual(served);
    expect(served.servers[0].url).toBe(app.url);

    const file = path.join(dir, 'cairn-openapi.json');
    const toFile = await run([file], { PUBLIC_URL: app.url });
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stdout).toBe('');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(served);
    // Nothing else was created where it ran (no data directory, no master key).
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
  }, 60_000);

  it('without PUBLIC_URL its URLs are http://localhost:$PORT, as the server\'s', async () => {
    const out = await run([], { PORT: '18123' });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout).servers[0].url).toBe('http://localhost:18123');
  }, 60_000);

  it('a wrong PUBLIC_URL or an unwritable file exits 1 with one line naming it', async () => {
    const bad = await run([], { PUBLIC_URL: 'not a url' });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/PUBLIC_URL/);
    const nowhere = await run([path.join(dir, 'missing', 'x.json')], {});
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/cannot write .*missing/);
  }, 60_000);
});
