// Issue 11.5 and 11.9 against the real entry point (server/main.ts as a child process): the files
// the server creates are private, and SIGTERM ends the process within its bound even when nobody
// reads its stdout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './helpers/ports.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'cairn-harden-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function start(dataDir: string, port: number, env: Record<string, string> = {}): ChildProcess {
  // node itself, with tsx as a loader: signals (and a SIGKILL on failure) reach the server, not a wrapper.
  return spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code));
  });

/** Waits for the 'cairn <version> listening on' line, reading stdout only until then. */
function listening(child: ChildProcess): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 25_000);
    const onData = (d: Buffer) => {
      out += d;
      if (/cairn \S+ listening on /.test(out)) {
        clearTimeout(t);
        child.stdout!.off('data', onData);
        // From here on nobody reads stdout: the pipe fills once the OS buffer (64 KiB) is full.
        child.stdout!.pause();
        resolve(out);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
  });
}

describe('files on disk are private (issue 11.5)', () => {
  it('a fresh DATA_DIR is 0700 and the database, its WAL files and master.key are 0600', async () => {
    const dataDir = path.join(scratch, 'fresh', 'data');
    const port = await freePort();
    // A permissive umask in the parent, as a careless shell would have.
    const old = process.umask(0o022);
    const child = start(dataDir, port);
    process.umask(old);
    const exited = exitOf(child);
    try {
      await listening(child);
      child.stdout!.resume();
      // A write, so the WAL and shared-memory files exist.
      const reg = await fetch(`http://127.0.0.1:${port}/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'files@example.test', password: 'correct horse battery staple' }),
      });
      expect(reg.status).toBe(201);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const f of ['cairn.db', 'cairn.db-wal', 'cairn.db-shm', 'master.key']) {
        expect({ f, mode: (statSync(path.join(dataDir, f)).mode & 0o777).toString(8) }).toEqual({ f, mode: '600' });
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('the CLI, when it runs first, makes the same private DATA_DIR and files', () => {
    const dataDir = path.join(scratch, 'cli-first', 'data');
    const old = process.umask(0o022);
    const r = spawnSync(path.join(root, 'node_modules', '.bin', 'tsx'), ['server/cli.ts', 'user', 'add', '--email', 'cli-first@example.test'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_PASSWORD: 'cli first password' },
      encoding: 'utf8',
    });
    process.umask(old);
    expect(r.status, r.stderr).toBe(0);
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    for (const f of ['cairn.db', 'master.key']) expect({ f, mode: (statSync(path.join(dataDir, f)).mode & 0o777).toString(8) }).toEqual({ f, mode: '600' });
  });

  it('an existing DATA_DIR readable by others is kept but warned about at start', async () => {
    const dir = mkdtempSync(path.join(scratch, 'open-'));
    chmodSync(dir, 0o755);
    const port = await freePort();
    const child = start(dir, port);
    const exited = exitOf(child);
    try {
      const out = await listening(child);
      expect(out).toContain('DATA_DIR is accessible to other users');
      expect(statSync(dir).mode & 0o777).toBe(0o755);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('shutdown always ends (issue 11.9)', () => {
  it('SIGTERM ends the process within CAIRN_SHUTDOWN_GRACE_MS + 1 s while stdout is a full pipe nobody reads', async () => {
    const grace = 300;
    const port = await freePort();
    const child = start(path.join(scratch, 'stall'), port, { LOG_LEVEL: 'trace', CAIRN_SHUTDOWN_GRACE_MS: String(grace) });
    const exited = exitOf(child);
    try {
      await listening(child);
      // Each request logs its ~8 KB path: 40 of them are five times the pipe's buffer.
      const long = '/x' + 'y'.repeat(8_000);
      for (let i = 0; i < 40; i++) {
        await fetch(`http://127.0.0.1:${port}${long}${i}`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.text(),
          () => undefined, // a server blocked on stdout never answers; the exit bound below decides
        );
      }
      const sent = Date.now();
      child.kill('SIGTERM');
      const bound = grace + 1_000;
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), bound + 4_000))]);
      expect(code).not.toBe('hung');
      // Slack for a busy machine; the old code never exited at all.
      expect(Date.now() - sent).toBeLessThan(bound + 4_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
