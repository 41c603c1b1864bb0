// Issue 33 items 2 and 3: GET /v1/export (first-party only, no-store, valid against
// docs/export-schema.json), and the round trip through Cairn's own importer: export → import into
// a new account → export again is identical but for ids, times and sort keys; a second run creates
// nothing; a dry run reports and writes nothing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app.close();
});

const schema = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'export-schema.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const validate = ajv.compile(schema);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ok(p: ReturnType<typeof call>, what: string): Promise<any> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/** An account with one of everything the export carries. */
async function seedAccount(token: string): Promise<void> {
  const post = (p: string, body: unknown) => ok(call(app, 'POST', p, { token, body }), p);
  await ok(call(app, 'PATCH', '/v1/settings', { token, body: { weekStart: 'sunday' } }), 'settings');
  await post('/v1/tags', { name: 'errand', colorHex: '#ff0000' });
  const area = await post('/v1/containers', { kind: 'area', name: 'Home' });
  const project = await post('/v1/containers', { kind: 'project', name: 'Move house', parentId: area.id, notes: 'by spring', deadline: '2027-03-01', priority: 'high' });
  const sub = await post('/v1/containers', { kind: 'subproject', name: 'Packing', parentId: project.id });
  const archived = await post('/v1/containers', { kind: 'project', name: 'Old stuff' });
  await ok(call(app, 'POST', `/v1/containers/${archived.id}/archive`, { token }), 'archive');
  const trashed = await post('/v1/containers', { kind: 'project', name: 'Abandoned' });
  await post('/v1/todos', { title: 'In the trashed project', parentId: trashed.id });
  const h1 = await post('/v1/headings', { projectId: project.id, name: 'Before' });
  await post('/v1/headings', { projectId: project.id, name: 'After' });
  const t1 = await post('/v1/todos', {
    title: 'Book movers',
    notes: 'three quotes',
    parentId: project.id,
    headingId: h1.id,
    whenDate: '2026-12-01',
    evening: true,
    deadline: '2026-12-10',
    priority: 'medium',
    tags: ['errand', 'phone'],
    checklist: [{ title: 'Company A' }, { title: 'Company B', done: true }],
  });
  await post('/v1/todos', { title: 'Second in band', parentId: project.id, headingId: h1.id });
  await post('/v1/todos', { title: 'Water plants', whenDate: '2026-11-20', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' } });
  const done = await post('/v1/todos', { title: 'Pack books', parentId: sub.id });
  await ok(call(app, 'POST', `/v1/todos/${done.id}/complete`, { token }), 'complete');
  const canceled = await post('/v1/todos', { title: 'Sell piano', someday: true });
  await ok(call(app, 'POST', `/v1/todos/${canceled.id}/cancel`, { token }), 'cancel');
  const gone = await post('/v1/todos', { title: 'Trashed one' });
  await ok(call(app, 'POST', `/v1/todos/${gone.id}/trash`, { token }), 'trash todo');
  await ok(call(app, 'POST', `/v1/containers/${trashed.id}/trash`, { token }), 'trash container');
  const folder = await post('/v1/note-folders', { name: 'Journal', colorHex: '#00ff00' });
  await post('/v1/note-folders', { name: 'Daily', parentId: folder.id });
  const note = await post('/v1/notes', { title: 'Ideas', body: 'first', folderId: folder.id });
  await ok(call(app, 'PATCH', `/v1/notes/${note.id}`, { token, body: { body: 'first\nsecond' } }), 'note edit');
  await post('/v1/notes', { title: null, body: 'project note', parentId: project.id });
  await post('/v1/filters', { name: 'Errands', criteria: '#errand', symbol: null });
  await post('/v1/inbox', { kind: 'text', text: 'call mum', whenDate: '2026-12-24' });
  const later = await post('/v1/inbox', { kind: 'text', text: 'maybe later' });
  await ok(call(app, 'POST', `/v1/inbox/${later.id}/someday`, { token }), 'inbox someday');
  await post('/v1/attachments', { parentType: 'todo', parentId: t1.id, kind: 'url', url: 'https://example.com/movers', title: 'Quotes' });
  await post('/v1/attachments', { parentType: 'container', parentId: project.id, kind: 'note', noteId: note.id });
  // A file of more than one sealed chunk with a length that is not a multiple of 3 (base64 carry).
  const bytes = Buffer.alloc(70_001);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
  const file = await fetch(`${app.url}/v1/attachments/files?parentType=todo&parentId=${t1.id}&title=scan`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/pdf' },
    body: bytes,
  });
  expect(file.status).toBe(201);
  const capture = await fetch(`${app.url}/v1/inbox/files?title=receipt`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' }, body: Buffer.from('png bytes') });
  expect(capture.status).toBe(201);
}

async function exportOf(token: string) {
  const res = await fetch(`${app.url}/v1/export`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return JSON.parse(await res.text()) as Record<string, unknown>;
}

/** Waits (event-loop turns, never a timer) until the job is no longer running. */
async function finished(token: string, id: string) {
  for (let i = 0; i < 10_000; i++) {
    const r = await call(app, 'GET', `/v1/imports/${id}`, { token });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    if (r.body.status !== 'running') return r.body;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('import job never finished');
}

async function runImport(token: string, source: string, body: string | Buffer, query = '') {
  const res = await fetch(`${app.url}/v1/imports?source=${source}${query}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
  const json = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(json)).toBe(202);
  expect(res.headers.get('location')).toBe(`/v1/imports/${json.id}`);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return finished(token, json.id);
}

/**
 * The export without what may differ between accounts: ids (replaced by a label from the record's
 * own content, unique in this fixture), times, sort keys, note history; and each list sorted,
 * since lists grouped by container are in the order of the containers' ids.
 */
function normalise(doc: Record<string, unknown>) {
  const ids = new Map<string, string>();
  const label = (o: Record<string, unknown>) => String(o.name ?? o.title ?? o.text ?? o.body ?? o.url ?? o.kind);
  for (const [section, list] of Object.entries(doc)) {
    if (!Array.isArray(list)) continue;
    for (const o of list as Record<string, unknown>[]) {
      ids.set(String(o.id), `${section}:${label(o)}`);
      for (const item of (o.checklist as Record<string, unknown>[] | undefined) ?? []) ids.set(String(item.id), `item:${label(item)}`);
    }
  }
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.every((x) => x && typeof x === 'object' && 'id' in x) ? out.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) : out;
    }
    if (typeof v === 'string') return ids.get(v) ?? v;
    if (!v || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (['createdAt', 'updatedAt', 'exportedAt', 'sortKey', 'versions'].includes(k)) continue;
      if (k === 'trashedAt' || k === 'completedAt') out[k] = x !== null;
      else out[k] = walk(x);
    }
    return out;
  };
  return walk(doc);
}

describe('GET /v1/export', () => {
  it('streams every section, valid against docs/export-schema.json, no-store', async () => {
    const u = await registerUser(app);
    await seedAccount(u.session);
    const doc = await exportOf(u.session);
    const valid = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    expect(doc.format).toBe('cairn-export');
    expect(doc.version).toBe(1);
    expect(doc.settings).toEqual({ weekStart: 'sunday' });
    const todos = doc.todos as { title: string; status: string; trashedAt: string | null; checklist: unknown[]; tags: string[] }[];
    expect(todos.map((t) => t.title)).toEqual(expect.arrayContaining(['Book movers', 'Pack books', 'Sell piano', 'Trashed one', 'In the trashed project', 'Water plants']));
    expect(todos.find((t) => t.title === 'Book movers')).toMatchObject({ tags: ['errand', 'phone'], checklist: [{ title: 'Company A', done: false }, { title: 'Company B', done: true }] });
    const notes = doc.notes as { title: string | null; versions: { body: string }[] }[];
    expect(notes.find((n) => n.title === 'Ideas')!.versions.map((v) => v.body)).toEqual(['first', 'first\nsecond']);
    const files = (doc.attachments as { kind: string; title: string | null; file?: { base64: string; size: number } }[]).filter((a) => a.kind === 'file');
    const scan = files.find((f) => f.title === 'scan')!;
    const bytes = Buffer.from(scan.file!.base64, 'base64');
    expect(bytes.length).toBe(70_001);
    expect(bytes.every((b, i) => b === ((i * 31) & 0xff))).toBe(true);
    expect(Buffer.from(files.find((f) => f.title === null)!.file!.base64, 'base64').toString()).toBe('png bytes');
  });

  it('is for first-party sessions only: a personal token gets 403 forbidden_scope, none 401', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tasks:read', 'tasks:write']);
    expectProblem(await call(app, 'GET', '/v1/export', { token: pat.token }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'GET', '/v1/export'), 401, 'unauthorized');
  });
});

describe('import of a Cairn export', () => {
  it('round trip: export → import into a new account → export is identical but for ids and times; a re-run creates nothing', async () => {
    const a = await registerUser(app);
    await seedAccount(a.session);
    const text = await (await fetch(`${app.url}/v1/export`, { headers: { authorization: `Bearer ${a.session}` } })).text();
    const first = JSON.parse(text) as Record<string, unknown>;

    const b = await registerUser(app);
    const job = await runImport(b.session, 'cairn', text);
    expect(job.status).toBe('succeeded');
    expect(job.report.failed).toEqual([]);
    expect(job.report.created).toMatchObject({ tags: 2, containers: 5, headings: 2, noteFolders: 2, notes: 2, filters: 1, inbox: 3, attachments: 3 });
    expect(job.report.unmapped).toEqual([expect.stringMatching(/earlier version/)]);
    const second = await exportOf(b.session);
    expect(normalise(second)).toEqual(normalise(first));

    const again = await runImport(b.session, 'cairn', text);
    expect(again.status).toBe('succeeded');
    expect(Object.values(again.report.created).every((n) => n === 0)).toBe(true);
    expect(again.report.existing).toEqual(job.report.created);
    expect(normalise(await exportOf(b.session))).toEqual(normalise(first));
  });

  it('a dry run reports what would be made and writes nothing', async () => {
    const a = await registerUser(app);
    await seedAccount(a.session);
    const text = await (await fetch(`${app.url}/v1/export`, { headers: { authorization: `Bearer ${a.session}` } })).text();
    const c = await registerUser(app);
    const before = normalise(await exportOf(c.session));
    const job = await runImport(c.session, 'cairn', text, '&dryRun=true');
    expect(job.status).toBe('succeeded');
    expect(job.report.dryRun).toBe(true);
    expect(job.report.created.todos).toBe((JSON.parse(text).todos as unknown[]).length);
    expect(normalise(await exportOf(c.session))).toEqual(before);
  });

  it('refuses what is not a Cairn export (422), a body over CAIRN_MAX_IMPORT_BYTES (413), and personal tokens (403)', async () => {
    const u = await registerUser(app);
    const bad = await call(app, 'POST', '/v1/imports?source=cairn', { token: u.session, rawBody: '{"format":"other"}' });
    expectProblem(bad, 422, 'validation_failed');
    const small = await startApp({ CAIRN_MAX_IMPORT_BYTES: '100' });
    try {
      const v = await registerUser(small);
      expectProblem(await call(small, 'POST', '/v1/imports?source=cairn', { token: v.session, rawBody: 'x'.repeat(101) }), 413, 'payload_too_large');
    } finally {
      await small.close();
    }
    const pat = await createPat(app, u.session, ['tasks:read', 'tasks:write']);
    expectProblem(await call(app, 'POST', '/v1/imports?source=cairn', { token: pat.token, rawBody: '{}' }), 403, 'forbidden_scope');
    expectProblem(await call(app, 'GET', `/v1/imports/${'A'.repeat(8)}-0000-4000-8000-000000000000`, { token: u.session }), 404, 'not_found');
  });
});
