// Spec §2.7, §4.11 (docs/api.md "Inbox"): captures, the page title arriving after the capture has
// answered, list filters and paging, status transitions, all over HTTP. Pages are loopback HTTPS
// with a certificate made at test time; a connect watcher fails the run on any other address.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { html, pageServer, selfSignedCert, type Cert, type PageServer } from '../helpers/tls.js';
import type { ConnectAttempt, Resolver } from '../../core/net/index.js';
import { eventsOf } from '../../routers/events.js';
import { inboxTitlesSettled } from '../../routers/inbox/model.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { openJson, rowAad } from '../../core/crypto/seal.js';

const attempts: ConnectAttempt[] = [];
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

let cert: Cert;
let app: TestApp;
let session: string;
let userId: string;
let site: PageServer;
const routes = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();
/** Requests the page server has answered, by path (to show the fetch happened after the answer). */
const served: string[] = [];

beforeAll(async () => {
  cert = selfSignedCert();
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { linkTitleDeadlineMs: 1_500 }, {
    outbound: { resolver, ca: cert.cert, onConnect: (a) => attempts.push(a) },
  });
  const u = await registerUser(app);
  session = u.session;
  userId = u.userId;
  site = await pageServer((req, res) => {
    served.push(req.url ?? '');
    const route = routes.get(req.url ?? '');
    if (route) route(req, res);
    else html(res, '<title>not here</title>', 404);
  }, cert);
});
afterAll(async () => {
  await inboxTitlesSettled();
  await site?.close();
  await app?.close();
  expect(attempts.filter((a) => a.address !== '127.0.0.1' && a.address !== '::1')).toEqual([]);
});

const post = (path: string, body?: unknown, token = session, headers?: Record<string, string>) => call(app, 'POST', path, { token, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
const get = (path: string, token = session) => call(app, 'GET', path, { token });
const page = (path: string, body: string, status?: number, type?: string) => {
  routes.set(path, (_req, res) => html(res, body, status, type));
  return `${site.origin}${path}`;
};
const eventTypes = (id: string) => eventsOf(app.deps.db, userId).filter((e) => e.data.id === id).map((e) => e.type);

describe('POST /v1/inbox: captures (spec §4.11)', () => {
  it('captures a text with whenDate: 201, open, inbox.created, readable at once', async () => {
    const r = await post('/v1/inbox', { kind: 'text', text: 'Buy milk', whenDate: '2026-12-01' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 'text', text: 'Buy milk', url: null, title: null, whenDate: '2026-12-01', status: 'open' });
    expect((await get(`/v1/inbox/${r.body.id}`)).body).toEqual(r.body);
    expect(eventTypes(r.body.id)).toEqual(['inbox.created']);
  });

  it('refuses bad captures at their pointers', async () => {
    const cases: [unknown, string][] = [
      [{ kind: 'text' }, '/text'],
      [{ kind: 'text', text: '   ' }, '/text'],
      [{ kind: 'text', text: 'x'.repeat(2049) }, '/text'],
      [{ kind: 'text', text: 'a', url: 'https://example.com/' }, '/url'],
      [{ kind: 'url' }, '/url'],
      [{ kind: 'url', url: 'javascript:alert(1)' }, '/url'],
      [{ kind: 'url', url: 'not a url' }, '/url'],
      [{ kind: 'url', url: `https://example.com/${'a'.repeat(2048)}` }, '/url'],
      [{ kind: 'text', text: 'a', whenDate: '2026-02-30' }, '/whenDate'],
      [{ kind: 'text', text: 'a', id: 'lowercase-not-uuid' }, '/id'],
      [{ kind: 'file', text: 'a' }, '/kind'],
      [{ kind: 'text', text: 'a', status: 'moved' }, '/status'],
    ];
    for (const [body, pointer] of cases) {
      const p = expectProblem(await post('/v1/inbox', body), 422, 'validation_failed');
      expect(p.errors?.map((e) => e.pointer), JSON.stringify(body)).toContain(pointer);
    }
  });

  it('a keyed capture replays its answer and stores one item', async () => {
    const h = { 'Idempotency-Key': 'inbox-once' };
    const a = await post('/v1/inbox', { kind: 'text', text: 'once' }, session, h);
    const b = await post('/v1/inbox', { kind: 'text', text: 'once' }, session, h);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(eventTypes(a.body.id)).toEqual(['inbox.created']);
  });

  it('a client id is kept; reusing it is duplicate_id', async () => {
    const id = '0F0E0D0C-0B0A-4908-8706-050403020100';
    expect((await post('/v1/inbox', { kind: 'text', text: 'mine', id })).body.id).toBe(id);
    expectProblem(await post('/v1/inbox', { kind: 'text', text: 'again', id }), 409, 'duplicate_id');
  });
});

describe('url captures: the title arrives after the answer', () => {
  it('answers with title null, then the page title lands with inbox.updated', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    routes.set('/slow-title', (_req, res) => {
      // The page answers only once the test has seen the capture's answer.
      void gate.then(() => html(res, '<html><head><meta property="og:title" content="Fetched &amp; titled"></head></html>'));
    });
    const url = `${site.origin}/slow-title`;
    const r = await post('/v1/inbox', { kind: 'url', url, text: 'read later' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ kind: 'url', url, text: 'read later', title: null, status: 'open' });
    expect((await get(`/v1/inbox/${r.body.id}`)).body.title).toBeNull();
    expect(eventTypes(r.body.id)).toEqual(['inbox.created']);
    release();
    await inboxTitlesSettled();
    expect(served).toContain('/slow-title');
    const after = (await get(`/v1/inbox/${r.body.id}`)).body;
    expect(after.title).toBe('Fetched & titled');
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(r.body.updatedAt));
    expect(eventTypes(r.body.id)).toEqual(['inbox.created', 'inbox.updated']);
  });

  it('a page that cannot be read leaves title null and records no update', async () => {
    const urls = [page('/missing-404', '<title>Nope</title>', 404), page('/not-html', '{"title":"x"}', 200, 'application/json'), 'https://nowhere.invalid/x'];
    for (const url of urls) {
      const r = await post('/v1/inbox', { kind: 'url', url });
      expect(r.status, r.text).toBe(201);
      await inboxTitlesSettled();
      expect((await get(`/v1/inbox/${r.body.id}`)).body.title).toBeNull();
      expect(eventTypes(r.body.id)).toEqual(['inbox.created']);
    }
  });
});

describe('GET /v1/inbox: paging and filters', () => {
  it('pages in capture order and filters by status and kind', async () => {
    const u = await registerUser(app);
    const s = u.session;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      app.clock.advance(1000);
      ids.push((await post('/v1/inbox', { kind: 'text', text: `t${i}` }, s)).body.id);
    }
    app.clock.advance(1000);
    const urlItem = (await post('/v1/inbox', { kind: 'url', url: page('/plain', '<title>Plain</title>') }, s)).body.id;
    await inboxTitlesSettled();
    ids.push(urlItem);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await get(`/v1/inbox?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, s);
      expect(r.status, r.text).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((d: { id: string }) => d.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    expect((await post(`/v1/inbox/${ids[1]}/archive`, undefined, s)).body.status).toBe('archived');
    expect((await post(`/v1/inbox/${ids[3]}/someday`, undefined, s)).body.status).toBe('someday');
    const byStatus = async (q: string) => (await get(`/v1/inbox?${q}`, s)).body.data.map((d: { id: string }) => d.id);
    expect(await byStatus('status=archived')).toEqual([ids[1]]);
    expect(await byStatus('status=someday')).toEqual([ids[3]]);
    expect(await byStatus('status=open')).toEqual([ids[0], ids[2], ids[4], urlItem]);
    expect(await byStatus('kind=url')).toEqual([urlItem]);
    expect(await byStatus('kind=text&status=open&limit=1')).toEqual([ids[0]]);
    expect(await byStatus('kind=image')).toEqual([]);
    expectProblem(await get('/v1/inbox?status=done', s), 422, 'validation_failed');
    expectProblem(await get('/v1/inbox?kind=video', s), 422, 'validation_failed');
  });

  it('updated_since returns what changed at or after the instant', async () => {
    const u = await registerUser(app);
    const a = (await post('/v1/inbox', { kind: 'text', text: 'old' }, u.session)).body;
    app.clock.advance(60_000);
    const since = new Date(app.clock()).toISOString();
    const b = (await post('/v1/inbox', { kind: 'text', text: 'new' }, u.session)).body;
    expect((await get(`/v1/inbox?updated_since=${since}`, u.session)).body.data.map((d: { id: string }) => d.id)).toEqual([b.id]);
    app.clock.advance(60_000);
    const later = new Date(app.clock()).toISOString();
    await post(`/v1/inbox/${a.id}/archive`, undefined, u.session);
    expect((await get(`/v1/inbox?updated_since=${later}`, u.session)).body.data.map((d: { id: string }) => d.id)).toEqual([a.id]);
  });
});

describe('transitions', () => {
  it('archive and someday answer the item and record inbox.updated; a repeat changes nothing', async () => {
    const item = (await post('/v1/inbox', { kind: 'text', text: 'move me around' })).body;
    const a = await post(`/v1/inbox/${item.id}/archive`);
    expect(a.status, a.text).toBe(200);
    expect(a.body).toMatchObject({ id: item.id, status: 'archived', text: 'move me around' });
    const again = await post(`/v1/inbox/${item.id}/archive`);
    expect(again.body.status).toBe('archived');
    const s = await post(`/v1/inbox/${item.id}/someday`);
    expect(s.status).toBe(200);
    expect(s.body.status).toBe('someday');
    expect(eventTypes(item.id)).toEqual(['inbox.created', 'inbox.updated', 'inbox.updated']);
    expectProblem(await post(`/v1/inbox/${item.id}/archive`, { status: 'open' }), 422, 'validation_failed');
  });
});

describe('ownership, scopes, account size', () => {
  it("another user's items are 404", async () => {
    const item = (await post('/v1/inbox', { kind: 'text', text: 'private' })).body;
    const other = (await registerUser(app)).session;
    expectProblem(await get(`/v1/inbox/${item.id}`, other), 404, 'not_found');
    expectProblem(await post(`/v1/inbox/${item.id}/archive`, undefined, other), 404, 'not_found');
    expectProblem(await post(`/v1/inbox/${item.id}/someday`, undefined, other), 404, 'not_found');
    expect((await get('/v1/inbox', other)).body.data).toEqual([]);
    expect((await get(`/v1/inbox/${item.id}`)).body.status).toBe('open');
  });

  it('inbox:read reads, inbox:write captures; a key without them is forbidden_scope', async () => {
    const reader = await createPat(app, session, ['inbox:read']);
    const writer = await createPat(app, session, ['inbox:write']);
    const none = await createPat(app, session, ['todos:read']);
    expect((await get('/v1/inbox', reader.token)).status).toBe(200);
    expectProblem(await post('/v1/inbox', { kind: 'text', text: 'x' }, reader.token), 403, 'forbidden_scope');
    expect((await post('/v1/inbox', { kind: 'text', text: 'x' }, writer.token)).status).toBe(201);
    expectProblem(await get('/v1/inbox', none.token), 403, 'forbidden_scope');
  });

  it('account_too_large past CAIRN_MAX_ACCOUNT_ITEMS, inbox items counted', async () => {
    const small = await startApp({}, { maxAccountItems: 3 });
    try {
      const s = (await registerUser(small)).session;
      for (let i = 0; i < 3; i++) expect((await call(small, 'POST', '/v1/inbox', { token: s, body: { kind: 'text', text: `i${i}` } })).status).toBe(201);
      expect((await call(small, 'GET', '/v1/inbox?status=open', { token: s })).body.data).toHaveLength(3);
      await call(small, 'POST', '/v1/inbox', { token: s, body: { kind: 'text', text: 'one more' } });
      expectProblem(await call(small, 'GET', '/v1/inbox', { token: s }), 422, 'account_too_large');
      expectProblem(await call(small, 'GET', '/v1/inbox?kind=text', { token: s }), 422, 'account_too_large');
    } finally {
      await small.close();
    }
  });
});

describe('POST /v1/inbox/{id}/move', () => {
  it('a text capture becomes a standalone to-do with its whenDate; the item is moved; events in one go', async () => {
    const item = (await post('/v1/inbox', { kind: 'text', text: 'Call the\nplumber', whenDate: '2026-12-24' })).body;
    const r = await post(`/v1/inbox/${item.id}/move`, {});
    expect(r.status, r.text).toBe(200);
    expect(r.body.item).toMatchObject({ id: item.id, status: 'moved', text: 'Call the\nplumber' });
    expect(r.body.todo).toMatchObject({ title: 'Call the plumber', whenDate: '2026-12-24', parentId: null, status: 'open' });
    expect((await get(`/v1/todos/${r.body.todo.id}`)).body.title).toBe('Call the plumber');
    expect((await get(`/v1/attachments?parent_id=${r.body.todo.id}`)).body.data).toEqual([]);
    expect(eventTypes(item.id)).toEqual(['inbox.created', 'inbox.updated']);
    expect(eventTypes(r.body.todo.id)).toEqual(['todo.created']);
    // Moving twice is a conflict and makes nothing.
    const todos = (await get('/v1/todos?limit=200')).body.data.length;
    expectProblem(await post(`/v1/inbox/${item.id}/move`, {}), 409, 'conflict');
    expect((await get('/v1/todos?limit=200')).body.data.length).toBe(todos);
    expectProblem(await post(`/v1/inbox/${item.id}/archive`), 409, 'conflict');
    expect((await get(`/v1/inbox?status=moved`)).body.data.map((d: { id: string }) => d.id)).toContain(item.id);
  });

  it('a url capture: the fetched title names the to-do, the url is kept as a url attachment, into a project', async () => {
    const project = (await post('/v1/containers', { kind: 'project', name: 'Reading' })).body;
    const item = (await post('/v1/inbox', { kind: 'url', url: page('/article', '<title>An article</title>'), whenDate: '2027-01-02' })).body;
    await inboxTitlesSettled();
    const r = await post(`/v1/inbox/${item.id}/move`, { parentId: project.id });
    expect(r.status, r.text).toBe(200);
    expect(r.body.todo).toMatchObject({ title: 'An article', whenDate: '2027-01-02', parentId: project.id });
    const atts = (await get(`/v1/attachments?parent_id=${r.body.todo.id}`)).body.data;
    expect(atts).toHaveLength(1);
    expect(atts[0]).toMatchObject({ parentType: 'todo', parentId: r.body.todo.id, kind: 'url', url: item.url, title: 'An article' });
    expect(eventTypes(atts[0].id)).toEqual(['attachment.created']);
    expect(eventTypes(item.id)).toEqual(['inbox.created', 'inbox.updated', 'inbox.updated']);
  });

  it('a url capture without a title is named by its url; archived and someday items move', async () => {
    const a = (await post('/v1/inbox', { kind: 'url', url: 'https://nowhere.invalid/page' })).body;
    await inboxTitlesSettled();
    await post(`/v1/inbox/${a.id}/archive`);
    const r = await post(`/v1/inbox/${a.id}/move`, {});
    expect(r.status, r.text).toBe(200);
    expect(r.body.todo.title).toBe('https://nowhere.invalid/page');
    const b = (await post('/v1/inbox', { kind: 'text', text: 'someday thing' })).body;
    await post(`/v1/inbox/${b.id}/someday`);
    expect((await post(`/v1/inbox/${b.id}/move`, {})).body.item.status).toBe('moved');
  });

  it('a bad parentId is refused at /parentId and nothing moves; scopes need inbox:write and todos:write', async () => {
    const item = (await post('/v1/inbox', { kind: 'text', text: 'stay' })).body;
    const area = (await post('/v1/containers', { kind: 'area', name: 'Area' })).body;
    for (const parentId of ['5F0E0D0C-0B0A-4908-8706-050403020100', area.id]) {
      const p = expectProblem(await post(`/v1/inbox/${item.id}/move`, { parentId }), 422, 'validation_failed');
      expect(p.errors?.map((e) => e.pointer)).toEqual(['/parentId']);
    }
    expect((await get(`/v1/inbox/${item.id}`)).body.status).toBe('open');
    const inboxOnly = await createPat(app, session, ['inbox:write', 'inbox:read']);
    expectProblem(await post(`/v1/inbox/${item.id}/move`, {}, inboxOnly.token), 403, 'forbidden_scope');
    const both = await createPat(app, session, ['inbox:write', 'todos:write']);
    expect((await post(`/v1/inbox/${item.id}/move`, {}, both.token)).status).toBe(200);
    const other = (await registerUser(app)).session;
    const mine = (await post('/v1/inbox', { kind: 'text', text: 'mine' })).body;
    expectProblem(await post(`/v1/inbox/${mine.id}/move`, {}, other), 404, 'not_found');
  });
});

describe('POST /v1/inbox/files: file and image captures', () => {
  const capture = (body: Buffer, contentType: string, query = '', token = session) =>
    fetch(`${app.url}/v1/inbox/files${query}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body }).then(async (r) => {
      const text = await r.text();
      return { status: r.status, headers: r.headers, text, body: text ? JSON.parse(text) : undefined };
    });
  const download = async (attachmentId: string, token = session) => {
    const r = await fetch(`${app.url}/v1/attachments/${attachmentId}/file`, { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
  };

  it('an image/* body is an image capture, anything else a file; the bytes round trip', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(200_000, 7)]);
    const img = await capture(png, 'image/png', '?title=Whiteboard&whenDate=2026-12-05');
    expect(img.status, img.text).toBe(201);
    expect(img.body).toMatchObject({ kind: 'image', title: 'Whiteboard', whenDate: '2026-12-05', status: 'open', text: null, url: null });
    const got = await download(img.body.attachmentId);
    expect(got.status).toBe(200);
    expect(got.type).toBe('image/png');
    expect(got.bytes.equals(png)).toBe(true);
    const att = (await get(`/v1/attachments/${img.body.attachmentId}`)).body;
    expect(att).toMatchObject({ parentType: 'inbox', parentId: img.body.id, kind: 'file', size: png.length });
    expect(eventTypes(img.body.id)).toEqual(['inbox.created']);
    expect(eventTypes(att.id)).toEqual(['attachment.created']);

    const pdf = Buffer.from('%PDF-1.4 not really');
    const file = await capture(pdf, 'application/pdf');
    expect(file.status, file.text).toBe(201);
    expect(file.body).toMatchObject({ kind: 'file', title: null, whenDate: null });
    expect((await download(file.body.attachmentId)).bytes.equals(pdf)).toBe(true);
    expect((await get(`/v1/inbox/${file.body.id}`)).body).toEqual(file.body);
    const kinds = (await get('/v1/inbox?kind=image')).body.data.map((d: { id: string }) => d.id);
    expect(kinds).toContain(img.body.id);
    expect(kinds).not.toContain(file.body.id);
  });

  it('a moved file capture keeps its file: the attachment is re-parented to the new to-do', async () => {
    const bytes = Buffer.from('meeting notes scan');
    const item = (await capture(bytes, 'application/octet-stream', '?title=Scan')).body;
    const r = await post(`/v1/inbox/${item.id}/move`, {});
    expect(r.status, r.text).toBe(200);
    expect(r.body.todo.title).toBe('Scan');
    const atts = (await get(`/v1/attachments?parent_id=${r.body.todo.id}`)).body.data;
    expect(atts.map((a: { id: string }) => a.id)).toEqual([item.attachmentId]);
    expect(atts[0]).toMatchObject({ parentType: 'todo', parentId: r.body.todo.id, kind: 'file' });
    expect((await download(item.attachmentId)).bytes.equals(bytes)).toBe(true);
    expect(eventTypes(item.attachmentId)).toEqual(['attachment.created', 'attachment.updated']);
    // An untitled image is named by its kind.
    const img = (await capture(Buffer.from('GIF89a'), 'image/gif')).body;
    expect((await post(`/v1/inbox/${img.id}/move`, {})).body.todo.title).toBe('Image');
  });

  it('a moved file capture’s attachment takes the capture’s name, sealed; a title given meanwhile is kept', async () => {
    const item = (await capture(Buffer.from('%PDF-1.4 invoice'), 'application/pdf', `?title=${encodeURIComponent('Invoice March.pdf')}`)).body;
    // In the Inbox the name is the capture's (the attachment is stored untitled).
    expect((await get(`/v1/attachments/${item.attachmentId}`)).body).toMatchObject({ parentType: 'inbox', kind: 'file', title: null });
    const moved = (await post(`/v1/inbox/${item.id}/move`, {})).body;
    expect(moved.todo.title).toBe('Invoice March.pdf');
    expect((await get(`/v1/attachments?parent_id=${moved.todo.id}`)).body.data).toEqual([
      expect.objectContaining({ id: item.attachmentId, parentType: 'todo', kind: 'file', title: 'Invoice March.pdf', contentType: 'application/pdf', size: 16 }),
    ]);
    expect(eventTypes(item.attachmentId)).toEqual(['attachment.created', 'attachment.updated']);
    // Sealed with the rest of the attachment's metadata under the row's binding, not in the clear.
    const { dek } = await authenticate(app.deps, `Bearer ${session}`);
    const sealed = app.deps.db.$client.prepare('SELECT sealed FROM attachments WHERE id = ?').pluck().get(item.attachmentId) as Buffer;
    expect(sealed.includes(Buffer.from('Invoice March'))).toBe(false);
    expect(openJson<{ title: string }>(dek, rowAad(userId, 'attachments', item.attachmentId), sealed).title).toBe('Invoice March.pdf');
    expect((await download(item.attachmentId)).bytes.toString()).toBe('%PDF-1.4 invoice');

    // A title set on the attachment while it was in the Inbox wins over the capture's.
    const renamed = (await capture(Buffer.from('jpeg'), 'image/jpeg', '?title=IMG_0042.jpg')).body;
    expect((await call(app, 'PATCH', `/v1/attachments/${renamed.attachmentId}`, { token: session, body: { title: 'Receipt, hardware store' } })).status).toBe(200);
    await post(`/v1/inbox/${renamed.id}/move`, {});
    expect((await get(`/v1/attachments/${renamed.attachmentId}`)).body).toMatchObject({ parentType: 'todo', title: 'Receipt, hardware store' });
    // An untitled capture's file stays untitled (its to-do is named by the kind).
    const bare = (await capture(Buffer.from('bytes'), 'application/octet-stream')).body;
    const bareTodo = (await post(`/v1/inbox/${bare.id}/move`, {})).body.todo;
    expect(bareTodo.title).toBe('File');
    expect((await get(`/v1/attachments/${bare.attachmentId}`)).body).toMatchObject({ parentId: bareTodo.id, title: null });
  });

  it('bad queries are 422 at their pointers, scopes are inbox:write, too large is 413; nothing is left staged', async () => {
    expect(expectProblem(await capture(Buffer.from('x'), 'text/plain', '?whenDate=2026-13-01') as never, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/whenDate');
    expect(expectProblem(await capture(Buffer.from('x'), 'text/plain', `?title=${'t'.repeat(513)}`) as never, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/title');
    expect(expectProblem(await capture(Buffer.from('x'), 'text/plain', '?parentId=x') as never, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    const reader = await createPat(app, session, ['inbox:read', 'attachments:write']);
    expectProblem(await capture(Buffer.from('x'), 'text/plain', '', reader.token) as never, 403, 'forbidden_scope');
    const before = (await get('/v1/inbox?limit=200')).body.data.length;
    const big = Buffer.alloc(app.deps.config.maxUploadBytes + 1, 1);
    expectProblem(await capture(big, 'application/octet-stream') as never, 413, 'payload_too_large');
    expect((await get('/v1/inbox?limit=200')).body.data.length).toBe(before);
    const staged = app.deps.db.$client.prepare('SELECT count(*) AS n FROM pending_uploads').get() as { n: number };
    expect(staged.n).toBe(0);
  });
});

describe('search: inbox items (types=inbox)', () => {
  it('finds open and archived items by text, url and fetched title; a moved item is found as its to-do only', async () => {
    const u = await registerUser(app);
    const s = u.session;
    const text = (await post('/v1/inbox', { kind: 'text', text: 'Quokka feeding schedule\nsecond line' }, s)).body;
    const url = (await post('/v1/inbox', { kind: 'url', url: page('/marsupial', '<title>All about Wombats</title>') }, s)).body;
    await inboxTitlesSettled();
    const moved = (await post('/v1/inbox', { kind: 'text', text: 'Quokka photos to sort' }, s)).body;
    await post(`/v1/inbox/${text.id}/archive`, undefined, s);
    const todo = (await post(`/v1/inbox/${moved.id}/move`, {}, s)).body.todo;
    const found = async (q: string, types = 'inbox') => (await get(`/v1/search?q=${encodeURIComponent(q)}&types=${types}`, s)).body.data as { type: string; id: string; title: string }[];
    expect(await found('quokka')).toEqual([expect.objectContaining({ type: 'inbox', id: text.id, title: 'Quokka feeding schedule' })]);
    expect((await found('wombats')).map((h) => [h.type, h.id, h.title])).toEqual([['inbox', url.id, 'All about Wombats']]);
    expect((await found('marsupial')).map((h) => h.id)).toEqual([url.id]);
    expect((await found('quokka', 'inbox,todo')).map((h) => [h.type, h.id]).sort()).toEqual([['inbox', text.id], ['todo', todo.id]].sort());
    // Another user finds nothing; a key without inbox:read does not search the inbox.
    expect((await get('/v1/search?q=quokka&types=inbox', session)).body.data).toEqual([]);
    const todosOnly = await createPat(app, s, ['todos:read']);
    expect((await get('/v1/search?q=quokka', todosOnly.token)).body.data.map((h: { type: string }) => h.type)).toEqual(['todo']);
  });
});

describe('the title task over /trpc', () => {
  it('starts after the answer on the fast path and on tRPC’s own adapter', async () => {
    const variants: Record<string, string>[] = [{}, { 'trpc-accept': 'application/json' }];
    for (const headers of variants) {
      const url = page(`/trpc-${Object.keys(headers).length}`, '<title>Through tRPC</title>');
      const r = await call(app, 'POST', '/trpc/inbox.create', { token: session, body: { json: { kind: 'url', url } }, headers });
      expect(r.status, r.text).toBe(200);
      const id = r.body.result.data.json.id as string;
      expect(r.body.result.data.json.title).toBeNull();
      await inboxTitlesSettled();
      expect((await get(`/v1/inbox/${id}`)).body.title).toBe('Through tRPC');
      expect(eventTypes(id)).toEqual(['inbox.created', 'inbox.updated']);
    }
  });
});
