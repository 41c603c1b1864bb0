// Issue 30 "Done means": Debian's vdirsyncer + todoman against a real server process on loopback,
// in temp dirs (their config files written there; todoman's `path` points at vdirsyncer's local
// storage): discover and sync, list, add and complete a to-do the way a user types it, change a
// to-do through /v1, sync again and see the change. Skipped, with the reason printed, only when a
// binary is missing.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call } from '../helpers/http.js';
import { davUser, type DavUser } from './helpers.js';

const run = promisify(execFile);

function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, bin);
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

const missing = ['vdirsyncer', 'todoman'].filter((b) => !which(b));
if (missing.length) console.log(`skipping the vdirsyncer + todoman run: ${missing.join(', ')} not installed (apt-get install vdirsyncer todoman)`);

describe.skipIf(missing.length > 0)('vdirsyncer + todoman', () => {
  let dir: string;
  let server: ServerProcess;
  let u: DavUser;
  let projectId: string;
  let vdirConfig: string;
  let todoConfig: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-vdir-'));
    mkdirSync(path.join(dir, 'data'));
    server = await startServerProcess(path.join(dir, 'data'));
    u = await davUser(server);
    projectId = (await call(server, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Garden' } })).body.id;
    await call(server, 'POST', '/v1/todos', { token: u.session, body: { title: 'Rake leaves', parentId: projectId } });
    vdirConfig = path.join(dir, 'vdirsyncer.conf');
    writeFileSync(
      vdirConfig,
      `[general]
status_path = "${dir}/status/"

[pair cairn]
a = "cairn_local"
b = "cairn_remote"
collections = ["from b"]
metadata = ["displayname"]

[storage cairn_local]
type = "filesystem"
path = "${dir}/calendars/"
fileext = ".ics"

[storage cairn_remote]
type = "caldav"
url = "${server.url}/"
username = "${u.email}"
password = "${u.token}"
item_types = ["VTODO"]
`,
    );
    todoConfig = path.join(dir, 'todoman.py');
    writeFileSync(todoConfig, `path = "${dir}/calendars/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\ncache_path = "${dir}/todoman-cache.sqlite3"\ndefault_list = "Garden"\n`);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ ...process.env, HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir, XDG_CACHE_HOME: dir });
  /** vdirsyncer, answering "y" to its questions (discover asks before creating local collections). */
  function vdirsyncer(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('vdirsyncer', ['-c', vdirConfig, ...args], { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.stdin.end('y\ny\ny\ny\ny\ny\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else reject(new Error(`vdirsyncer ${args.join(' ')} exited ${code}:\n${out}\n${server.output().slice(-3000)}`));
      });
    });
  }
  async function todoman(...args: string[]): Promise<string> {
    try {
      const r = await run('todoman', ['-c', todoConfig, ...args], { env: env(), timeout: 60_000 });
      return r.stdout;
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      throw new Error(`todoman ${args.join(' ')} failed:\n${err.stdout}\n${err.stderr}`);
    }
  }
  const list = async () => JSON.parse(await todoman('--porcelain', 'list', '--status', 'ANY')) as { id: number; summary: string; completed: boolean; list: string }[];

  it('syncs, lists, adds and completes a to-do, sees a change made through /v1', async () => {
    await vdirsyncer('discover', 'cairn');
    await vdirsyncer('metasync');
    await vdirsyncer('sync');
    let tasks = await list();
    expect(tasks.map((t) => t.summary)).toContain('Rake leaves');
    expect(tasks.find((t) => t.summary === 'Rake leaves')!.list).toBe('Garden');

    // What a user types.
    await todoman('new', '-l', 'Garden', 'Buy bulbs');
    const rake = (await list()).find((t) => t.summary === 'Rake leaves')!;
    await todoman('done', String(rake.id));
    await vdirsyncer('sync');
    const onServer = (await call(server, 'GET', `/v1/todos?parent_id=${projectId}`, { token: u.session })).body.data as { id: string; title: string; status: string }[];
    expect(onServer.find((t) => t.title === 'Buy bulbs')?.status).toBe('open');
    expect(onServer.find((t) => t.title === 'Rake leaves')?.status).toBe('completed');

    // A change through /v1 reaches todoman with the next sync.
    const bulbs = onServer.find((t) => t.title === 'Buy bulbs')!;
    await call(server, 'PATCH', `/v1/todos/${bulbs.id}`, { token: u.session, body: { title: 'Buy tulip bulbs' } });
    await vdirsyncer('sync');
    tasks = await list();
    expect(tasks.map((t) => t.summary)).toContain('Buy tulip bulbs');
    expect(tasks.map((t) => t.summary)).not.toContain('Buy bulbs');
  }, 120_000);
});
