// To-dos through the tRPC caller (no HTTP): the same rules with native types, sealing at rest,
// key rotation, and the change and its event committing together.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('to-dos via the caller', () => {
  it('lists with native booleans and the literal null parent', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    const a = await c.todos.create({ title: 'standalone' });
    const b = await c.todos.create({ title: 'in p', parentId: p.id });
    await c.todos.trash({ id: a.id });
    expect((await c.todos.list({ parent_id: 'null' })).data).toEqual([]);
    expect((await c.todos.list({ parent_id: 'null', include_trashed: true })).data.map((t) => t.id)).toEqual([a.id]);
    expect((await c.todos.list({ parent_id: p.id, limit: 1 })).data.map((t) => t.id)).toEqual([b.id]);
    const done = await c.todos.complete({ id: b.id, today: '2026-11-21' });
    expect(done).toMatchObject({ status: 'completed', loggedCopyId: null });
    await expect(c.todos.create({ title: 'x', evening: 'true' as unknown as boolean })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('content is sealed at rest: the row holds relations and times, never the title, tags or dates', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const t = await c.todos.create({ title: 'PlainTitleZq', notes: 'PlainNotesZq', whenDate: '2031-07-04', tags: ['PlainTagZq'] });
    const row = app.deps.db.$client.prepare('SELECT * FROM todos WHERE id = ?').get(t.id) as Record<string, unknown>;
    // parent_key, heading_ref and heading_key are copies of ids and of the heading's sort key (list order).
    expect(Object.keys(row).sort()).toEqual(['created_at', 'heading_id', 'heading_key', 'heading_ref', 'id', 'parent_id', 'parent_key', 'sealed', 'sort_key', 'trashed_at', 'updated_at', 'user_id']);
    const raw = JSON.stringify(row) + (row.sealed as Buffer).toString('latin1');
    for (const s of ['PlainTitleZq', 'PlainNotesZq', '2031-07-04', 'PlainTagZq', 'open']) expect(raw).not.toContain(s);
    const link = app.deps.db.$client.prepare('SELECT * FROM todo_tags WHERE todo_id = ?').all(t.id) as Record<string, unknown>[];
    expect(link).toHaveLength(1);
    expect(Object.keys(link[0]!).sort()).toEqual(['position', 'tag_id', 'todo_id', 'user_id']);
  });

  it('a key rotation re-seals containers, headings and to-dos; everything still reads back', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'Rotated project' });
    const h = await c.headings.create({ projectId: p.id, name: 'Rotated heading' });
    const t = await c.todos.create({ title: 'Rotated todo', headingId: h.id, recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' }, whenDate: '2026-11-21' });
    const before = app.deps.db.$client.prepare('SELECT sealed FROM todos WHERE id = ?').get(t.id) as { sealed: Buffer };
    const { token } = await c.auth.rotateKey({ password: u.password });
    const c2 = app.caller(token);
    const after = app.deps.db.$client.prepare('SELECT sealed FROM todos WHERE id = ?').get(t.id) as { sealed: Buffer };
    expect(after.sealed.equals(before.sealed)).toBe(false);
    expect(await c2.todos.get({ id: t.id })).toMatchObject({ title: 'Rotated todo', headingId: h.id, recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } });
    expect((await c2.headings.get({ id: h.id })).name).toBe('Rotated heading');
    expect((await c2.containers.get({ id: p.id })).name).toBe('Rotated project');
    expect((await c2.todos.complete({ id: t.id })).whenDate).toBe('2026-11-22');
  });

  it('a change and its event commit together: when the outbox write fails, the to-do is not created', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const sqlite = app.deps.db.$client;
    sqlite.exec("CREATE TRIGGER outbox_down BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'outbox down'); END;");
    try {
      await expect(c.todos.create({ title: 'never', tags: ['never-tag'] })).rejects.toThrow();
      await expect(c.containers.create({ kind: 'area', name: 'never' })).rejects.toThrow();
    } finally {
      sqlite.exec('DROP TRIGGER outbox_down');
    }
    expect((await c.todos.list({})).data).toEqual([]);
    expect((await c.containers.list({})).data).toEqual([]);
    expect((await c.tags.list({})).data).toEqual([]);
    expect(eventsOf(app.deps.db, u.userId)).toEqual([]);
  });
});

describe('the to-do list order (container, heading order, heading, sort key, id)', () => {
  it('follows heading moves, to-dos moved into and out of headings, heading delete and convert; pages join up', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    const h1 = await c.headings.create({ projectId: p.id, name: 'one' });
    const h2 = await c.headings.create({ projectId: p.id, name: 'two' });
    const loose = await c.todos.create({ title: 'loose', parentId: p.id });
    const a = await c.todos.create({ title: 'a', headingId: h1.id });
    const b = await c.todos.create({ title: 'b', headingId: h2.id });
    const b2 = await c.todos.create({ title: 'b2', headingId: h2.id });
    const ids = async (q: { parent_id?: string } = { parent_id: p.id }) => (await c.todos.list(q)).data.map((t) => t.title);
    expect(await ids()).toEqual(['loose', 'a', 'b', 'b2']);

    // Moving heading two first moves its to-dos with it.
    await c.headings.update({ id: h2.id, after: null });
    expect(await ids()).toEqual(['loose', 'b', 'b2', 'a']);

    // A to-do moved into heading one, then out of every heading.
    await c.todos.move({ id: b2.id, parentId: p.id, headingId: h1.id });
    expect(await ids()).toEqual(['loose', 'b', 'a', 'b2']);
    await c.todos.move({ id: a.id, parentId: p.id, headingId: null });
    expect(await ids()).toEqual(['loose', 'a', 'b', 'b2']);

    // Paging with a cursor over every order column gives the same sequence.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.todos.list({ parent_id: p.id, limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((t) => t.title));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['loose', 'a', 'b', 'b2']);

    // Deleting heading two: its to-do joins the heading-less ones (after them); convert heading one.
    await c.headings.delete({ id: h2.id });
    expect(await ids()).toEqual(['loose', 'a', 'b', 'b2']);
    const converted = await c.headings.convert({ headingId: h1.id });
    expect(await ids()).toEqual(['loose', 'a', 'b']);
    expect(await ids({ parent_id: converted.subproject.id })).toEqual(['b2']);
    const row = app.deps.db.$client.prepare('SELECT heading_key, heading_ref, parent_key FROM todos WHERE id = ?').get(b2.id);
    expect(row).toEqual({ heading_key: '', heading_ref: '', parent_key: converted.subproject.id });
    expect(loose.id).toBeTruthy();
  });

  it('reads a page from the list index: no sort of the whole account, with or without a cursor or container', async () => {
    // A fresh app: list statements are prepared once per database, and this test watches them being prepared.
    const app = await startApp();
    onTestFinished(() => app.close());
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    for (let i = 0; i < 3; i++) await c.todos.create({ title: `t${i}`, parentId: i ? p.id : null });
    const sqlite = app.deps.db.$client;
    const prepare = sqlite.prepare;
    const seen: string[] = [];
    sqlite.prepare = ((source: string) => {
      if (/^select [\s\S]* from "todos" [\s\S]*order by/i.test(source)) seen.push(source);
      return prepare.call(sqlite, source);
    }) as typeof sqlite.prepare;
    try {
      const first = await c.todos.list({ limit: 1 });
      await c.todos.list({ limit: 1, cursor: first.next_cursor! });
      await c.todos.list({ parent_id: p.id });
      await c.todos.list({ parent_id: 'null' });
    } finally {
      sqlite.prepare = prepare;
    }
    expect(seen).toHaveLength(3); // parent_id=<id> and parent_id=null share one statement
    for (const source of seen) {
      const params = (source.match(/\?/g) ?? []).map(() => 'x');
      const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
      expect(plan).toMatch(/SEARCH todos USING INDEX todos_user_list_order/);
      expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
  });
});
