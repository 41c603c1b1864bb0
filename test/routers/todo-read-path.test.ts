// The to-do read path's fast forms (issue 12, docs/performance.md "Read path, 2026-11-23"): the
// list without the live-container clause when the account has no trashed container, the page that
// opens only its own rows, and tag names read with one unordered query and put in the client's
// order per to-do. Each test is the behaviour such a shortcut could break.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { hasTrashedContainer } from '../../routers/containers/live.js';
import { tagsOf } from '../../routers/todos/model.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const ids = (page: { data: { id: string }[] }) => page.data.map((t) => t.id);

describe('to-do list: trashed containers with and without the clause', () => {
  it('hides the to-dos of a trashed project and of its subprojects, and only those; every page agrees', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    // No container at all: the query without the clause.
    const loose = await c.todos.create({ title: 'loose' });
    expect(ids(await c.todos.list({}))).toEqual([loose.id]);
    const area = await c.containers.create({ kind: 'area', name: 'A' });
    const p = await c.containers.create({ kind: 'project', name: 'P', parentId: area.id });
    const s = await c.containers.create({ kind: 'subproject', name: 'S', parentId: p.id });
    const other = await c.containers.create({ kind: 'project', name: 'Other' });
    const inP = await c.todos.create({ title: 'in P', parentId: p.id });
    const inS = await c.todos.create({ title: 'in S', parentId: s.id });
    const inOther = await c.todos.create({ title: 'in Other', parentId: other.id });
    const everyone = [loose.id, inP.id, inS.id, inOther.id].sort();

    const live = async () => {
      const all = await c.todos.list({ limit: 200 });
      // Paged one by one (the cursor's variant of the same query) gives the same rows in the same order.
      const paged: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await c.todos.list({ limit: 1, ...(cursor ? { cursor } : {}) });
        paged.push(...ids(page));
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      expect(paged).toEqual(ids(all));
      return ids(all).sort();
    };

    // Containers, none trashed: nothing hidden.
    expect(hasTrashedContainer(app.deps.db, u.userId)).toBe(false);
    expect(await live()).toEqual(everyone);
    // The subproject alone in the trash: only its to-dos leave.
    await c.containers.trash({ id: s.id });
    expect(hasTrashedContainer(app.deps.db, u.userId)).toBe(true);
    expect(await live()).toEqual([loose.id, inP.id, inOther.id].sort());
    await c.containers.restore({ id: s.id });
    expect(hasTrashedContainer(app.deps.db, u.userId)).toBe(false);
    expect(await live()).toEqual(everyone);
    // The area in the trash: its project and the project's subproject are dead too.
    await c.containers.trash({ id: area.id });
    expect(await live()).toEqual([loose.id, inOther.id].sort());
    // Filters on the live list keep the clause's meaning.
    expect(ids(await c.todos.list({ parent_id: s.id }))).toEqual([]);
    expect(ids(await c.todos.list({ parent_id: other.id }))).toEqual([inOther.id]);
    // include_trashed lists them all, and the to-dos themselves stay readable.
    expect(ids(await c.todos.list({ limit: 200, include_trashed: true })).sort()).toEqual(everyone);
    expect((await c.todos.get({ id: inS.id })).trashedAt).toBeNull();
    await c.containers.restore({ id: area.id });
    expect(await live()).toEqual(everyone);
  });

  it("the probe is per account: another user's trashed container changes nothing here", async () => {
    const a = await registerUser(app);
    const b = await registerUser(app);
    const ca = app.caller(a.session);
    const cb = app.caller(b.session);
    const pa = await ca.containers.create({ kind: 'project', name: 'A project' });
    await ca.containers.trash({ id: pa.id });
    const pb = await cb.containers.create({ kind: 'project', name: 'B project' });
    const tb = await cb.todos.create({ title: 'B todo', parentId: pb.id });
    expect(hasTrashedContainer(app.deps.db, a.userId)).toBe(true);
    expect(hasTrashedContainer(app.deps.db, b.userId)).toBe(false);
    expect(ids(await cb.todos.list({}))).toEqual([tb.id]);
  });
});

describe('to-do list: a page opens only its own rows', () => {
  it('the row after the page (read only to know there is more) is never opened', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const first = await c.todos.create({ title: 'first' });
    const second = await c.todos.create({ title: 'second' });
    // The second row's sealed content no longer opens: a page of one must not touch it.
    app.deps.db.$client.prepare("UPDATE todos SET sealed = sealed || x'00' WHERE id = ?").run(second.id);
    const page = await c.todos.list({ limit: 1 });
    expect(ids(page)).toEqual([first.id]);
    expect(page.next_cursor).toEqual(expect.any(String));
    // The page that holds it does open it (and fails).
    await expect(c.todos.list({ limit: 1, cursor: page.next_cursor! })).rejects.toThrow();
  });
});

describe('to-do tags: the client order per to-do', () => {
  it('a page and a single read give each to-do its tags in the order given, whatever the tag ids', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const a = await c.todos.create({ title: 'a', tags: ['zeta', 'alpha', 'mid', 'beta'] });
    const none = await c.todos.create({ title: 'none' });
    const one = await c.todos.create({ title: 'one', tags: ['mid'] });
    // The tags' ids in descending order: links come back in (to-do, tag id) order, so an order by
    // position other than the ids' own is what this checks.
    const tagIds = app.deps.db.$client
      .prepare('SELECT tag_id FROM todo_tags WHERE todo_id = ? ORDER BY tag_id DESC')
      .pluck()
      .all(a.id) as string[];
    const nameOf = new Map((await c.tags.list({ limit: 200 })).data.map((t) => [t.id, t.name]));
    const descending = tagIds.map((id) => nameOf.get(id)!);
    const b = await c.todos.create({ title: 'b', tags: descending });
    await c.todos.update({ id: a.id, tags: [...descending].reverse() });
    const page = await c.todos.list({ limit: 200 });
    const byId = new Map(page.data.map((t) => [t.id, t.tags]));
    expect(byId.get(a.id)).toEqual([...descending].reverse());
    expect(byId.get(b.id)).toEqual(descending);
    expect(byId.get(none.id)).toEqual([]);
    expect(byId.get(one.id)).toEqual(['mid']);
    expect((await c.todos.get({ id: b.id })).tags).toEqual(descending);
    expect((await c.todos.get({ id: a.id })).tags).toEqual([...descending].reverse());
  });

  it('a single read (one statement: the row with its links) answers tags, no tags, and 404 for a missing or another user’s to-do', async () => {
    const u = await registerUser(app);
    const v = await registerUser(app);
    const c = app.caller(u.session);
    const bare = await c.todos.create({ title: 'bare' });
    expect(await c.todos.get({ id: bare.id })).toEqual(bare);
    const tagged = await c.todos.create({ title: 'tagged', tags: ['one', 'two', 'three'] });
    expect(await c.todos.get({ id: tagged.id })).toEqual(tagged);
    expect(tagged.tags).toEqual(['one', 'two', 'three']);
    // The order is the stored position, not the links' storage order: reversed in place, both
    // reads follow it.
    app.deps.db.$client.prepare('UPDATE todo_tags SET position = 2 - position WHERE todo_id = ?').run(tagged.id);
    expect((await c.todos.get({ id: tagged.id })).tags).toEqual(['three', 'two', 'one']);
    expect((await c.todos.list({ limit: 200 })).data.find((t) => t.id === tagged.id)!.tags).toEqual(['three', 'two', 'one']);
    app.deps.db.$client.prepare('UPDATE todo_tags SET position = 2 - position WHERE todo_id = ?').run(tagged.id);
    // A tag deleted leaves the to-do (its link cascades).
    const two = (await c.tags.list({ limit: 200 })).data.find((t) => t.name === 'two')!;
    await c.tags.delete({ id: two.id });
    expect((await c.todos.get({ id: tagged.id })).tags).toEqual(['one', 'three']);
    await expect(app.caller(v.session).todos.get({ id: tagged.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(c.todos.get({ id: '00000000-0000-4000-8000-0000000000FF' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('tagsOf: an id given twice gets its tags once; ids of other users get nothing', async () => {
    const u = await registerUser(app);
    const v = await registerUser(app);
    const c = app.caller(u.session);
    const t = await c.todos.create({ title: 't', tags: ['x', 'y'] });
    const t2 = await c.todos.create({ title: 't2', tags: ['y'] });
    const theirs = await app.caller(v.session).todos.create({ title: 'theirs', tags: ['x'] });
    const p = await authenticate(app.deps, `Bearer ${u.session}`);
    const tags = tagsOf(app.deps, p, [t.id, t2.id, t.id, theirs.id]);
    expect([...tags.entries()].sort()).toEqual([
      [t.id, ['x', 'y']],
      [t2.id, ['y']],
    ].sort());
  });
});
