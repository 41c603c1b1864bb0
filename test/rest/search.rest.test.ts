// Search (DECISIONS §6, issue 14) over HTTP: kinds, accents and case, several terms, ranking,
// snippets, paging, trash, scopes, validation, and the index's search-text layer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { userClient } from '../helpers/user-client.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { fold } from '../../routers/todo-index/fold.js';
import { snippetOf } from '../../routers/search/model.js';
import { INDEX_TABLE } from '../../routers/todo-index/index.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

async function user() {
  const u = await userClient(app);
  const find = async (q: string, extra = '') => (await u.req('GET', `/v1/search?q=${encodeURIComponent(q)}${extra}`)).data as Any[];
  return { ...u, find };
}

describe('folding', () => {
  it('NFKD, marks stripped, lower-cased', () => {
    expect(fold('Crème Brûlée')).toBe('creme brulee');
    expect(fold('ＣＡＦÉ')).toBe('cafe');
    expect(fold('ﬁle Ångström')).toBe('file angstrom');
  });
  it('snippets map back to the original text around the first match', () => {
    const body = `${'x'.repeat(100)} the Crème brûlée recipe ${'y'.repeat(300)}`;
    const s = snippetOf(body, ['brulee']);
    expect(s.startsWith('…')).toBe(true);
    expect(s).toContain('Crème brûlée recipe');
    expect(s.endsWith('…')).toBe(true);
    expect(snippetOf('short text', ['nothing'])).toBe('short text');
    expect(snippetOf('', ['a'])).toBe('');
  });
});

describe('GET /v1/search', () => {
  it('a query of more terms than the text chunks match in place (31) takes the row path and answers the same way', async () => {
    const u = await user();
    const words = Array.from({ length: 33 }, (_, i) => `w${i}x`);
    const all = await u.req('POST', '/v1/todos', { title: words.slice(0, 20).join(' '), notes: words.slice(20).join(' ') });
    const titleOnly = await u.req('POST', '/v1/todos', { title: words.join(' ') });
    await u.req('POST', '/v1/todos', { title: words.slice(1).join(' ') });
    for (const n of [30, 31, 32, 33]) {
      const hits = await u.find(words.slice(0, n).join(' '));
      // Every term in the title ranks first; the one with some terms only in its notes next.
      expect(hits.map((h) => h.id)).toEqual([titleOnly.id, all.id]);
    }
  });

  it('finds to-dos (title, notes, checklist), notes, containers and headings, case- and accent-insensitively', async () => {
    const u = await user();
    const p = await u.req('POST', '/v1/containers', { kind: 'project', name: 'Café renovation', notes: 'paint the walls' });
    const h = await u.req('POST', '/v1/headings', { projectId: p.id, name: 'CAFE furniture' });
    const t1 = await u.req('POST', '/v1/todos', { title: 'Order café chairs' });
    const t2 = await u.req('POST', '/v1/todos', { title: 'Call Zoë', notes: 'about the cafe opening' });
    const t3 = await u.req('POST', '/v1/todos', { title: 'Shopping', checklist: [{ title: 'Café beans' }] });
    const n = await u.req('POST', '/v1/notes', { title: 'Ideas', body: 'A CAFÉ with books' });
    await u.req('POST', '/v1/todos', { title: 'unrelated' });
    const hits = await u.find('cafe');
    expect(hits.map((x) => `${x.type}:${x.id}`).sort()).toEqual([`todo:${t1.id}`, `todo:${t2.id}`, `todo:${t3.id}`, `note:${n.id}`, `container:${p.id}`, `heading:${h.id}`].sort());
    // Title hits first (t1, heading, container), then body hits (t2, t3, the note).
    expect(hits.slice(0, 3).map((x) => x.id).sort()).toEqual([t1.id, h.id, p.id].sort());
    expect(hits.slice(3).map((x) => x.id).sort()).toEqual([t2.id, t3.id, n.id].sort());
    const zoe = await u.find('ZOE');
    expect(zoe).toEqual([{ type: 'todo', id: t2.id, title: 'Call Zoë', snippet: 'about the cafe opening' }]);
    expect((await u.find('café beans'))[0]).toEqual({ type: 'todo', id: t3.id, title: 'Shopping', snippet: 'Café beans' });
    // Every term must match (in any field).
    expect((await u.find('cafe zoe')).map((x) => x.id)).toEqual([t2.id]);
    expect(await u.find('cafe nowhere')).toEqual([]);
    // types narrows.
    expect((await u.find('cafe', '&types=note,heading')).map((x) => x.type).sort()).toEqual(['heading', 'note']);
  });

  it('reflects writes at once: a rename, a deleted to-do, a rebuilt text chunk', async () => {
    const u = await user();
    const t = await u.req('POST', '/v1/todos', { title: 'alpha' });
    expect((await u.find('alpha')).map((x) => x.id)).toEqual([t.id]);
    await u.req('PATCH', `/v1/todos/${t.id}`, { title: 'beta', notes: 'gamma' });
    expect(await u.find('alpha')).toEqual([]);
    expect((await u.find('beta gamma')).map((x) => x.id)).toEqual([t.id]);
    app.deps.db.$client.prepare(`DELETE FROM ${INDEX_TABLE} WHERE user_id = ?`).run(u.userId);
    expect((await u.find('beta gamma')).map((x) => x.id)).toEqual([t.id]);
    await u.req('DELETE', `/v1/todos/${t.id}`);
    expect(await u.find('beta')).toEqual([]);
  });

  it('leaves out trashed items and the contents of trashed containers unless include_trashed', async () => {
    const u = await user();
    const p = await u.req('POST', '/v1/containers', { kind: 'project', name: 'Zebra project' });
    const inP = await u.req('POST', '/v1/todos', { title: 'zebra task', parentId: p.id });
    const tr = await u.req('POST', '/v1/todos', { title: 'zebra trashed' });
    await u.req('POST', `/v1/todos/${tr.id}/trash`);
    const note = await u.req('POST', '/v1/notes', { body: 'zebra note' });
    await u.req('POST', `/v1/notes/${note.id}/trash`);
    const live = await u.req('POST', '/v1/todos', { title: 'zebra live' });
    expect((await u.find('zebra')).map((x) => x.id).sort()).toEqual([p.id, inP.id, live.id].sort());
    await u.req('POST', `/v1/containers/${p.id}/trash`);
    expect((await u.find('zebra')).map((x) => x.id)).toEqual([live.id]);
    expect((await u.find('zebra', '&include_trashed=true')).map((x) => x.id).sort()).toEqual([p.id, inP.id, tr.id, note.id, live.id].sort());
  });

  it('pages with a cursor bound to the query', async () => {
    const u = await user();
    for (let i = 0; i < 7; i++) await u.req('POST', '/v1/todos', { title: `page item ${i}` });
    await u.req('POST', '/v1/todos', { title: 'other', notes: 'page item in the notes' });
    const seen: Any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: Any = await u.req('GET', `/v1/search?q=page+item&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...r.data);
      cursor = r.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(8);
    expect(new Set(seen.map((x) => x.id)).size).toBe(8);
    expect(seen.at(-1).title).toBe('other');
    const first = await u.req('GET', '/v1/search?q=page&limit=1');
    expect(expectProblem(await u.raw('GET', `/v1/search?q=item&cursor=${encodeURIComponent(first.next_cursor)}`), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/cursor');
  });

  it('validates q and types', async () => {
    const u = await user();
    const ptr = async (qs: string) => expectProblem(await u.raw('GET', `/v1/search?${qs}`), 422, 'validation_failed').errors?.[0]?.pointer;
    expect(await ptr('')).toBe('/q');
    expect(await ptr('q=')).toBe('/q');
    expect(await ptr('q=%20%20')).toBe('/q');
    expect(await ptr(`q=${'a'.repeat(257)}`)).toBe('/q');
    expect((await u.raw('GET', `/v1/search?q=${'a'.repeat(256)}`)).status).toBe(200);
    expect(await ptr('q=a&types=todo,spaceship')).toBe('/types');
    expect(await ptr('q=a&limit=0')).toBe('/limit');
  });

  it('searches only what the credential may read', async () => {
    const u = await user();
    await u.req('POST', '/v1/todos', { title: 'secret todo' });
    await u.req('POST', '/v1/notes', { body: 'secret note' });
    const todosOnly = await createPat(app, u.session, ['todos:read']);
    const r = await call(app, 'GET', '/v1/search?q=secret', { token: todosOnly.token });
    expect(r.body.data.map((x: Any) => x.type)).toEqual(['todo']);
    expectProblem(await call(app, 'GET', '/v1/search?q=secret&types=note', { token: todosOnly.token }), 403, 'forbidden_scope');
    const tagsOnly = await createPat(app, u.session, ['tags:read']);
    expectProblem(await call(app, 'GET', '/v1/search?q=secret', { token: tagsOnly.token }), 403, 'forbidden_scope');
  });

  it('answers account_too_large past CAIRN_MAX_ACCOUNT_ITEMS', async () => {
    const small = await startApp({ CAIRN_MAX_ACCOUNT_ITEMS: '2' });
    try {
      const u = await registerUser(small);
      for (let i = 0; i < 2; i++) await call(small, 'POST', '/v1/todos', { token: u.session, body: { title: `t${i}` } });
      expect((await call(small, 'GET', '/v1/search?q=t', { token: u.session })).status).toBe(200);
      await call(small, 'POST', '/v1/notes', { token: u.session, body: { body: 'n' } });
      expectProblem(await call(small, 'GET', '/v1/search?q=t', { token: u.session }), 422, 'account_too_large');
    } finally {
      await small.close();
    }
  });
});
