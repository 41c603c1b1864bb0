// Headings through the tRPC caller: the derived convert id, and step 2 of convert as one
// transaction (a failure inside it moves nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';
import { derivedSubprojectId } from '../../routers/headings/model.js';
import { UUID_UPPER } from '../../core/ids.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('headings via the caller', () => {
  it('the derived subproject id is a stable UPPERCASE UUID, distinct per heading and per user', () => {
    const a = derivedSubprojectId('U1', 'H1');
    expect(a).toMatch(UUID_UPPER);
    expect(derivedSubprojectId('U1', 'H1')).toBe(a);
    expect(derivedSubprojectId('U1', 'H2')).not.toBe(a);
    expect(derivedSubprojectId('U2', 'H1')).not.toBe(a);
  });

  it('lists by projectId and converts with an explicit id', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    const h1 = await c.headings.create({ projectId: p.id, name: 'one' });
    const h2 = await c.headings.create({ projectId: p.id, name: 'zero', after: null });
    expect((await c.headings.list({ projectId: p.id })).data.map((h) => h.id)).toEqual([h2.id, h1.id]);
    const t = await c.todos.create({ title: 't', headingId: h1.id });
    const id = 'D00D0000-0000-4000-8000-000000000001';
    const r = await c.headings.convert({ headingId: h1.id, id });
    expect(r.subproject).toMatchObject({ id, name: 'one', kind: 'subproject', parentId: p.id });
    expect((await c.todos.get({ id: t.id })).parentId).toBe(id);
  });

  it('a failure inside convert step 2 rolls the whole step back: no to-do half-moved', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    const h = await c.headings.create({ projectId: p.id, name: 'H' });
    const a = await c.todos.create({ title: 'a', headingId: h.id });
    const b = await c.todos.create({ title: 'b', headingId: h.id });
    const sqlite = app.deps.db.$client;
    // Fails on the second to-do's move, after the first one was already updated in the transaction.
    sqlite.exec(`CREATE TRIGGER second_move_fails BEFORE UPDATE OF parent_id ON todos WHEN NEW.id = '${b.id}' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`);
    try {
      await expect(c.headings.convert({ headingId: h.id })).rejects.toThrow();
    } finally {
      sqlite.exec('DROP TRIGGER second_move_fails');
    }
    expect((await c.todos.get({ id: a.id })).headingId).toBe(h.id);
    expect((await c.headings.get({ id: h.id })).openCount).toBe(2);
    // Step 1 had committed: the retry finds the derived subproject and finishes.
    const r = await c.headings.convert({ headingId: h.id });
    expect(r.subproject.id).toBe(derivedSubprojectId(u.userId, h.id));
    expect(r.todos.map((t) => t.id)).toEqual([a.id, b.id]);
    expect((await c.containers.list({ parent_id: p.id })).data).toHaveLength(1);
  });
});
