// The run contract (DECISIONS §1): the real entry points as child processes. The server boots on
// a fresh DATA_DIR (generating the master key, mode 0600), answers /healthz, and shuts down cleanly
// on SIGTERM; the CLI creates users and tokens that the server accepts.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './helpers/ports.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-proc-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const env = () => ({ ...process.env, DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'info' });

function cli(args: string[], password: string) {
  return spawnSync(tsx, ['server/cli.ts', ...args], { cwd: root, env: { ...env(), CAIRN_PASSWORD: password }, encoding: 'utf8' });
}

describe('entry points', () => {
  it('the CLI adds a user and creates a token; a wrong password exits non-zero', () => {
    const add = cli(['user', 'add', '--email', 'proc@example.test'], 'process password 1');
    expect(add.status, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).user.email).toBe('proc@example.test');
    expect(statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    const tok = cli(['token', 'create', '--email', 'proc@example.test', '--scopes', 'tags:read', '--days', '30'], 'process password 1');
    expect(tok.status, tok.stderr).toBe(0);
    expect(JSON.parse(tok.stdout).token).toMatch(/^cairn_pat_/);
    const bad = cli(['login', '--email', 'proc@example.test'], 'wrong password');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('unauthorized');
  });

  it('the server starts, serves /healthz and the CLI token, and stops cleanly on SIGTERM', async () => {
    const tok = cli(['token', 'create', '--email', 'proc@example.test', '--scopes', 'tags:read', '--days', '30'], 'process password 1');
    const token = JSON.parse(tok.stdout).token as string;
    const port = await freePort();
    const child = spawn(tsx, ['server/main.ts'], { cwd: root, env: { ...env(), PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 20_000);
        child.stdout.on('data', () => {
          if (out.includes('cairn listening')) {
            clearTimeout(t);
            resolve();
          }
        });
      });
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const tags = await fetch(`http://127.0.0.1:${port}/v1/tags`, { headers: { authorization: `Bearer ${token}` } });
      expect(tags.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain('stopped');
      // The WAL was checkpointed into the main file on close.
      const wal = path.join(dataDir, 'cairn.db-wal');
      expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
