// Group commit (routers/middleware/atomic.ts, docs/performance.md "Group commit"): the writes that
// reach atomic() in one event-loop turn run in one IMMEDIATE transaction, each in its own
// savepoint, and commit with one fsync. These prove what that must not change: a failing write
// leaves nothing and takes nothing of the others with it; no promise settles before the commit
// is on disk (seen from a second connection); a transaction SQLite drops fails the whole group
// and keeps nothing; hooks run after the commit; one group is bounded.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { authenticate, type Principal } from '../../routers/auth/credentials.js';
import { GROUP_MAX, groupCommitStats, queueWrite } from '../../routers/middleware/atomic.js';
import { createTodo } from '../../routers/todos/model.js';

let app: TestApp;
let p: Principal;
let userId: string;
let pat: string;
beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  userId = u.userId;
  pat = (await createPat(app, u.session, ['tasks:write', 'tasks:read'])).token;
  p = await authenticate(app.deps, `Bearer ${pat}`);
});
afterAll(() => app.close());

/** A second connection on the same file: it sees only what has been committed. */
function committed<T>(sql: string, ...args: unknown[]): T {
  const db = new Database(path.join(app.dataDir, 'cairn.db'), { readonly: true });
  try {
    return db.prepare(sql).get(...args) as T;
  } finally {
    db.close();
  }
}
const count = (sql: string, ...args: unknown[]) => committed<{ n: number }>(sql, ...args).n;
const ctx = () => ({ deps: app.deps, principal: p, http: { headers: {} as Record<string, string> } });
const create = (title: string) => () => createTodo(app.deps, p, { title } as never);

describe('group commit', () => {
  it('writes queued in one turn commit as one group, and each promise settles only once the group is on disk', async () => {
    const before = groupCommitStats(app.deps);
    const todosBefore = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    const seen: number[] = [];
    const writes = ['g1', 'g2', 'g3'].map((t) =>
      queueWrite(ctx(), create(t)).then((todo) => {
        // Read from another connection when the promise settles: the row must already be committed.
        seen.push(count('SELECT count(*) AS n FROM todos WHERE user_id = ? AND id = ?', userId, todo.id));
        return todo;
      }),
    );
    // Nothing has run yet: the group runs at the end of this turn.
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore);
    const done = await Promise.all(writes);
    expect(done.map((t) => t.title)).toEqual(['g1', 'g2', 'g3']);
    expect(seen).toEqual([1, 1, 1]);
    const after = groupCommitStats(app.deps);
    expect(after.groups - before.groups).toBe(1);
    expect(after.writes - before.writes).toBe(3);
    expect(count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId)).toBeGreaterThanOrEqual(3);
  });

  it('a write that throws rolls back alone: its earlier statements are gone, the others of its group commit', async () => {
    const todosBefore = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    const eventsBefore = count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId);
    const before = groupCommitStats(app.deps);
    const results = await Promise.allSettled([
      queueWrite(ctx(), create('kept 1')),
      queueWrite(ctx(), () => {
        createTodo(app.deps, p, { title: 'rolled back' } as never);
        throw new Error('second step fails');
      }),
      queueWrite(ctx(), create('kept 2')),
    ]);
    expect(groupCommitStats(app.deps).groups - before.groups).toBe(1);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('second step fails'));
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore + 2);
    expect(count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId)).toBe(eventsBefore + 2);
  });

  it('when SQLite drops the transaction mid-group (as SQLITE_FULL or an I/O error does), every write of the group fails and nothing of it is kept', async () => {
    const todosBefore = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    const lost = new Error('the transaction is gone');
    const results = await Promise.allSettled([
      queueWrite(ctx(), create('lost 1')),
      queueWrite(ctx(), () => {
        createTodo(app.deps, p, { title: 'lost 2' } as never);
        // What SQLite does on SQLITE_FULL / SQLITE_IOERR: the whole transaction is rolled back.
        app.deps.db.$client.exec('ROLLBACK');
        throw lost;
      }),
      queueWrite(ctx(), create('never run')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBe(lost);
    expect(app.deps.db.$client.inTransaction).toBe(false);
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore);
    // The next group works.
    const next = await Promise.all([queueWrite(ctx(), create('after 1')), queueWrite(ctx(), create('after 2'))]);
    expect(next).toHaveLength(2);
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore + 2);
  });

  it('afterCommit runs once per group, after the commit, and only for writes that committed', async () => {
    const calls: number[] = [];
    let visible = -1;
    const hook = () => {
      calls.push(1);
      visible = count("SELECT count(*) AS n FROM todos WHERE user_id = ? AND id = 'no-such'", userId);
    };
    const todosBefore = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    const out = await Promise.allSettled([queueWrite(ctx(), create('h1'), hook), queueWrite(ctx(), create('h2'), hook)]);
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(calls).toHaveLength(1);
    expect(visible).toBe(0);
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore + 2);
    const none: number[] = [];
    await expect(
      queueWrite(ctx(), () => {
        throw new Error('refused');
      }, () => none.push(1)),
    ).rejects.toThrow('refused');
    expect(none).toHaveLength(0);
  });

  it(`a group holds at most ${GROUP_MAX} writes; the rest run in the next turn`, async () => {
    const before = groupCommitStats(app.deps);
    const n = GROUP_MAX + 5;
    const done = await Promise.all(Array.from({ length: n }, (_, i) => queueWrite(ctx(), create(`bulk ${i}`))));
    expect(done).toHaveLength(n);
    const after = groupCommitStats(app.deps);
    expect(after.groups - before.groups).toBe(2);
    expect(after.writes - before.writes).toBe(n);
  });

  it('over HTTP: concurrent creates with refusals among them leave exactly the accepted to-dos and their events', async () => {
    const todosBefore = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    const eventsBefore = count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId);
    const bodies = Array.from({ length: 30 }, (_, i) =>
      // Every fifth names a container that does not exist: the model refuses it (422 at /parentId) inside the transaction.
      i % 5 === 2 ? { title: `refused ${i}`, parentId: 'NO-SUCH-PROJECT' } : { title: `http ${i}` },
    );
    const res = await Promise.all(bodies.map((body) => call(app, 'POST', '/v1/todos', { token: pat, body })));
    const ok = res.filter((r) => r.status === 201);
    const refused = res.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual(Array(6).fill(422));
    for (const r of refused) expect(r.body.errors[0].pointer).toBe('/parentId');
    expect(ok).toHaveLength(24);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(24);
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todosBefore + 24);
    expect(count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId)).toBe(eventsBefore + 24);
    for (const r of ok) expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ? AND id = ?', userId, r.body.id)).toBe(1);
  });
});
