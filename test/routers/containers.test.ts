// Containers through the tRPC caller: native filters, and DELETE removing everything below a
// trashed container in one transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('containers via the caller', () => {
  it('filters with native values and refuses a PATCH of kind', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const a = await c.containers.create({ kind: 'area', name: 'A' });
    const p = await c.containers.create({ kind: 'project', name: 'P', parentId: a.id });
    await c.containers.archive({ id: p.id });
    expect((await c.containers.list({ status: 'archived' })).data.map((x) => x.id)).toEqual([p.id]);
    expect((await c.containers.list({ kind: 'area', include_trashed: false })).data.map((x) => x.id)).toEqual([a.id]);
    await expect(c.containers.update({ id: p.id, kind: 'area' } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('DELETE of a trashed area removes its projects, subprojects, headings and to-dos, and nothing else', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const a = await c.containers.create({ kind: 'area', name: 'A' });
    const p = await c.containers.create({ kind: 'project', name: 'P', parentId: a.id });
    const s = await c.containers.create({ kind: 'subproject', name: 'S', parentId: p.id });
    const h = await c.headings.create({ projectId: s.id, name: 'H' });
    await c.todos.create({ title: 'deep', headingId: h.id });
    await c.todos.create({ title: 'mid', parentId: p.id, tags: ['kept tag'] });
    const other = await c.containers.create({ kind: 'project', name: 'Survivor' });
    const survivor = await c.todos.create({ title: 'survivor', parentId: other.id });
    await c.containers.trash({ id: a.id });
    await c.containers.delete({ id: a.id });
    const count = (table: string) => (app.deps.db.$client.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).get(u.userId) as { n: number }).n;
    expect(count('containers')).toBe(1);
    expect(count('headings')).toBe(0);
    expect(count('todos')).toBe(1);
    expect(count('todo_tags')).toBe(0);
    expect((await c.todos.get({ id: survivor.id })).title).toBe('survivor');
    expect((await c.tags.list({})).data.map((t) => t.name)).toEqual(['kept tag']);
  });
});
