// Import jobs and key rotation against crashes, on the real server process (test/helpers/process.ts),
// SIGKILLed and restarted on the same DATA_DIR (docs/import.md "Jobs and restarts", "Once"):
//   - a job cut off by a crash reads `interrupted` after the restart (with how far it got); a job
//     that finished before reads `succeeded` with its counts; running the cut-off import again
//     makes only what is missing: no duplicates;
//   - a crash in the middle of a key rotation (the kill comes while the rotation's transaction is
//     writing: the WAL grows with its pages, uncommitted) leaves the old key and every import link
//     under it, and the duplicate check works; after a rotation that completes, it works too.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverPid, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call, registerUser } from '../helpers/http.js';

/** Enough to-dos (with notes) that re-sealing them fills SQLite's page cache (2 MiB) several times over. */
const TASKS = 2500;
const HEADER = 'TYPE,CONTENT,DESCRIPTION,PRIORITY,INDENT,AUTHOR,RESPONSIBLE,DATE,DATE_LANG,TIMEZONE,DURATION,DURATION_UNIT';
const big = [HEADER, ...Array.from({ length: TASKS }, (_, i) => `task,Task number ${i} @batch,${`Notes of task ${i} `.repeat(60).trim()},4,1,Ann (1),,,en,Europe/Paris,,`)].join('\r\n');
const small = [HEADER, 'task,One small task,,4,1,Ann (1),,,en,Europe/Paris,,', 'task,Another small task,,4,1,Ann (1),,,en,Europe/Paris,,'].join('\r\n');

const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-import-restart-'));
const dbFile = path.join(dataDir, 'cairn.db');
let server: ServerProcess;
let user: { session: string; userId: string; email: string; password: string };

beforeAll(async () => {
  server = await startServerProcess(dataDir);
  user = await registerUser(server);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

type Job = { id: string; status: string; done: number; total: number; report: { created: Record<string, number>; existing: Record<string, number> } | null; counts: { created: Record<string, number>; existing: Record<string, number> } | null; finishedAt: string | null };

async function start(token: string, name: string, body: string, dryRun = false): Promise<string> {
  const r = await call(server, 'POST', `/v1/imports?source=todoist&name=${name}${dryRun ? '&dryRun=true' : ''}`, { token, rawBody: body });
  expect(r.status, r.text).toBe(202);
  return r.body.id as string;
}

async function job(token: string, id: string): Promise<Job> {
  const r = await call(server, 'GET', `/v1/imports/${id}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body as Job;
}

/** Polls until `ok(job)` (a wait for a condition, not for a time). */
async function until(token: string, id: string, ok: (j: Job) => boolean): Promise<Job> {
  for (;;) {
    const j = await job(token, id);
    if (ok(j)) return j;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function finished(token: string, id: string): Promise<Job> {
  const j = await until(token, id, (x) => x.status !== 'running');
  expect(j.status, JSON.stringify(j)).toBe('succeeded');
  return j;
}

const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

function todoCount(): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM todos WHERE user_id = ?').pluck().get(user.userId) as number;
  } finally {
    db.close();
  }
}

async function crashAndRestart(): Promise<void> {
  process.kill(serverPid(server), 'SIGKILL');
  await server.exited;
  server = await startServerProcess(dataDir);
}

describe('import jobs across a crash', () => {
  it('a job cut off by a crash reads interrupted after the restart; a finished one keeps its counts; a re-run makes only what is missing', async () => {
    const done = await finished(user.session, await start(user.session, 'Small', small));
    expect(done.counts!.created.todos).toBe(2);

    const cut = await start(user.session, 'Big', big);
    // Killed once it has made some, well before the end.
    const seen = await until(user.session, cut, (j) => j.status !== 'running' || j.done >= 200);
    expect(seen.status).toBe('running');
    await crashAndRestart();
    const made = todoCount() - 2;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThan(TASKS);

    // Marked at the start (server/main.ts), before anyone reads it.
    const db = new Database(dbFile, { readonly: true });
    try {
      expect(db.prepare('SELECT status FROM import_jobs WHERE id = ?').pluck().get(cut)).toBe('interrupted');
    } finally {
      db.close();
    }
    const after = await job(user.session, cut);
    expect(after).toMatchObject({ status: 'interrupted', report: null, counts: null });
    expect(after.done).toBeGreaterThan(0);
    expect(after.done).toBeLessThan(after.total);
    expect(after.finishedAt).not.toBeNull();
    // The job that finished before the crash: its numbers survive, its report (it quotes the file) not.
    expect(await job(user.session, done.id)).toMatchObject({ status: 'succeeded', report: null, counts: { created: { todos: 2 } } });
    // A job id of another account is not found.
    const other = await registerUser(server);
    expect((await call(server, 'GET', `/v1/imports/${cut}`, { token: other.session })).status).toBe(404);

    // Running it again: no duplicates.
    const rerun = await finished(user.session, await start(user.session, 'Big', big));
    expect(rerun.report!.existing.todos).toBe(made);
    expect(rerun.report!.created.todos).toBe(TASKS - made);
    expect(todoCount()).toBe(TASKS + 2);
  }, 180_000);
});

describe('a crash in the middle of a key rotation', () => {
  it('leaves the old key and the links under it: the duplicate check works, and after a completed rotation too', async () => {
    // Quiet WAL: what the rotation writes before its commit is what makes it grow.
    const rw = new Database(dbFile);
    rw.pragma('wal_checkpoint(TRUNCATE)');
    rw.close();
    const wal = `${dbFile}-wal`;
    const walSize = () => {
      try {
        return statSync(wal).size;
      } catch {
        return 0;
      }
    };
    expect(walSize()).toBe(0);

    let answered = false;
    const rotation = call(server, 'POST', '/v1/auth/rotate-key', { token: user.session, body: { password: user.password } }).then(
      (r) => ((answered = true), r),
      () => null,
    );
    // The rotation's transaction spills its re-sealed pages to the WAL once they pass the page
    // cache; 512 KiB of them means it is well under way and far from its commit.
    while (!answered && walSize() < 512 * 1024) await new Promise((r) => setTimeout(r, 1));
    expect(answered, 'the rotation finished before it could be cut off: the account is too small').toBe(false);
    await crashAndRestart();
    expect(await rotation).toBeNull();

    // Rolled back: the old session and key still stand.
    expect((await call(server, 'GET', '/v1/me', { token: user.session })).status).toBe(200);
    const dry = await finished(user.session, await start(user.session, 'Big', big, true));
    expect(dry.report!.existing.todos).toBe(TASKS);
    expect(sum(dry.report!.created)).toBe(0);

    // A rotation that completes: the check still works under the new key.
    const r = await call(server, 'POST', '/v1/auth/rotate-key', { token: user.session, body: { password: user.password } });
    expect(r.status, r.text).toBe(200);
    const token = r.body.token as string;
    const again = await finished(token, await start(token, 'Big', big));
    expect(sum(again.report!.created)).toBe(0);
    expect(again.report!.existing.todos).toBe(TASKS);
    expect(todoCount()).toBe(TASKS + 2);
  }, 180_000);
});
