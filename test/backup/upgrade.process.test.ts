// Issue 33 item 5 (docs/operations.md "Upgrades"): a DATA_DIR made by an earlier release's code
// starts under the current code, which migrates it, and serves its data. The earlier code is the
// pinned commit below, extracted with `git archive` into a temporary folder (read-only for the
// repository, unlike `git worktree add`, and the same files) and run with tsx on this checkout's
// node_modules through a symlink: valid because every package in that commit's lock file is in
// today's at the same version and integrity (checked first; `npm ci` there would cost minutes).
// It registers a user, makes a personal token and to-dos, and stops; the current server then
// starts on that directory and serves them to the password and the token.
// Cost: ~1 s to extract, two server starts (~3-5 s each under tsx): about 10-15 s in all.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { root, serverPid, startServerProcess, tsx } from '../helpers/process.js';
import { freePort } from '../helpers/ports.js';
import { call, createPat, registerUser, type Res } from '../helpers/http.js';

/** The earlier release: before core/, the master key check and migrations 0014 onwards. */
const EARLIER = '1b4c97a';

const hasCommit = spawnSync('git', ['cat-file', '-e', `${EARLIER}^{commit}`], { cwd: root }).status === 0;
let scratch: string | undefined;
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

type Lock = { packages: Record<string, { version?: string; integrity?: string }> };

describe.skipIf(!hasCommit)(`upgrade from ${EARLIER}`, () => {
  it('a DATA_DIR made by the earlier code is migrated at start and serves its data', async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cairn-upgrade-'));
    const old = path.join(scratch, 'code');
    const dataDir = path.join(scratch, 'data');
    mkdirSync(old);
    // The old lock's packages must all be in today's, unchanged, for the shared node_modules to be
    // what `npm ci` would have installed there.
    const oldLock = JSON.parse(execFileSync('git', ['show', `${EARLIER}:package-lock.json`], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 })) as Lock;
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as Lock;
    const differ = Object.entries(oldLock.packages).filter(([k, v]) => k !== '' && (lock.packages[k]?.version !== v.version || lock.packages[k]?.integrity !== v.integrity));
    expect(differ.map(([k]) => k)).toEqual([]);
    execFileSync('sh', ['-c', `git archive ${EARLIER} -- . ':!test' ':!docs' ':!scripts' | tar -x -C "${old}"`], { cwd: root });
    symlinkSync(path.join(root, 'node_modules'), path.join(old, 'node_modules'));

    // The earlier server, as `npm run dev` ran it then.
    const port = await freePort();
    const child = spawn(tsx, ['server/main.ts'], {
      cwd: old,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'info', CAIRN_RATE_LIMIT_FACTOR: '1000', CAIRN_MASTER_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', () => / listening on /.test(out) && resolve());
      void exited.then(() => reject(new Error(`the earlier server did not start: ${out}`)));
    });
    const oldApp = { url: `http://127.0.0.1:${port}` };
    const u = await registerUser(oldApp, 'upgrade@example.test', 'upgrade password 1');
    const pat = await createPat(oldApp, u.session, ['todos:read']);
    const titles = ['one', 'two', 'three'];
    for (const title of titles) expect((await call(oldApp, 'POST', '/v1/todos', { token: u.session, body: { title } })).status).toBe(201);
    // Stopped for good (tsx passes SIGTERM to the server it runs) before the new code opens the data.
    const pid = serverPid({ child });
    child.kill('SIGTERM');
    await exited;
    expect(() => process.kill(pid, 0)).toThrow();
    const before = new Database(path.join(dataDir, 'cairn.db'), { readonly: true });
    const oldMigrations = (before.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n;
    before.close();

    // The current server on the same DATA_DIR (with the master.key the earlier one generated).
    const now = await startServerProcess(dataDir, { CAIRN_MASTER_KEY: '' });
    try {
      const login: Res = await call(now, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'upgrade password 1' } });
      expect(login.status).toBe(200);
      for (const token of [login.body.token as string, pat.token]) {
        const list: Res = await call(now, 'GET', '/v1/todos?limit=200', { token });
        expect(list.status).toBe(200);
        expect((list.body.data as { title: string }[]).map((t) => t.title).sort()).toEqual([...titles].sort());
      }
    } finally {
      await now.stop();
    }
    const after = new Database(path.join(dataDir, 'cairn.db'), { readonly: true });
    try {
      const journal = (JSON.parse(readFileSync(path.join(root, 'db/migrations/meta/_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;
      expect((after.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(journal);
      expect(journal).toBeGreaterThan(oldMigrations);
      expect(after.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      after.close();
    }
  }, 120_000);
});
