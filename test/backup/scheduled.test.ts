// Issue 33 item 1 (docs/operations.md "Scheduled backups"; server/jobs/backup.ts): with
// CAIRN_BACKUP_DIR set the server writes a verified backup on schedule (the injected clock decides
// when), never one per restart, keeps the newest CAIRN_BACKUP_KEEP and clears what a crashed run
// left; each backup verifies and holds the writes made before it.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { loadConfig } from '../../core/config.js';
import { verifyBackup } from '../../server/backup.js';
import { backupJobs, backupName, completeBackups, scheduledBackup } from '../../server/jobs/backup.js';
import { JOBS, runJob } from '../../server/jobs/scheduler.js';

let app: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  app = undefined;
  dir = undefined;
});

const HOUR = 3_600_000;

describe('scheduled backups', () => {
  it('reads CAIRN_BACKUP_DIR, CAIRN_BACKUP_EVERY and CAIRN_BACKUP_KEEP; off when the folder is unset', () => {
    expect(loadConfig({}).backup).toBeUndefined();
    expect(loadConfig({ CAIRN_BACKUP_DIR: '/b' }).backup).toEqual({ dir: '/b', everyMs: 24 * HOUR, keep: 7 });
    expect(loadConfig({ CAIRN_BACKUP_DIR: '/b', CAIRN_BACKUP_EVERY: '30m', CAIRN_BACKUP_KEEP: '2' }).backup).toEqual({ dir: '/b', everyMs: 30 * 60_000, keep: 2 });
    expect(() => loadConfig({ CAIRN_BACKUP_DIR: '/b', CAIRN_BACKUP_EVERY: '1w' })).toThrow(/CAIRN_BACKUP_EVERY: a whole number of minutes, hours or days/);
    expect(() => loadConfig({ CAIRN_BACKUP_DIR: '/b', CAIRN_BACKUP_KEEP: '0' })).toThrow(/CAIRN_BACKUP_KEEP/);
    // A 30-day interval is checked hourly: setInterval cannot wait past ~24.8 days.
    expect(backupJobs(loadConfig({ CAIRN_BACKUP_DIR: '/b', CAIRN_BACKUP_EVERY: '30d' }))[0]!.everyMs).toBe(HOUR);
    expect(backupJobs(loadConfig({}))).toEqual([]);
  });

  it('backs up on schedule, not per restart, prunes to KEEP, and each backup verifies and holds the writes before it', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-sched-'));
    app = await startApp({}, { backup: { dir, everyMs: 6 * HOUR, keep: 2 } });
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['todos:read', 'todos:write']);
    const titles: string[] = [];
    const write = async (t: string) => {
      expect((await call(app!, 'POST', '/v1/todos', { token: pat.token, body: { title: t } })).status).toBe(201);
      titles.push(t);
    };
    await write('before the first');
    // What a crashed run leaves: a temporary file (removed) and a database without manifest.
    writeFileSync(path.join(dir, 'cairn-20000101T000000Z.db.tmp-0badf00d'), 'torn');
    expect(await scheduledBackup(app.deps)).toBe(1);
    expect(readdirSync(dir).some((n) => n.includes('.tmp-'))).toBe(false);
    // A restart soon after (the scheduler runs every job at start): no second backup.
    app.clock.advance(HOUR);
    expect(await scheduledBackup(app.deps)).toBe(0);
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      await write(`round ${i}`);
      app.clock.advance(6 * HOUR);
      expect(await scheduledBackup(app.deps)).toBe(1);
      counts.push(titles.length);
    }
    const kept = completeBackups(dir);
    expect(kept).toEqual([backupName(app.clock()), backupName(app.clock() - 6 * HOUR)]);
    expect(readdirSync(dir).sort()).toEqual(kept.flatMap((n) => [n, `${n}.manifest.json`]).sort());
    for (const [i, n] of kept.entries()) {
      const file = path.join(dir, n);
      const r = await verifyBackup(file);
      expect(r.problems).toEqual([]);
      expect(r.manifest!.takenAt).toBe(new Date(app.clock() - i * 6 * HOUR).toISOString());
      expect(r.manifest!.masterKeyIncluded).toBe(false);
      expect(existsSync(`${file}.master.key`)).toBe(false);
      const db = new Database(file, { readonly: true });
      expect((db.prepare('SELECT count(*) AS n FROM todos').get() as { n: number }).n).toBe(counts[counts.length - 1 - i]);
      db.close();
    }
  });

  it('runs through the scheduler as an asynchronous job whose failure is logged, not thrown', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-sched-'));
    // A file where the folder should be: the run fails.
    const notDir = path.join(dir, 'file');
    writeFileSync(notDir, 'x');
    const lines: string[] = [];
    const { Writable } = await import('node:stream');
    app = await startApp({}, { backup: { dir: notDir, everyMs: HOUR, keep: 1 } }, { logStream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) });
    const [job] = backupJobs(app.deps.config);
    const run = runJob(app.deps, job!);
    expect(run).toBeInstanceOf(Promise);
    await run;
    expect(lines.join('')).toMatch(/"job":"backup".*job failed|job failed.*"job":"backup"/);
    expect(JOBS.some((j) => j.name === 'backup')).toBe(false);
  });
});
