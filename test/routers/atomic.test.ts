// Issue 10: atomic() (routers/middleware/atomic.ts) runs a write in one IMMEDIATE transaction and
// first checks that the request's credential still stands, so a write never seals content under a
// data key a concurrent rotation has replaced. These call it with a principal authenticated
// before the rotation, as a request on its way would hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { isBulk, queueWrite, runWrite } from '../../routers/middleware/atomic.js';
import { appRouter } from '../../routers/index.js';
import { createTodo } from '../../routers/todos/model.js';
import { loadConfig, type Config } from '../../core/config.js';
import { openDb, closeDb, WAL_CHECKPOINT_PAGES, WAL_SIZE_LIMIT } from '../../db/client.js';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const todoCount = (userId: string) => (app.deps.db.$client.prepare('SELECT count(*) AS n FROM todos WHERE user_id = ?').get(userId) as { n: number }).n;

describe('atomic()', () => {
  it('refuses (401) a write whose credential a rotation ended after authentication; nothing is written', async () => {
    const u = await registerUser(app, undefined, 'atomic password 1');
    const pat = await createPat(app, u.session, ['tasks:write']);
    const stale = await authenticate(app.deps, `Bearer ${pat.token}`);
    const rot = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: 'atomic password 1' } });
    expect(rot.status).toBe(200);
    const ctx = { deps: app.deps, principal: stale, http: { headers: {} } };
    expect(() => runWrite(ctx, () => createTodo(app.deps, stale, { title: 'under the old key' } as never))).toThrow(
      expect.objectContaining({ problemCode: 'unauthorized' }),
    );
    expect(todoCount(u.userId)).toBe(0);
  });

  it('a write that fails leaves nothing of its earlier statements', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tasks:write']);
    const p = await authenticate(app.deps, `Bearer ${pat.token}`);
    const ctx = { deps: app.deps, principal: p, http: { headers: {} } };
    expect(() =>
      runWrite(ctx, () => {
        createTodo(app.deps, p, { title: 'first' } as never);
        throw new Error('second step fails');
      }),
    ).toThrow('second step fails');
    expect(todoCount(u.userId)).toBe(0);
    expect((app.deps.db.$client.prepare('SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = ?').get(u.userId, 'todo.created') as { n: number }).n).toBe(0);
  });

  it('a bounded write keeps its savepoint journal in memory; a bulk write, and any group holding one, keeps it in a temporary file (db/client.ts smallWrites)', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tasks:write']);
    const p = await authenticate(app.deps, `Bearer ${pat.token}`);
    const ctx = { deps: app.deps, principal: p, http: { headers: {} } };
    const sqlite = app.deps.db.$client;
    // ~60 pages of this user's rows, so a savepoint that changes them all journals more than
    // SQLite's 64 KiB in-memory threshold.
    runWrite(ctx, () => {
      for (let i = 0; i < 400; i++) createTodo(app.deps, p, { title: `journal ${i}`, notes: 'n'.repeat(400) } as never);
    });
    /** SQLite's temporary files open in this process (unlinked, named etilqs_…). */
    const tempFiles = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).includes('etilqs_');
        } catch {
          return false;
        }
      }).length;
    /** A write that changes every page of the user's rows in a savepoint, as the models do; returns the temp files open inside it. */
    const touchAll = () => {
      sqlite.transaction(() => sqlite.prepare('UPDATE todos SET created_at = created_at + 1 WHERE user_id = ?').run(u.userId))();
      return tempFiles();
    };
    expect(tempFiles()).toBe(0);
    expect(await queueWrite(ctx, touchAll)).toBe(0);
    expect(await queueWrite(ctx, touchAll, undefined, true)).toBeGreaterThan(0);
    // Groups (writes queued in one turn): in memory, unless one of them is bulk.
    expect(await Promise.all([queueWrite(ctx, touchAll), queueWrite(ctx, touchAll)])).toEqual([0, 0]);
    const mixed = await Promise.all([queueWrite(ctx, touchAll), queueWrite(ctx, touchAll, undefined, true)]);
    expect(mixed.every((n) => n > 0)).toBe(true);
    // Outside the request path (jobs, key rotation) the connection keeps files.
    expect(sqlite.pragma('temp_store', { simple: true })).toBe(1);
    expect(tempFiles()).toBe(0);
  });

  it('the writes whose size grows with the account are declared bulk', () => {
    const procs = appRouter._def.procedures as unknown as Record<string, { _def: { resolver?: unknown } }>;
    const bulk = Object.entries(procs)
      .filter(([, proc]) => isBulk(proc._def.resolver))
      .map(([name]) => name)
      .sort();
    expect(bulk).toEqual([
      'containers.delete',
      'headings.complete',
      'headings.convert',
      'headings.delete',
      'headings.update',
      'noteFolders.delete',
      'tags.delete',
      'trash.empty',
    ]);
  });
});

describe('durability (CAIRN_DURABILITY, DECISIONS §1)', () => {
  const sync = (c: Config) => {
    const db = openDb(':memory:', { durability: c.durability });
    try {
      return db.$client.pragma('synchronous', { simple: true });
    } finally {
      closeDb(db);
    }
  };
  it('defaults to full (synchronous=FULL: a 2xx is on disk); relaxed opts into NORMAL; anything else is refused', () => {
    expect(loadConfig({}).durability).toBe('full');
    expect(sync(loadConfig({}))).toBe(2);
    expect(sync(loadConfig({ CAIRN_DURABILITY: 'relaxed' }))).toBe(1);
    expect(() => loadConfig({ CAIRN_DURABILITY: 'fast' })).toThrow(/CAIRN_DURABILITY/);
  });

  it('the app under test runs with the default', () => {
    expect(app.deps.config.durability).toBe('full');
    expect(app.deps.db.$client.pragma('synchronous', { simple: true })).toBe(2);
    expect(app.deps.db.$client.pragma('secure_delete', { simple: true })).toBe(1);
  });

  it('checkpoints every WAL_CHECKPOINT_PAGES pages, not every 1,000 as SQLite would (docs/performance.md "Checkpoints")', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-wal-'));
    const db = openDb(path.join(dir, 'c.db'));
    try {
      const sqlite = db.$client;
      expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(WAL_CHECKPOINT_PAGES);
      expect(sqlite.pragma('journal_size_limit', { simple: true })).toBe(WAL_SIZE_LIMIT);
      sqlite.exec('CREATE TABLE filler (b BLOB)');
      const put = sqlite.prepare('INSERT INTO filler (b) VALUES (randomblob(3000))');
      // 1,500 one-page commits: past SQLite's default checkpoint, short of ours.
      for (let i = 0; i < 1_500; i++) put.run();
      const { log } = (sqlite.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!;
      expect(log).toBeGreaterThanOrEqual(1_500);
      expect(log).toBeLessThan(WAL_CHECKPOINT_PAGES);
    } finally {
      closeDb(db);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
