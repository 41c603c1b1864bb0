// Notes, note folders, versions and the trash through the tRPC caller (no HTTP): the same rules
// as REST, ownership in every query, coalescing driven by the injected clock, and atomicity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { createPat, registerUser } from '../helpers/http.js';
import { COALESCE_MS } from '../../routers/note-versions/record.js';
import { eventsOf } from '../../routers/events.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const problemOf = (e: unknown) => (e as { problemCode?: string; errors?: { pointer: string }[] });

describe('notes via the caller', () => {
  it('another user cannot read, change, move, trash or delete a note, folder or version', async () => {
    const a = app.caller((await registerUser(app)).session);
    const b = app.caller((await registerUser(app)).session);
    const f = await a.noteFolders.create({ name: 'A folder' });
    const n = await a.notes.create({ body: 'A note', folderId: f.id });
    const v = (await a.noteVersions.list({ id: n.id })).data[0]!;
    // Each attempt runs in turn (a call made now but awaited later would reject unobserved meanwhile).
    const attempts: (() => Promise<unknown>)[] = [
      () => b.notes.get({ id: n.id }),
      () => b.notes.update({ id: n.id, body: 'taken' }),
      () => b.notes.move({ id: n.id, parentId: null }),
      () => b.notes.trash({ id: n.id }),
      () => b.notes.delete({ id: n.id }),
      () => b.noteFolders.get({ id: f.id }),
      () => b.noteFolders.trash({ id: f.id }),
      () => b.noteVersions.get({ id: v.id }),
      () => b.noteVersions.getText({ noteId: n.id, id: v.id }),
      () => b.noteVersions.restore({ noteId: n.id, id: v.id }),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // B cannot file its own note into A's folder, nor next to A's note.
    await expect(b.notes.create({ body: 'x', folderId: f.id })).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    const mine = await b.notes.create({ body: 'b note' });
    const err = await b.notes.move({ id: mine.id, parentId: null, after: n.id }).catch((e: unknown) => e);
    expect(problemOf(err).errors?.[0]?.pointer).toBe('/after');
    expect((await a.notes.get({ id: n.id })).body).toBe('A note');
    expect((await b.trash.list({})).data).toEqual([]);
  });

  it('rapid edits coalesce by the injected clock; a later edit starts a new version', async () => {
    const c = app.caller((await registerUser(app)).session);
    const n = await c.notes.create({ body: 'draft 0' });
    app.clock.advance(COALESCE_MS);
    for (let i = 1; i <= 5; i++) {
      await c.notes.update({ id: n.id, body: `draft ${i}` });
      app.clock.advance(10_000);
    }
    // Five saves 10 s apart (0..40 s): one edit version holding the last text.
    let vs = (await c.noteVersions.list({ id: n.id })).data;
    expect(vs.map((v) => v.source)).toEqual(['edit', 'create']);
    expect((await c.noteVersions.getText({ noteId: n.id, id: vs[0]!.id })).body).toBe('draft 5');
    app.clock.advance(20_000); // 70 s after the edit version was made
    await c.notes.update({ id: n.id, title: 'titled' });
    vs = (await c.noteVersions.list({ id: n.id })).data;
    expect(vs.map((v) => v.source)).toEqual(['edit', 'edit', 'create']);
    expect(await c.noteVersions.getText({ noteId: n.id, id: vs[0]!.id })).toMatchObject({ title: 'titled', body: 'draft 5' });
  });

  it('a refused write changes nothing and records no event', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const p = await c.containers.create({ kind: 'project', name: 'P' });
    const n = await c.notes.create({ body: 'n', parentId: p.id });
    const before = eventsOf(app.deps.db, u.userId).length;
    await expect(c.notes.move({ id: n.id, parentId: null, after: 'NOPE' })).rejects.toBeTruthy();
    await expect(c.noteFolders.delete({ id: (await c.noteFolders.create({ name: 'live' })).id })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(eventsOf(app.deps.db, u.userId).length).toBe(before + 1); // only the folder's create
    expect((await c.notes.get({ id: n.id })).parentId).toBe(p.id);
  });

  it('list filters take native values: include_trashed as a boolean, parent_id "null" for standalone', async () => {
    const c = app.caller((await registerUser(app)).session);
    const a = await c.notes.create({ body: 'a' });
    await c.notes.trash({ id: a.id });
    expect((await c.notes.list({ include_trashed: true, parent_id: 'null' })).data.map((x) => x.id)).toEqual([a.id]);
    expect((await c.notes.list({ include_trashed: false })).data).toEqual([]);
    const ro = app.caller((await createPat(app, (await registerUser(app)).session, ['notes:read'])).token);
    await expect(ro.notes.create({ body: 'x' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
