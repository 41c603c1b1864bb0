// Saved filters (spec §2.8, §4.10, DECISIONS §6, issue 14) over HTTP: CRUD, events, limits, the
// criteria grammar (precedence, quoting, errors with columns) and evaluation over live open
// to-dos in app order, paged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { userClient } from '../helpers/user-client.js';
import { call, createPat, expectProblem } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { parseCriteria } from '../../routers/filters/criteria.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;

beforeAll(async () => {
  app = await startApp();
  app.clock.set(Date.parse('2026-11-20T12:00:00Z'));
});
afterAll(() => app.close());

const user = () => userClient(app);

describe('criteria grammar', () => {
  it('not binds tighter than and, and tighter than or', () => {
    expect(parseCriteria('#a or #b and not #c')).toEqual({
      k: 'or',
      l: { k: 'tag', name: 'a' },
      r: { k: 'and', l: { k: 'tag', name: 'b' }, r: { k: 'not', e: { k: 'tag', name: 'c' } } },
    });
    expect(parseCriteria('(#a | #b) & !#c')).toEqual({
      k: 'and',
      l: { k: 'or', l: { k: 'tag', name: 'a' }, r: { k: 'tag', name: 'b' } },
      r: { k: 'not', e: { k: 'tag', name: 'c' } },
    });
    expect(parseCriteria('NOT today AND No Date OR priority:HIGH')).toEqual({
      k: 'or',
      l: { k: 'and', l: { k: 'not', e: { k: 'today' } }, r: { k: 'nodate' } },
      r: { k: 'priority', v: 'high' },
    });
  });

  it('quoted tag names keep spaces and escapes', () => {
    expect(parseCriteria('#"two words" and #"say \\"hi\\""')).toEqual({ k: 'and', l: { k: 'tag', name: 'two words' }, r: { k: 'tag', name: 'say "hi"' } });
  });

  it('errors name their column', () => {
    const col = (s: string) => {
      try {
        parseCriteria(s);
      } catch (e) {
        return (e as Error).message;
      }
      return 'parsed';
    };
    expect(col('#a and')).toMatch(/^column 7: /);
    expect(col('#a #b')).toMatch(/^column 4: /);
    expect(col('(#a or #b')).toMatch(/^column 10: .*"\)"/);
    expect(col('#"open')).toMatch(/^column 1: unterminated/);
    expect(col('priority:urgent')).toMatch(/^column 1: priority/);
    expect(col('no day')).toMatch(/^column 4: /);
    expect(col('#')).toMatch(/^column 1: /);
    expect(col('('.repeat(500) + '#a' + ')'.repeat(500))).toMatch(/nested more than 100/);
  });
});

describe('saved filters over HTTP', () => {
  it('CRUD with events, sealed fields, ids and limits', async () => {
    const u = await user();
    const f = await u.raw('POST', '/v1/filters', { name: 'Work', criteria: '#work', symbol: 'briefcase', id: 'AAAAAAAA-0000-4000-8000-000000000001' });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({ id: 'AAAAAAAA-0000-4000-8000-000000000001', name: 'Work', criteria: '#work', symbol: 'briefcase' });
    expectProblem(await u.raw('POST', '/v1/filters', { name: 'Again', criteria: '#x', id: f.body.id }), 409, 'duplicate_id');
    const patched = await u.req('PATCH', `/v1/filters/${f.body.id}`, { name: 'Job', symbol: null });
    expect(patched).toMatchObject({ name: 'Job', criteria: '#work', symbol: null });
    expect((await u.req('GET', '/v1/filters')).data.map((x: Any) => x.name)).toEqual(['Job']);
    expect((await u.raw('DELETE', `/v1/filters/${f.body.id}`)).status).toBe(204);
    expectProblem(await u.raw('GET', `/v1/filters/${f.body.id}`), 404, 'not_found');
    expect(eventsOf(app.deps.db, u.userId).map((e: Any) => e.type).filter((t: string) => t.startsWith('filter.'))).toEqual(['filter.created', 'filter.updated', 'filter.deleted']);
    // Limits (spec §8.2).
    expect(expectProblem(await u.raw('POST', '/v1/filters', { name: 'x'.repeat(257), criteria: '#a' }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/name');
    expect(expectProblem(await u.raw('POST', '/v1/filters', { name: 'n', criteria: '#a '.repeat(3400) }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/criteria');
    expect(expectProblem(await u.raw('POST', '/v1/filters', { name: 'n', criteria: '#a', symbol: 's'.repeat(65) }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/symbol');
  });

  it('a criteria syntax error is 422 at /criteria with the column, on create and on PATCH', async () => {
    const u = await user();
    const bad = expectProblem(await u.raw('POST', '/v1/filters', { name: 'n', criteria: '#a and (#b or' }), 422, 'validation_failed');
    expect(bad.errors?.[0]?.pointer).toBe('/criteria');
    expect(bad.errors?.[0]?.message).toMatch(/column 14/);
    const f = await u.req('POST', '/v1/filters', { name: 'n', criteria: '#a' });
    const bad2 = expectProblem(await u.raw('PATCH', `/v1/filters/${f.id}`, { criteria: 'today & & #b' }), 422, 'validation_failed');
    expect(bad2.errors?.[0]).toMatchObject({ pointer: '/criteria', message: expect.stringMatching(/column 9/) });
    expect((await u.req('GET', `/v1/filters/${f.id}`)).criteria).toBe('#a');
  });

  it('idempotent create replays the first answer', async () => {
    const u = await user();
    const h = { 'Idempotency-Key': 'filter-create-1' };
    const a = await u.raw('POST', '/v1/filters', { name: 'once', criteria: 'today' }, h);
    const b = await u.raw('POST', '/v1/filters', { name: 'once', criteria: 'today' }, h);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect((await u.req('GET', '/v1/filters')).data).toHaveLength(1);
  });

  it('evaluates over live open to-dos: tags case-insensitively, precedence, quoting, dates, priority; unknown tags match nothing', async () => {
    const u = await user();
    const proj = await u.req('POST', '/v1/containers', { kind: 'project', name: 'P' });
    const arch = await u.req('POST', '/v1/containers', { kind: 'project', name: 'Arch' });
    const mk = (title: string, extra: Record<string, unknown> = {}) => u.req('POST', '/v1/todos', { title, ...extra });
    await mk('work urgent', { tags: ['Work', 'Urgent'], priority: 'high' });
    await mk('work', { tags: ['work'], whenDate: '2026-11-20' });
    await mk('home', { tags: ['Home Stuff'], deadline: '2026-11-18' });
    await mk('plain');
    await mk('someday', { someday: true, tags: ['work'] });
    const done = await mk('done work', { tags: ['work'] });
    await u.req('POST', `/v1/todos/${done.id}/complete`);
    const trashed = await mk('trashed work', { tags: ['work'] });
    await u.req('POST', `/v1/todos/${trashed.id}/trash`);
    await mk('archived work', { tags: ['work'], parentId: arch.id });
    await u.req('POST', `/v1/containers/${arch.id}/archive`);
    await mk('in project', { tags: ['WORK'], parentId: proj.id });

    const run = async (criteria: string) => {
      const f = await u.req('POST', '/v1/filters', { name: criteria.slice(0, 200), criteria });
      return (await u.req('GET', `/v1/filters/${f.id}/todos`)).data.map((t: Any) => t.title);
    };
    expect(await run('#WORK')).toEqual(['work urgent', 'work', 'someday', 'in project']);
    expect(await run('#work and not someday')).toEqual(['work urgent', 'work', 'in project']);
    // or binds loosest: (#home) or (#work and #urgent)
    expect(await run('#"home stuff" or #work and #urgent')).toEqual(['work urgent', 'home']);
    expect(await run('(#"HOME STUFF" or #work) and #urgent')).toEqual(['work urgent']);
    expect(await run('today')).toEqual(['work', 'home']);
    expect(await run('overdue')).toEqual(['home']);
    expect(await run('no date and not someday')).toEqual(['work urgent', 'plain', 'in project']);
    expect(await run('priority:high')).toEqual(['work urgent']);
    expect(await run('#nosuchtag')).toEqual([]);
    expect(await run('!#nosuchtag & #urgent')).toEqual(['work urgent']);

    // Presented as the to-do routes present them; paged in app order.
    const f = await u.req('POST', '/v1/filters', { name: 'all', criteria: 'not #nosuchtag' });
    const all = (await u.req('GET', `/v1/filters/${f.id}/todos`)).data;
    expect(all[0]).toEqual(await u.req('GET', `/v1/todos/${all[0].id}`));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Any = await u.req('GET', `/v1/filters/${f.id}/todos?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((t: Any) => t.title));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((t: Any) => t.title));
    expect(seen).toHaveLength(6);
  });

  it('/todos needs filters:read and todos:read; other users see nothing', async () => {
    const u = await user();
    const f = await u.req('POST', '/v1/filters', { name: 'n', criteria: 'today' });
    const onlyFilters = await createPat(app, u.session, ['filters:read']);
    expectProblem(await call(app, 'GET', `/v1/filters/${f.id}/todos`, { token: onlyFilters.token }), 403, 'forbidden_scope');
    const both = await createPat(app, u.session, ['filters:read', 'todos:read']);
    expect((await call(app, 'GET', `/v1/filters/${f.id}/todos`, { token: both.token })).status).toBe(200);
    const other = await user();
    expectProblem(await other.raw('GET', `/v1/filters/${f.id}/todos`), 404, 'not_found');
    expectProblem(await other.raw('GET', `/v1/filters/${f.id}`), 404, 'not_found');
  });
});
