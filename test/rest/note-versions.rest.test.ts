// Spec §2.5, §4.6 (versions routes), §4.8, §6.2: note versions over HTTP, with the manual clock
// driving coalescing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { COALESCE_MS, VERSIONS_KEPT } from '../../routers/note-versions/record.js';

let app: TestApp;
let token: string;
let userId: string;

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  userId = u.userId;
  token = (await createPat(app, u.session, ['notes:write'])).token;
});
afterAll(() => app.close());

const post = (path: string, body: unknown = undefined, t = token) => call(app, 'POST', path, { token: t, body });
const get = (path: string, t = token) => call(app, 'GET', path, { token: t });
const patch = (path: string, body: unknown) => call(app, 'PATCH', path, { token, body });
const note = async (body: Record<string, unknown>) => (await post('/v1/notes', body)).body as { id: string };
type V = { id: string; noteId: string; source: string; createdAt: string; updatedAt: string };
const versions = async (noteId: string, q = ''): Promise<V[]> => (await get(`/v1/notes/${noteId}/versions${q}`)).body.data;

describe('note versions: recording (spec §2.5)', () => {
  it('create records a version; a changed body or title records an edit; an unchanged save records nothing', async () => {
    const n = await note({ body: 'first', title: 'T' });
    let vs = await versions(n.id);
    expect(vs).toHaveLength(1);
    expect(vs[0]).toMatchObject({ noteId: n.id, source: 'create' });
    expect(vs[0]).not.toHaveProperty('body');
    app.clock.advance(COALESCE_MS + 1);
    await patch(`/v1/notes/${n.id}`, { body: 'first' });
    expect(await versions(n.id)).toHaveLength(1);
    await patch(`/v1/notes/${n.id}`, { title: 'T2' });
    vs = await versions(n.id);
    expect(vs.map((v) => v.source)).toEqual(['edit', 'create']);
    const text = await get(`/v1/notes/${n.id}/versions/${vs[0]!.id}`);
    expect(text.status).toBe(200);
    expect(text.body).toMatchObject({ id: vs[0]!.id, noteId: n.id, source: 'edit', title: 'T2', body: 'first' });
    expect((await get(`/v1/notes/${n.id}/versions/${vs[1]!.id}`)).body).toMatchObject({ source: 'create', title: 'T', body: 'first' });
  });

  it('edits within 60 seconds of the newest edit version coalesce into it; later ones start a new version', async () => {
    const n = await note({ body: 'v0' });
    // The create version is never rewritten: the first edit makes a version even right away.
    app.clock.advance(1000);
    await patch(`/v1/notes/${n.id}`, { body: 'v1' });
    let vs = await versions(n.id);
    expect(vs.map((v) => v.source)).toEqual(['edit', 'create']);
    const edit = vs[0]!;
    const before = eventsOf(app.deps.db, userId).length;
    app.clock.advance(20_000);
    await patch(`/v1/notes/${n.id}`, { body: 'v2' });
    app.clock.advance(COALESCE_MS - 20_001); // 59.999 s after the version was made
    await patch(`/v1/notes/${n.id}`, { body: 'v3' });
    vs = await versions(n.id);
    expect(vs).toHaveLength(2);
    expect(vs[0]!.id).toBe(edit.id);
    expect(vs[0]!.createdAt).toBe(edit.createdAt);
    expect(Date.parse(vs[0]!.updatedAt) - Date.parse(edit.createdAt)).toBe(COALESCE_MS - 1);
    expect((await get(`/v1/notes/${n.id}/versions/${edit.id}`)).body.body).toBe('v3');
    // Coalescing makes no new version, so no note_version.created (note.updated still fires).
    const evs = eventsOf(app.deps.db, userId).slice(before).map((e) => e.type);
    expect(evs).toEqual(['note.updated', 'note.updated']);
    // At 60 s after the version was made, the next edit starts a new one.
    app.clock.advance(1);
    await patch(`/v1/notes/${n.id}`, { body: 'v4' });
    vs = await versions(n.id);
    expect(vs.map((v) => v.source)).toEqual(['edit', 'edit', 'create']);
    expect((await get(`/v1/notes/${n.id}/versions/${vs[0]!.id}`)).body.body).toBe('v4');
    expect((await get(`/v1/notes/${n.id}/versions/${vs[1]!.id}`)).body.body).toBe('v3');
    const created = eventsOf(app.deps.db, userId).filter((e) => e.type === 'note_version.created').pop()!;
    expect(created.data).toEqual({ object: 'note_version', id: vs[0]!.id, sub: userId });
  });

  it('restoring a version puts its text back and records a restore version', async () => {
    const n = await note({ body: 'original', title: 'Orig' });
    const createV = (await versions(n.id))[0]!;
    app.clock.advance(COALESCE_MS);
    await patch(`/v1/notes/${n.id}`, { body: 'changed', title: null });
    const r = await post(`/v1/notes/${n.id}/versions/${createV.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: n.id, body: 'original', title: 'Orig' });
    const vs = await versions(n.id);
    expect(vs.map((v) => v.source)).toEqual(['restore', 'edit', 'create']);
    // An edit right after a restore does not rewrite the restore version.
    await patch(`/v1/notes/${n.id}`, { body: 'after restore' });
    expect((await versions(n.id)).map((v) => v.source)).toEqual(['edit', 'restore', 'edit', 'create']);
    // A version of another note cannot be restored onto this one.
    const other = await note({ body: 'other' });
    const otherV = (await versions(other.id))[0]!;
    expectProblem(await post(`/v1/notes/${n.id}/versions/${otherV.id}/restore`), 404, 'not_found');
  });
});

describe('note versions: reading (spec §4.6, §4.8)', () => {
  it('lists newest first with paging, without text', async () => {
    const n = await note({ body: 'p0' });
    for (let i = 1; i <= 4; i++) {
      app.clock.advance(COALESCE_MS);
      await patch(`/v1/notes/${n.id}`, { body: `p${i}` });
    }
    const all = await versions(n.id);
    expect(all).toHaveLength(5);
    const times = all.map((v) => Date.parse(v.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const p1 = await get(`/v1/notes/${n.id}/versions?limit=2`);
    expect(p1.body.data.map((v: V) => v.id)).toEqual(all.slice(0, 2).map((v) => v.id));
    const p2 = await get(`/v1/notes/${n.id}/versions?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.data.map((v: V) => v.id)).toEqual(all.slice(2, 4).map((v) => v.id));
    const p3 = await get(`/v1/notes/${n.id}/versions?limit=2&cursor=${p2.body.next_cursor}`);
    expect(p3.body.data.map((v: V) => v.id)).toEqual(all.slice(4).map((v) => v.id));
    expect(p3.body.next_cursor).toBeNull();
    for (const v of all) expect(Object.keys(v).sort()).toEqual(['createdAt', 'id', 'noteId', 'source', 'updatedAt']);
    // A cursor of another note's list is refused.
    const other = await note({ body: 'o' });
    expect(expectProblem(await get(`/v1/notes/${other.id}/versions?cursor=${p1.body.next_cursor}`), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
  });

  it('GET /v1/note-versions/{id} gives noteId and what produced it, no text', async () => {
    const n = await note({ body: 'resolve me', title: 'secret title' });
    const v = (await versions(n.id))[0]!;
    const r = await get(`/v1/note-versions/${v.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: v.id, noteId: n.id, source: 'create', createdAt: v.createdAt, updatedAt: v.updatedAt });
    expect(r.text).not.toContain('resolve me');
    expect(r.text).not.toContain('secret title');
  });

  it('routes resolve: a note id is not a version id and the version must belong to the note', async () => {
    const a = await note({ body: 'a' });
    const b = await note({ body: 'b' });
    const va = (await versions(a.id))[0]!;
    expectProblem(await get(`/v1/notes/${b.id}/versions/${va.id}`), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${va.id}/versions`), 404, 'not_found');
    expectProblem(await get(`/v1/note-versions/${a.id}`), 404, 'not_found');
    expect((await get(`/v1/notes/${a.id}/versions/${va.id}`)).body.body).toBe('a');
    expect((await get(`/v1/notes/${a.id}`)).body.body).toBe('a');
    expectProblem(await get('/v1/notes/0A1B2C3D-0000-4000-8000-00000000000A/versions'), 404, 'not_found');
  });

  it('a version of a deleted note is not_found everywhere', async () => {
    const n = await note({ body: 'vanishing' });
    const v = (await versions(n.id))[0]!;
    await call(app, 'DELETE', `/v1/notes/${n.id}`, { token });
    expectProblem(await get(`/v1/note-versions/${v.id}`), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${n.id}/versions/${v.id}`), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${n.id}/versions`), 404, 'not_found');
  });

  it(`a note keeps its newest ${VERSIONS_KEPT} versions; a deleted (dropped) version is not_found`, async () => {
    const n = await note({ body: 'e0' });
    const first = (await versions(n.id))[0]!;
    for (let i = 1; i < VERSIONS_KEPT; i++) {
      app.clock.advance(COALESCE_MS);
      await patch(`/v1/notes/${n.id}`, { body: `e${i}` });
    }
    expect((await get(`/v1/note-versions/${first.id}`)).status).toBe(200);
    app.clock.advance(COALESCE_MS);
    await patch(`/v1/notes/${n.id}`, { body: 'one more' });
    expectProblem(await get(`/v1/note-versions/${first.id}`), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${n.id}/versions/${first.id}`), 404, 'not_found');
    const all = await versions(n.id, '?limit=200');
    expect(all).toHaveLength(VERSIONS_KEPT);
    expect(all.map((v) => v.source).includes('create')).toBe(false);
  });

  it("another user's versions are not_found", async () => {
    const n = await note({ body: 'mine' });
    const v = (await versions(n.id))[0]!;
    const other = await registerUser(app);
    expectProblem(await get(`/v1/note-versions/${v.id}`, other.session), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${n.id}/versions/${v.id}`, other.session), 404, 'not_found');
    expectProblem(await get(`/v1/notes/${n.id}/versions`, other.session), 404, 'not_found');
  });

  it('version reads need notes:read', async () => {
    const n = await note({ body: 'scoped' });
    const v = (await versions(n.id))[0]!;
    const u = await registerUser(app);
    const wrong = (await createPat(app, u.session, ['todos:read'])).token;
    expectProblem(await get(`/v1/note-versions/${v.id}`, wrong), 403, 'forbidden_scope');
    expectProblem(await get(`/v1/notes/${n.id}/versions`, wrong), 403, 'forbidden_scope');
  });
});
