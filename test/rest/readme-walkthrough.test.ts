// Issue 28 item 12: the README's curl walk-through, exactly as written, run again and again
// against a real server process with the real rate limits (CAIRN_RATE_LIMIT_FACTOR=1). Before,
// each run created a personal token; an account may create 10 a day, revoked ones included, so
// around the tenth run token creation was refused, the walk-through printed `undefined` and every
// later call was 401. It now keeps its token in ~/.cairn-walkthrough-token and reuses it, prints
// each step's status, and logs its session out. Eleven runs here (one past the daily cap), every
// one answering as the README says; the first starts from a stale token file (another server's).
// Then once more in zsh, when it is installed.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, startServerProcess, type ServerProcess } from '../helpers/process.js';

let server: ServerProcess;
let dataDir: string;
let home: string;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-walk-data-'));
  home = mkdtempSync(path.join(tmpdir(), 'cairn-walk-home-'));
  server = await startServerProcess(dataDir, { CAIRN_RATE_LIMIT_FACTOR: '1' });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** The first ```sh block under "## A walk-through with curl", pointed at the test server. */
function walkThrough(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A walk-through with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no sh block in the walk-through');
  expect(block).toContain('BASE=http://127.0.0.1:8080\n');
  return block.replace('BASE=http://127.0.0.1:8080\n', `BASE=${server.url}\n`);
}

function runIn(shell: string, script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(shell, ['-c', script], { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/** What a run prints, reduced to the status of each step. */
function statuses(out: string): string[] {
  return out
    .trim()
    .split('\n')
    .map((line) => /^(session|token|logout): (\d{3})$/.exec(line)?.slice(1).join(' ') ?? (/ (\d{3})$/.exec(line)?.[1] ?? `?? ${line}`));
}

describe('the README walk-through', () => {
  it('runs eleven times in a row, each run answering as written', async () => {
    const script = walkThrough();
    // A token file left by another server: not accepted here, so the first run makes a new one.
    writeFileSync(path.join(home, '.cairn-walkthrough-token'), 'cairn_pat_from_another_server\n');
    const runs: string[][] = [];
    for (let i = 0; i < 11; i++) {
      const r = await runIn('bash', script);
      expect(r.code, r.out).toBe(0);
      expect(r.out, r.out).not.toMatch(/undefined|Error/);
      runs.push(statuses(r.out));
      if (i === 0) expect(r.out).toMatch(/\{"data":\[\{[^\n]*"name":"Errands"[^\n]*\],"next_cursor":null\} 200/);
    }
    const first = ['session 201', 'token 201', '201', '200', '200', '200', 'logout 204'];
    const later = ['session 200', 'token 200', '200', '200', '200', '200', 'logout 204'];
    expect(runs).toEqual([first, ...Array.from({ length: 10 }, () => later)]);
    // zsh (macOS's shell) runs it too, where it is installed.
    if (existsSync('/usr/bin/zsh')) {
      const z = await runIn('/usr/bin/zsh', `setopt interactive_comments\n${script}`);
      expect(statuses(z.out), z.out).toEqual(later);
    }
    // The kept token is the caller's alone to read.
    expect(statSync(path.join(home, '.cairn-walkthrough-token')).mode & 0o777).toBe(0o600);
  }, 120_000);
});
