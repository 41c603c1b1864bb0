// The run contract (DECISIONS §1): the real entry points as child processes. The server boots on
// a fresh DATA_DIR (generating the master key, mode 0600), answers /healthz, and shuts down cleanly
// on SIGTERM; the CLI creates users and tokens that the server accepts.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:net';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, constants as zlib } from 'node:zlib';
import { freePort } from './helpers/ports.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';

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

/** The CLI with the password on standard input (a pipe, not a terminal) and no CAIRN_PASSWORD. */
function cliStdin(args: string[], stdin: string) {
  const rest: NodeJS.ProcessEnv = { ...env() };
  delete rest.CAIRN_PASSWORD;
  return spawnSync(tsx, ['server/cli.ts', ...args], { cwd: root, env: rest, input: stdin, encoding: 'utf8' });
}

/** Live credentials by kind, read from the database file. */
function credentialKinds(): Record<string, number> {
  const db = new Database(path.join(dataDir, 'cairn.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT kind, count(*) AS n FROM credentials GROUP BY kind').all() as { kind: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
  } finally {
    db.close();
  }
}

/** Spawns a server command, collecting its output; `listening` resolves at its listening line. */
function startServer(cmd: string, args: string[], cwd: string, port: number, timeoutMs: number) {
  const child = spawn(cmd, args, { cwd, env: { ...env(), PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = { out: '' };
  child.stdout.on('data', (d) => (log.out += d));
  child.stderr.on('data', (d) => (log.out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  const listening = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no listen line: ${log.out}`)), timeoutMs);
    child.stdout.on('data', () => {
      if (log.out.includes(' listening on ')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return { child, log, exited, listening };
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
    // Issue 11: neither `user add` nor `token create` leaves a session behind; the token has its
    // own wrap of the data key, so it works without one (the server test below uses it).
    expect(credentialKinds()).toEqual({ pat: 1 });
    // DECISIONS §8: an app password for CalDAV clients (no scopes given) and a token for /mcp.
    const appPassword = cli(['token', 'create', '--email', 'proc@example.test', '--audience', 'dav', '--name', 'my phone'], 'process password 1');
    expect(appPassword.status, appPassword.stderr).toBe(0);
    expect(JSON.parse(appPassword.stdout)).toMatchObject({ name: 'my phone', audience: 'dav', scopes: ['todos:read', 'todos:write', 'containers:read', 'containers:write'] });
    const mcp = cli(['token', 'create', '--email', 'proc@example.test', '--audience', 'mcp', '--scopes', 'todos:read'], 'process password 1');
    expect(mcp.status, mcp.stderr).toBe(0);
    expect(JSON.parse(mcp.stdout)).toMatchObject({ audience: 'mcp', scopes: ['todos:read'] });
    expect(credentialKinds()).toEqual({ pat: 3 });
    // Issue 33: `export` and `import` are wired into the CLI (docs/import.md).
    const exported = cli(['export', '--email', 'proc@example.test'], 'process password 1');
    expect(exported.status, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ format: 'cairn-export', version: 1 });
    const file = path.join(dataDir, 'export.json');
    writeFileSync(file, exported.stdout);
    const dry = cli(['import', file, '--email', 'proc@example.test', '--from', 'cairn', '--dry-run'], 'process password 1');
    expect(dry.status, dry.stderr).toBe(0);
    // The to-dos as one iCalendar file, through the CalDAV door's serialiser (dav/calendar-ics.ts).
    const ics = cli(['export', '--email', 'proc@example.test', '--format', 'ics'], 'process password 1');
    expect(ics.status, ics.stderr).toBe(0);
    expect(ics.stdout).toMatch(/^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\nPRODID:[^\r]+\r\n[\s\S]*END:VCALENDAR\r\n$/);
    expect(credentialKinds()).toEqual({ pat: 3 });
  });

  // Issue 13 item 1: the rules of POST /v1/auth/register (one schema), refusals as sentences.
  it('the CLI refuses what register refuses, one sentence per problem, and creates nothing', () => {
    const refusals: [string[], string, RegExp][] = [
      [['user', 'add', '--email', 'empty@example.test'], '', /^password: .+$/],
      [['user', 'add', '--email', 'not an email'], 'a long enough password', /^--email: .+$/],
      [['user', 'add', '--email', 'short@example.test'], 'abc', /^password: .+$/],
      [['token', 'create', '--email', 'proc@example.test', '--scopes', 'tags:read,nope'], 'process password 1', /^--scopes: .+$/],
      [['token', 'create', '--email', 'proc@example.test', '--scopes', 'tags:read', '--days', '7'], 'process password 1', /^--days: must be one of 30, 90, 180, 365$/],
    ];
    for (const [args, stdin, line] of refusals) {
      const r = cliStdin(args, stdin);
      expect(r.status, args.join(' ')).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      expect(r.stderr).not.toMatch(/[{[]\s*"/); // no raw validation JSON
      expect(r.stdout).toBe('');
    }
    // Nothing was created: the refused addresses are still free, and no token was made (the
    // three of the test above are all there are).
    expect(credentialKinds()).toEqual({ pat: 3 });
    const ok = cliStdin(['user', 'add', '--email', 'empty@example.test'], 'now a real password\n');
    expect(ok.status, ok.stderr).toBe(0);
    expect(cliStdin(['user', 'add', '--email', 'short@example.test'], 'now a real password').status).toBe(0);
  });

  it('the server starts, serves /healthz and the CLI token, and stops cleanly on SIGTERM', async () => {
    const tok = cli(['token', 'create', '--email', 'proc@example.test', '--scopes', 'tags:read', '--days', '30'], 'process password 1');
    const token = JSON.parse(tok.stdout).token as string;
    const port = await freePort();
    const { child, log, exited, listening } = startServer(tsx, ['server/main.ts'], root, port, 20_000);
    try {
      await listening;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const tags = await fetch(`http://127.0.0.1:${port}/v1/tags`, { headers: { authorization: `Bearer ${token}` } });
      expect(tags.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(log.out).toContain('stopped');
      // The WAL was checkpointed into the main file on close.
      const wal = path.join(dataDir, 'cairn.db-wal');
      expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

/** Whether anything accepts TCP connections on 127.0.0.1:port. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start (issue 13 items 3 and 4)', () => {
  // A copy of the sources without dist/, so this is a first start: it must say it is building,
  // then say where it listens; SIGTERM to the pid a supervisor started (npm's) stops the server.
  it('says it is building, prints one listening line, and stops on SIGTERM to the npm pid; so does the cairn bin', async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'cairn-start-'));
    for (const entry of ['server', 'core', 'dav', 'mcp', 'app', 'routers', 'db', 'rest', 'client', 'console', 'scripts', 'bin', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true });
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
    const port = await freePort();
    const { child, log, exited, listening } = startServer('npm', ['start'], copy, port, 120_000);
    let server = 0;
    try {
      await listening;
      const out = log.out;
      const lines = out.split('\n');
      const building = lines.findIndex((l) => l.startsWith('Building Cairn (first start'));
      const listen = lines.findIndex((l) => l.includes(' listening on '));
      expect(building, out).toBeGreaterThanOrEqual(0);
      expect(listen).toBeGreaterThan(building);
      const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
      expect(JSON.parse(lines[listen]!).msg).toBe(`cairn ${version} listening on http://127.0.0.1:${port}, DATA_DIR ${dataDir}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      // The server process: npm's child (with `exec`, node itself rather than a shell).
      const kids = spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).stdout.trim().split(/\s+/).map(Number);
      expect(kids.length).toBe(1);
      server = kids[0]!;
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(alive(server)).toBe(false);
      expect(await accepting(port)).toBe(false);
      expect(log.out).toContain('"msg":"stopped"');

      // The build compressed the web app's chunks (app/serve.ts writeAppBundle): every file has its
      // .gz and .br beside it, each the file's bytes. One .br is swapped for another valid encoding
      // of the same bytes (brotli quality 1): the server must send the build's, not compress again.
      const bundleDir = path.join(copy, 'dist', 'app', 'bundle');
      const index = JSON.parse(readFileSync(path.join(bundleDir, 'bundle.json'), 'utf8')) as { entry: string; files: string[] };
      for (const f of index.files) {
        const raw = readFileSync(path.join(bundleDir, f));
        expect(gunzipSync(readFileSync(path.join(bundleDir, `${f}.gz`))).equals(raw), f).toBe(true);
        expect(brotliDecompressSync(readFileSync(path.join(bundleDir, `${f}.br`))).equals(raw), f).toBe(true);
      }
      const swapped = brotliCompressSync(readFileSync(path.join(bundleDir, index.entry)), { params: { [zlib.BROTLI_PARAM_QUALITY]: 1 } });
      expect(swapped.equals(readFileSync(path.join(bundleDir, `${index.entry}.br`)))).toBe(false);
      writeFileSync(path.join(bundleDir, `${index.entry}.br`), swapped);

      // The `cairn` bin a supervisor runs: nothing to build now, and it is the server itself.
      const bin = startServer(path.join(copy, 'bin', 'cairn.js'), [], copy, port, 30_000);
      try {
        await bin.listening;
        expect(bin.log.out).not.toContain('Building Cairn');
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
        const served = await new Promise<Buffer>((resolve, reject) => {
          // node:http, not fetch: fetch would decode the body.
          import('node:http').then(({ get }) =>
            get(`http://127.0.0.1:${port}/app/assets/${index.entry}`, { headers: { 'accept-encoding': 'br' } }, (res) => {
              const parts: Buffer[] = [];
              res.on('data', (c: Buffer) => parts.push(c));
              res.on('end', () => (res.headers['content-encoding'] === 'br' ? resolve(Buffer.concat(parts)) : reject(new Error(`content-encoding ${res.headers['content-encoding']}`))));
            }).on('error', reject),
          );
        });
        expect(served.equals(swapped)).toBe(true);
        bin.child.kill('SIGTERM');
        expect(await bin.exited).toBe(0);
        expect(await accepting(port)).toBe(false);
      } finally {
        if (bin.child.exitCode === null) bin.child.kill('SIGKILL');
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      if (server && alive(server)) process.kill(server, 'SIGKILL');
      rmSync(copy, { recursive: true, force: true });
    }
  }, 150_000);
});
