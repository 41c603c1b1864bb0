// Issue 33 item 1 (docs/operations.md "Backups"): backups of a running server, through SQLite's
// backup API, with real processes (the server: test/helpers/process.ts; the CLI:
// server/cli.ts, which hands them to server/cli-backup.ts). A backup taken while writes keep arriving
// holds every write acknowledged before it started and restores to a server that serves them,
// with integrity_check ok; `backup verify` catches a damaged file; `restore` refuses the
// directory of a running server and a backup from a newer schema; `restore --new-master-key`
// ends sessions while passwords and personal tokens still open the content.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, startServerProcess, tsx, type ServerProcess } from '../helpers/process.js';
import { call, createPat, registerUser, type Res } from '../helpers/http.js';
import { manifestFile, sha256File, takeBackup } from '../../server/backup.js';

let scratch: string;
let server: ServerProcess | undefined;
const servers: ServerProcess[] = [];
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'cairn-backup-'));
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function env(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', ...extra };
  for (const k of ['CAIRN_MASTER_KEY', 'CAIRN_PASSWORD']) if (!(k in extra)) delete e[k];
  return e;
}

/** The CLI, waited for without blocking this process (the server under test keeps answering). */
function cli(dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(tsx, ['server/cli.ts', ...args], { cwd: root, env: env(dataDir, extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

async function start(dataDir: string): Promise<ServerProcess> {
  const s = await startServerProcess(dataDir);
  servers.push(s);
  return s;
}

async function allTodoIds(url: string, token: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const r: Res = await call({ url }, 'GET', `/v1/todos?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    expect(r.status).toBe(200);
    for (const t of r.body.data as { id: string }[]) ids.add(t.id);
    cursor = r.body.next_cursor;
  } while (cursor);
  return ids;
}

function integrity(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

const PASSWORD = 'backup password 1';
let dirA: string;
let owner: { session: string; email: string; pat: string };
let backupFile: string;
let acknowledgedBefore: Set<string>;

describe('backup of a running server under write load', () => {
  it('holds every write acknowledged before it started, verifies, and restores to a server that serves them', async () => {
    dirA = path.join(scratch, 'a');
    server = await start(dirA);
    const u = await registerUser(server, 'backup-owner@example.test', PASSWORD);
    const pat = await createPat(server, u.session, ['todos:read', 'todos:write']);
    owner = { session: u.session, email: u.email, pat: pat.token };

    // Writers: four at a time, until told to stop; every acknowledged id is recorded.
    const acked: string[] = [];
    let stop = false;
    let failures = 0;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const r = await call(server!, 'POST', '/v1/todos', { token: owner.pat, body: { title: `load ${w}-${i}` } });
        if (r.status === 201) acked.push(r.body.id as string);
        else failures++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (acked.length < 150) await new Promise((r) => setImmediate(r));
    acknowledgedBefore = new Set(acked);
    backupFile = path.join(scratch, 'load.db');
    const run = await cli(dirA, ['backup', '--to', backupFile, '--with-master-key']);
    const during = acked.length - acknowledgedBefore.size;
    stop = true;
    await Promise.all(writers);
    expect(run.code, run.stderr).toBe(0);
    expect(failures).toBe(0);
    // Writes really went on while it ran (else this would not test a backup under load).
    expect(during).toBeGreaterThan(0);
    expect(run.stderr).toMatch(/warning: .*load\.db\.master\.key holds the master key/);
    const manifest = JSON.parse(readFileSync(manifestFile(backupFile), 'utf8'));
    expect(manifest).toMatchObject({ format: 'cairn-backup', formatVersion: 1, masterKeyIncluded: true, sha256: await sha256File(backupFile) });
    expect(manifest.schema.tag).toMatch(/^\d{4}_/);
    expect(statSync(backupFile).mode & 0o077).toBe(0);
    expect(statSync(`${backupFile}.master.key`).mode & 0o777).toBe(0o600);

    expect((await cli(dirA, ['backup', 'verify', backupFile])).code).toBe(0);

    const dirB = path.join(scratch, 'b');
    const restored = await cli(dirB, ['restore', backupFile]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(integrity(path.join(dirB, 'cairn.db'))).toBe('ok');
    const b = await start(dirB);
    const ids = await allTodoIds(b.url, owner.pat);
    const missing = [...acknowledgedBefore].filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
    // The restored server signs in with the password (same master key: the email index works).
    expect((await call(b, 'POST', '/v1/auth/login', { body: { email: owner.email, password: PASSWORD } })).status).toBe(200);
    await b.stop();
    expect(integrity(path.join(dirB, 'cairn.db'))).toBe('ok');
  }, 120_000);

  it('restore refuses the directory of a running server and changes nothing', async () => {
    const before = readdirSync(dirA).sort();
    const db = path.join(dirA, 'cairn.db');
    const ino = statSync(db).ino;
    const r = await cli(dirA, ['restore', backupFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/a process has this database open \(a running server\?\)/);
    expect(readdirSync(dirA).sort()).toEqual(before);
    expect(statSync(db).ino).toBe(ino);
    // The server still serves.
    expect((await call(server!, 'GET', '/v1/todos?limit=1', { token: owner.pat })).status).toBe(200);
  }, 60_000);

  it('restore over a stopped server\'s directory keeps the files it replaces in pre-restore-<time>/', async () => {
    await server!.stop();
    const r = await cli(dirA, ['restore', backupFile]);
    expect(r.code, r.stderr).toBe(0);
    const aside = JSON.parse(r.stdout).keptAside as { folder: string; files: string[] };
    expect(path.dirname(aside.folder)).toBe(dirA);
    expect(path.basename(aside.folder)).toMatch(/^pre-restore-\d{8}T\d{6}Z$/);
    expect(aside.files).toContain('cairn.db');
    // The old database, as the server left it, with every write it acknowledged (more than the backup holds).
    const old = new Database(path.join(aside.folder, 'cairn.db'), { readonly: true });
    const n = (old.prepare('SELECT count(*) AS n FROM todos').get() as { n: number }).n;
    old.close();
    expect(n).toBeGreaterThan(acknowledgedBefore.size);
    expect(integrity(path.join(dirA, 'cairn.db'))).toBe('ok');
    // The same key (master.key already there): it starts and serves.
    const again = await start(dirA);
    expect((await allTodoIds(again.url, owner.pat)).size).toBeGreaterThanOrEqual(acknowledgedBefore.size);
    await again.stop();
  }, 60_000);

  it('backup verify catches a damaged file (flipped bytes), and a damaged page even when the manifest is rewritten to match', async () => {
    const bad = path.join(scratch, 'bad.db');
    copyFileSync(backupFile, bad);
    copyFileSync(manifestFile(backupFile), manifestFile(bad));
    // Flip the first bytes of the to-dos table's root page (its b-tree page header): a page that is
    // surely in use, where free space or a free page would hide the damage from integrity_check.
    const probe = new Database(bad, { readonly: true });
    const pageSize = Number(probe.pragma('page_size', { simple: true }));
    const rootpage = (probe.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'todos'").get() as { rootpage: number }).rootpage;
    probe.close();
    const bytes = readFileSync(bad);
    const at = (rootpage - 1) * pageSize;
    for (let i = 0; i < 8; i++) bytes[at + i] = bytes[at + i]! ^ 0xff;
    writeFileSync(bad, bytes);
    const r = await cli(dirA, ['backup', 'verify', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/SHA-256 .* is not the manifest's/);

    // Same damage, manifest "fixed": integrity_check still finds it.
    const m = JSON.parse(readFileSync(manifestFile(bad), 'utf8'));
    m.sha256 = await sha256File(bad);
    writeFileSync(manifestFile(bad), JSON.stringify(m));
    const r2 = await cli(dirA, ['backup', 'verify', bad]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/integrity_check|cannot be read as a SQLite database/);

    // And restore refuses it.
    const r3 = await cli(path.join(scratch, 'never'), ['restore', bad]);
    expect(r3.code).toBe(1);
    expect(existsSync(path.join(scratch, 'never'))).toBe(false);
  }, 60_000);

  it('restore refuses a backup from a newer schema than this Cairn knows', async () => {
    const newer = path.join(scratch, 'newer-src.db');
    copyFileSync(backupFile, newer);
    const src = new Database(newer);
    src.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('future', 4_102_444_800_000);
    const out = path.join(scratch, 'newer.db');
    await takeBackup(src, out);
    src.close();
    const r = await cli(path.join(scratch, 'never2'), ['restore', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/newer than this Cairn knows .*Downgrades are not supported/);
    expect(existsSync(path.join(scratch, 'never2'))).toBe(false);
  }, 60_000);

  it('restore --new-master-key: sessions end, the personal token and (after reindex) the password open the content', async () => {
    // The backup without its key file, as someone who lost master.key has it.
    const keyless = path.join(scratch, 'keyless.db');
    copyFileSync(backupFile, keyless);
    copyFileSync(manifestFile(backupFile), manifestFile(keyless));
    const dirC = path.join(scratch, 'c');
    const refused = await cli(dirC, ['restore', keyless]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/no key here is the one this backup was made with/);
    expect(existsSync(dirC)).toBe(false);

    const r = await cli(dirC, ['restore', keyless, '--new-master-key']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.ended.sessions).toBeGreaterThan(0);
    expect(readFileSync(path.join(dirC, 'master.key'), 'utf8').trim()).not.toBe(readFileSync(`${backupFile}.master.key`, 'utf8').trim());
    const c = await start(dirC);
    // The session made before the backup: ended.
    expect((await call(c, 'GET', '/v1/todos?limit=1', { token: owner.session })).status).toBe(401);
    // The personal token opens the content.
    const ids = await allTodoIds(c.url, owner.pat);
    expect([...acknowledgedBefore].filter((id) => !ids.has(id))).toEqual([]);
    // The email index was keyed by the old key: not found until reindexed with the password.
    expect((await call(c, 'POST', '/v1/auth/login', { body: { email: owner.email, password: PASSWORD } })).status).toBe(401);
    await c.stop();
    const wrong = await cli(dirC, ['restore', 'reindex', '--email', owner.email], { CAIRN_PASSWORD: 'not the password' });
    expect(wrong.code).toBe(1);
    const ok = await cli(dirC, ['restore', 'reindex', '--email', owner.email], { CAIRN_PASSWORD: PASSWORD });
    expect(ok.code, ok.stderr).toBe(0);
    const c2 = await start(dirC);
    const login = await call(c2, 'POST', '/v1/auth/login', { body: { email: owner.email, password: PASSWORD } });
    expect(login.status).toBe(200);
    expect((await allTodoIds(c2.url, login.body.token)).size).toBe(ids.size);
    await c2.stop();
  }, 120_000);
});
