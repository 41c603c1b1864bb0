// Issue 31 item 3 (docs/mcp.md "Tools", "Results"): the SDK's own Client over streamable HTTP with
// an `mcp` personal token drives the workflow tools end to end; what they write is what /v1 reads
// (the same models); input errors are tool errors with the problem's code, message and pointer;
// lists page and stay under the 256 KiB cap; content written through MCP is sealed at rest; writes
// count against the per-credential write bucket.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { RESULT_CAP_BYTES } from '../../mcp/results.js';
import { inboxTitlesSettled } from '../../routers/inbox/model.js';
import type { Resolver } from '../../core/net/index.js';
import { html, pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';
import { callTool, mcpClient, mcpToken, type ToolResult } from './helpers.js';

// A url capture's title is fetched after the answer, from a loopback HTTPS page (names resolve to
// loopback only: nothing leaves the machine).
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};
let app: TestApp;
let site: PageServer;
beforeAll(async () => {
  const cert = selfSignedCert();
  site = await pageServer((_req, res) => html(res, '<html><head><title>The article</title></head></html>'), cert);
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { outbound: { resolver, ca: cert.cert } });
});
afterAll(async () => {
  await inboxTitlesSettled();
  await site.close();
  await app.close();
});

async function user(scopes = ['tasks:write']) {
  const u = await registerUser(app);
  const client = await mcpClient(app, await mcpToken(app, u.session, scopes));
  return { ...u, client };
}

const okData = (r: ToolResult) => {
  if (r.isError) throw new Error(`tool error: ${r.content[0]?.text}`);
  return r.structuredContent;
};
const bytes = (r: ToolResult) => Buffer.byteLength(JSON.stringify(r), 'utf8');

describe('end to end with the SDK client and an mcp token', () => {
  let u: Awaited<ReturnType<typeof user>>;
  beforeAll(async () => {
    u = await user();
  });
  afterAll(() => u.client.close());

  it('adds to-dos (when, project and heading by name, tags, checklist), finds them by view, project and words', async () => {
    // The SDK client negotiated the current, stateless revision (server/discover).
    expect(u.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const project = okData(await callTool(u.client, 'add_project', { name: 'Errands', headings: ['Bank', 'Shop'] }));
    expect(project.container).toMatchObject({ kind: 'project', name: 'Errands', headings: [{ name: 'Bank' }, { name: 'Shop' }] });
    const added = await callTool(u.client, 'add_todos', {
      today: '2026-11-26',
      todos: [
        { title: 'call the bank', when: 'today', project: 'errands', heading: 'Bank', tags: ['phone'], checklist: ['find the number', 'ask about fees'] },
        { title: 'buy stamps', when: 'tomorrow', deadline: '2026-11-30', project: project.container.id },
        { title: 'read the book', when: 'someday' },
        { title: 'plan the evening', when: 'evening' },
      ],
    });
    const todos = okData(added).todos;
    expect(added.content[0]!.text).toMatch(/^Added 4 to-dos\.\n- \[ \] call the bank · id /);
    expect(todos[0]).toMatchObject({ when: '2026-11-26', evening: false, projectId: project.container.id, headingId: project.container.headings[0].id, tags: ['phone'], checklist: [{ title: 'find the number', done: false }, { title: 'ask about fees', done: false }] });
    expect(todos[1]).toMatchObject({ when: '2026-11-27', deadline: '2026-11-30' });
    expect(todos[2]).toMatchObject({ when: null, someday: true });
    expect(todos[3]).toMatchObject({ when: '2026-11-26', evening: true });

    // What MCP wrote is what /v1 reads.
    const rest = await call(app, 'GET', `/v1/todos/${todos[0].id}`, { token: u.session });
    expect(rest.body).toMatchObject({ title: 'call the bank', whenDate: '2026-11-26', parentId: project.container.id, tags: ['phone'] });

    const today = okData(await callTool(u.client, 'find_todos', { view: 'today', today: '2026-11-26' }));
    expect(today.todos.map((t: { title: string }) => t.title)).toEqual(['call the bank', 'plan the evening']);
    const upcoming = okData(await callTool(u.client, 'find_todos', { view: 'upcoming', today: '2026-11-26' }));
    expect(upcoming.todos.map((t: { title: string; occursOn: string }) => [t.title, t.occursOn])).toEqual([['buy stamps', '2026-11-27']]);
    const someday = okData(await callTool(u.client, 'find_todos', { view: 'someday', today: '2026-11-26' }));
    expect(someday.todos.map((t: { title: string }) => t.title)).toEqual(['read the book']);
    const inProject = okData(await callTool(u.client, 'find_todos', { project: 'Errands' }));
    expect(inProject.todos.map((t: { title: string }) => t.title).sort()).toEqual(['buy stamps', 'call the bank']);
    const underHeading = okData(await callTool(u.client, 'find_todos', { project: 'Errands', heading: 'bank' }));
    expect(underHeading.todos.map((t: { title: string }) => t.title)).toEqual(['call the bank']);
    const tagged = okData(await callTool(u.client, 'find_todos', { tag: 'PHONE' }));
    expect(tagged.todos.map((t: { title: string }) => t.title)).toEqual(['call the bank']);
    const byWords = okData(await callTool(u.client, 'find_todos', { text: 'fees' }));
    expect(byWords.todos.map((t: { title: string }) => t.title)).toEqual(['call the bank']);
    const hits = okData(await callTool(u.client, 'search', { q: 'bank' }));
    expect(hits.hits.map((h: { type: string; title: string }) => `${h.type}:${h.title}`)).toEqual(expect.arrayContaining(['todo:call the bank', 'heading:Bank']));
    const one = await callTool(u.client, 'get_todo', { id: todos[0].id });
    expect(okData(one)).toMatchObject({ id: todos[0].id, checklist: [{ title: 'find the number' }, { title: 'ask about fees' }] });
    expect(one.content[0]!.text).toContain('[ ] find the number');
  });

  it('completes, moves, changes and trashes to-dos in one batch; the logbook and overview follow', async () => {
    const added = okData(await callTool(u.client, 'add_todos', { today: '2026-11-26', todos: [{ title: 'pay rent', when: 'today' }, { title: 'water plants', when: 'today' }, { title: 'old idea' }] })).todos;
    const changed = await callTool(u.client, 'update_todos', {
      today: '2026-11-26',
      todos: [
        { id: added[0].id, action: 'complete' },
        { id: added[1].id, title: 'water the plants', when: 'evening', tags: ['home'], project: 'Errands' },
        { id: added[2].id, action: 'trash' },
      ],
    });
    const out = okData(changed).todos;
    expect(out[0]).toMatchObject({ status: 'completed' });
    expect(out[1]).toMatchObject({ title: 'water the plants', evening: true, tags: ['home'] });
    expect(out[1].projectId).not.toBeNull();
    expect(out[2]).toMatchObject({ trashed: true });
    const logbook = okData(await callTool(u.client, 'find_todos', { view: 'logbook', today: '2026-11-26' }));
    expect(logbook.todos.map((t: { title: string }) => t.title)).toContain('pay rent');
    expect((await call(app, 'GET', `/v1/todos/${added[0].id}`, { token: u.session })).body.status).toBe('completed');
    const reopened = okData(await callTool(u.client, 'update_todos', { todos: [{ id: added[0].id, action: 'reopen' }] })).todos;
    expect(reopened[0].status).toBe('open');
    const overview = await callTool(u.client, 'overview', { today: '2026-11-26' });
    expect(okData(overview).counts.today).toBeGreaterThan(0);
    expect(overview.content[0]!.text).toMatch(/^2026-11-26: \d+ today/);
    const projects = okData(await callTool(u.client, 'find_projects', { today: '2026-11-26' }));
    const errands = projects.containers.find((c: { name: string }) => c.name === 'Errands');
    expect(errands.openCount).toBeGreaterThan(0);
    expect(errands.headings.map((h: { name: string }) => h.name)).toEqual(['Bank', 'Shop']);
  });

  it('captures to the inbox, lists it and makes a to-do of a capture; notes are written and read', async () => {
    const cap = okData(await callTool(u.client, 'capture', { text: 'ask Sam about the trip' }));
    expect(cap.item).toMatchObject({ kind: 'text', status: 'open' });
    const inbox = okData(await callTool(u.client, 'find_inbox', {}));
    expect(inbox.items.map((i: { id: string }) => i.id)).toContain(cap.item.id);
    const moved = okData(await callTool(u.client, 'process_inbox', { id: cap.item.id, action: 'to_todo', project: 'Errands' }));
    expect(moved.item.status).toBe('moved');
    expect(moved.todo.title).toBe('ask Sam about the trip');
    const note = okData(await callTool(u.client, 'add_note', { title: 'Trip', body: 'Pack light.\nBring the charger.', project: 'Errands' }));
    expect(note.note).toMatchObject({ title: 'Trip', body: 'Pack light.\nBring the charger.' });
    const found = okData(await callTool(u.client, 'find_notes', { text: 'charger' }));
    expect(found.notes.map((n: { id: string }) => n.id)).toEqual([note.note.id]);
    const inProject = okData(await callTool(u.client, 'find_notes', { project: 'Errands' }));
    expect(inProject.notes.map((n: { id: string }) => n.id)).toEqual([note.note.id]);
    expect(okData(await callTool(u.client, 'get_note', { id: note.note.id }))).toMatchObject({ body: 'Pack light.\nBring the charger.', body_next_offset: null });
    const later = okData(await callTool(u.client, 'capture', { url: `${site.origin}/article`, when: '2026-12-01' }));
    expect(later.item).toMatchObject({ kind: 'url', url: `${site.origin}/article`, title: null, when: '2026-12-01' });
    // As through POST /v1/inbox, the page title is fetched once the answer has gone out.
    await inboxTitlesSettled();
    expect(okData(await callTool(u.client, 'find_inbox', {})).items.find((i: { id: string }) => i.id === later.item.id).title).toBe('The article');
    const archived = okData(await callTool(u.client, 'process_inbox', { id: later.item.id, action: 'archive' }));
    expect(archived).toMatchObject({ item: { status: 'archived' }, todo: null });
  });

  it('adds an area and a project in it by name; finds to-dos through a saved filter', async () => {
    const area = okData(await callTool(u.client, 'add_project', { name: 'Home', kind: 'area' })).container;
    expect(area).toMatchObject({ kind: 'area', parentId: null });
    const inArea = okData(await callTool(u.client, 'add_project', { name: 'Garden', area: 'home' })).container;
    expect(inArea.parentId).toBe(area.id);
    expect(okData(await callTool(u.client, 'find_projects', { kind: 'area' })).containers.map((c: { name: string }) => c.name)).toEqual(['Home']);
    const filter = await call(app, 'POST', '/v1/filters', { token: u.session, body: { name: 'Phone calls', criteria: '#phone' } });
    expect(filter.status).toBe(201);
    const viaFilter = okData(await callTool(u.client, 'find_todos', { filter_id: filter.body.id, today: '2026-11-26' }));
    expect(viaFilter.todos.map((t: { title: string }) => t.title)).toEqual(['call the bank']);
  });

  it('serves a client that opens with the 2025-11-25 handshake (the SDK default) the same tools', async () => {
    const legacy = await mcpClient(app, await mcpToken(app, u.session, ['tasks:write']), 'legacy');
    expect(legacy.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect((await legacy.listTools()).tools.length).toBe(14);
    expect(okData(await callTool(legacy, 'find_todos', { project: 'Errands' })).todos.length).toBeGreaterThan(0);
    await legacy.close();
  });

  it("uses the server's UTC date without `today` (the manual clock's day)", async () => {
    const t = okData(await callTool(u.client, 'add_todos', { todos: [{ title: 'no date given', when: 'tomorrow' }] })).todos[0];
    expect(t.when).toBe('2026-11-22');
  });
});

describe('input errors are tool errors with the problem\'s code, message and pointer', () => {
  let client: Client;
  beforeAll(async () => {
    client = (await user()).client;
  });
  afterAll(() => client.close());

  const expectError = (r: ToolResult, code: string, pointer?: string) => {
    expect(r.isError, JSON.stringify(r)).toBe(true);
    expect(r.structuredContent.error.code).toBe(code);
    expect(r.structuredContent.error.message).toBeTruthy();
    if (pointer !== undefined) expect(r.structuredContent.error.pointer).toBe(pointer);
    expect(r.content[0]!.text).toMatch(new RegExp(`^${code}: `));
  };

  it('schema errors: a wrong type, a missing field, an unknown property, a bad date, a bad when', async () => {
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 5 }] }), 'validation_failed', '/todos/0/title');
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'ok' }, {}] }), 'validation_failed', '/todos/1/title');
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'ok', colour: 'red' }] }), 'validation_failed', '/todos/0/colour');
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'ok', deadline: '2026-02-30' }] }), 'validation_failed', '/todos/0/deadline');
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'ok', when: 'soon' }] }), 'validation_failed', '/todos/0/when');
    expectError(await callTool(client, 'find_todos', { view: 'today', today: 'tomorrow' }), 'validation_failed', '/today');
  });

  it('model errors: an unknown project id, an unknown name, an unknown to-do; a batch is all or none', async () => {
    const before = (await callTool(client, 'find_todos', { view: 'anytime' })).structuredContent.todos.length;
    // The model's pointer (/parentId) is the tool's argument (/todos/1/project).
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'fine' }, { title: 'x', project: '00000000-0000-4000-8000-000000000000' }] }), 'validation_failed', '/todos/1/project');
    expectError(await callTool(client, 'add_todos', { todos: [{ title: 'x', project: 'Nowhere' }] }), 'validation_failed', '/todos/0/project');
    expectError(await callTool(client, 'get_todo', { id: '00000000-0000-4000-8000-000000000000' }), 'not_found');
    expectError(await callTool(client, 'find_todos', { view: 'anytime', cursor: 'bogus' }), 'validation_failed', '/cursor');
    // Nothing of the failed batch was written.
    expect((await callTool(client, 'find_todos', { view: 'anytime' })).structuredContent.todos.length).toBe(before);
  });
});

describe('paging and the 256 KiB cap', () => {
  it('pages a project listing with limit and next_cursor, each to-do once, in order', async () => {
    const u = await user();
    const p = okData(await callTool(u.client, 'add_project', { name: 'Big' })).container.id as string;
    for (let b = 0; b < 3; b++) {
      okData(await callTool(u.client, 'add_todos', { todos: Array.from({ length: 20 }, (_, i) => ({ title: `item ${String(b * 20 + i).padStart(2, '0')}`, project: p })) }));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = okData(await callTool(u.client, 'find_todos', { project: p, limit: 25, ...(cursor ? { cursor } : {}) }));
      seen.push(...r.todos.map((t: { title: string }) => t.title));
      cursor = r.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => `item ${String(i).padStart(2, '0')}`));
    // A cursor of another listing is refused.
    const first = okData(await callTool(u.client, 'find_todos', { project: p, limit: 25 }));
    const other = await callTool(u.client, 'find_todos', { view: 'anytime', cursor: first.next_cursor });
    expect(other.isError).toBe(true);
    expect(other.structuredContent.error.pointer).toBe('/cursor');
    await u.client.close();
  });

  it('cuts a page at the cap and goes on from the first to-do left out; a long note body comes in parts', async () => {
    const u = await user();
    const p = okData(await callTool(u.client, 'add_project', { name: 'Heavy' })).container.id as string;
    const big = (i: number) => `${i} `.padEnd(60_000, 'é');
    for (let i = 0; i < 10; i++) okData(await callTool(u.client, 'add_todos', { todos: [{ title: `heavy ${i}`, notes: big(i), project: p }] }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await callTool(u.client, 'find_todos', { project: p, limit: 100, ...(cursor ? { cursor } : {}) });
      expect(bytes(r)).toBeLessThanOrEqual(RESULT_CAP_BYTES);
      const data = okData(r);
      for (const t of data.todos) {
        expect(t.notes).toBe(big(Number(t.title.split(' ')[1])));
        seen.push(t.title);
      }
      cursor = data.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `heavy ${i}`));

    const body = 'ü'.repeat(100_000);
    const note = okData(await callTool(u.client, 'add_note', { body })).note;
    let text = '';
    let offset: number | null = 0;
    let parts = 0;
    while (offset !== null) {
      const r = await callTool(u.client, 'get_note', { id: note.id, offset });
      expect(bytes(r)).toBeLessThanOrEqual(RESULT_CAP_BYTES);
      const d = okData(r);
      text += d.body;
      offset = d.body_next_offset;
      parts++;
    }
    expect(parts).toBeGreaterThan(1);
    expect(text).toBe(body);
    await u.client.close();
  });
});

describe('sealed at rest through MCP', () => {
  it('a marker written by the tools is in neither the DB file nor its WAL', async () => {
    const MARKER = 'McpMarkerQ7zWombat';
    const u = await user();
    okData(await callTool(u.client, 'add_project', { name: `${MARKER} project`, notes: `${MARKER} notes`, headings: [`${MARKER} heading`] }));
    const t = okData(await callTool(u.client, 'add_todos', { todos: [{ title: `${MARKER} todo`, notes: `${MARKER} todo notes`, tags: [`${MARKER}tag`], checklist: [`${MARKER} step`], project: `${MARKER} project`, heading: `${MARKER} heading`, when: 'today' }] })).todos[0];
    okData(await callTool(u.client, 'update_todos', { todos: [{ id: t.id, title: `${MARKER} todo renamed`, action: 'complete' }] }));
    okData(await callTool(u.client, 'capture', { text: `${MARKER} capture` }));
    okData(await callTool(u.client, 'add_note', { title: `${MARKER} note`, body: `${MARKER} body` }));
    expect(okData(await callTool(u.client, 'search', { q: MARKER.toLowerCase() })).hits.length).toBeGreaterThan(0);
    const files = readdirSync(app.dataDir).filter((f) => f.startsWith('cairn.db')).map((f) => path.join(app.dataDir, f));
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    for (const f of files) {
      const data = readFileSync(f);
      for (const v of [MARKER, MARKER.toLowerCase(), Buffer.from(MARKER).toString('base64'), Buffer.from(MARKER).toString('hex')]) {
        expect(data.includes(Buffer.from(v)), `${path.basename(f)} holds ${v}`).toBe(false);
      }
      expect(data.includes(Buffer.from(MARKER, 'utf16le'))).toBe(false);
    }
    await u.client.close();
  });
});

describe('rate limits', () => {
  it("a batch costs one write per to-do against the credential's write bucket (REST's budget: 120 / 5 min)", async () => {
    const strict = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
    try {
      const u = await registerUser(strict);
      const client = await mcpClient(strict, await mcpToken(strict, u.session, ['todos:write']));
      const batch = (n: number) => ({ todos: Array.from({ length: n }, (_, i) => ({ title: `t${i}` })) });
      okData(await callTool(client, 'add_todos', batch(50)));
      okData(await callTool(client, 'add_todos', batch(50)));
      const refused = await callTool(client, 'add_todos', batch(50));
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(refused.structuredContent.error.retry_after).toBeGreaterThan(0);
      okData(await callTool(client, 'add_todos', batch(20)));
      strict.clock.advance(5 * 60_000);
      okData(await callTool(client, 'add_todos', batch(50)));
      await client.close();
    } finally {
      await strict.close();
    }
  });
});
