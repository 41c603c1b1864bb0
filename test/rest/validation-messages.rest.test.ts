// Issue 13.7: validation messages a person understands, one per field; a to-do title is one line
// of text; and the date combinations Cairn accepts on purpose (docs/api.md "To-dos").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
let session: string;
beforeAll(async () => {
  app = await startApp();
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

const errorsOf = async (method: string, path: string, body: unknown) => expectProblem(await call(app, method, path, { token: session, body }), 422, 'validation_failed').errors;

describe('messages (issue 13.7)', () => {
  it('a missing field says "required", for strings, enums and booleans alike', async () => {
    expect(await errorsOf('POST', '/v1/tags', {})).toEqual([{ pointer: '/name', message: 'required' }]);
    expect(await errorsOf('POST', '/v1/todos', {})).toEqual([{ pointer: '/title', message: 'required' }]);
    expect(await errorsOf('PATCH', '/v1/settings', {})).toEqual([{ pointer: '/weekStart', message: 'required' }]);
    expect(await errorsOf('POST', '/v1/auth/login', { email: 'a@example.test' })).toEqual([{ pointer: '/password', message: 'required' }]);
  });

  it('wrong types, sizes and options read as sentences, never as zod internals', async () => {
    const e = await errorsOf('POST', '/v1/todos', { title: 5, evening: 'yes', priority: 'urgent', tags: 'x' });
    expect(Object.fromEntries(e!.map((x) => [x.pointer, x.message]))).toEqual({
      '/title': 'must be a string',
      '/evening': 'must be true or false',
      '/priority': expect.stringMatching(/^must be one of "/),
      '/tags': 'must be an array',
    });
    expect(await errorsOf('POST', '/v1/tags', { name: '' })).toEqual([{ pointer: '/name', message: 'must not be empty' }]);
    expect(await errorsOf('POST', '/v1/tags', { name: 'x'.repeat(65) })).toEqual([{ pointer: '/name', message: 'must be at most 64 characters' }]);
    const list = expectProblem(await call(app, 'GET', '/v1/tags?limit=0', { token: session }), 422, 'validation_failed');
    expect(list.errors).toEqual([{ pointer: '/limit', message: 'must be at least 1' }]);
    for (const m of [...e!, ...list.errors!]) expect(m.message).not.toMatch(/expected|received|Invalid input/);
  });

  it('one message per field, even when a value breaks several rules', async () => {
    const e = await errorsOf('POST', '/v1/tags', { name: '\u0007'.repeat(70) });
    expect(e).toHaveLength(1);
    expect(e![0]!.pointer).toBe('/name');
  });

  it('a to-do title refuses control characters, as tag names do', async () => {
    for (const title of ['line\nbreak', 'bell\u0007', 'del\u007f', '\ttab']) {
      expect(await errorsOf('POST', '/v1/todos', { title })).toEqual([{ pointer: '/title', message: 'must not contain control characters' }]);
    }
    const t = await call(app, 'POST', '/v1/todos', { token: session, body: { title: 'Fine — ünïcode ✓' } });
    expect(t.status).toBe(201);
    expect(await errorsOf('PATCH', `/v1/todos/${t.body.id}`, { title: 'a\rb' })).toEqual([{ pointer: '/title', message: 'must not contain control characters' }]);
    expect(await errorsOf('POST', '/v1/todos', { title: 'ok', tags: ['a\nb'] })).toEqual([{ pointer: '/tags/0', message: 'must not contain control characters' }]);
  });

  it('accepted on purpose, as Things does: a deadline before whenDate, and evening without a date', async () => {
    const early = await call(app, 'POST', '/v1/todos', { token: session, body: { title: 'Late start', whenDate: '2026-12-10', deadline: '2026-12-01' } });
    expect(early.status).toBe(201);
    expect(early.body).toMatchObject({ whenDate: '2026-12-10', deadline: '2026-12-01' });
    const evening = await call(app, 'POST', '/v1/todos', { token: session, body: { title: 'Tonight, some day', evening: true } });
    expect(evening.status).toBe(201);
    expect(evening.body).toMatchObject({ evening: true, whenDate: null });
  });
});
