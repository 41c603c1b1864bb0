// Issue 11.6 / 13.6: a /trpc error says exactly what REST says for the same mistake: the same HTTP
// status and the same problem object (under error.data.problem, with error.message its detail),
// inside tRPC's own envelope. A 500 says nothing about its cause. tRPC's own refusals (bad batch,
// wrong method, unknown procedure) are the matching problems, not `internal`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '../../routers/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';

let app: TestApp;
let session: string;
let userId: string;
beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  session = u.session;
  userId = u.userId;
});
afterAll(() => app.close());

type Envelope = { error: { json: { message: string; code: number; data: { code: string; httpStatus: number; path?: string; problem: Record<string, unknown> } } } };

async function trpc(method: 'GET' | 'POST', target: string, opts: { token?: string; body?: string } = {}) {
  const res = await fetch(`${app.url}/trpc/${target}`, {
    method,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Envelope & Envelope[], text };
}

/** A problem without the fields that differ per request (request_id, instance). */
const comparable = (p: Record<string, unknown>) => {
  const { request_id, instance, ...rest } = p;
  expect(request_id).toMatch(/^req_/);
  expect(typeof instance).toBe('string');
  return rest;
};

describe('/trpc errors are the REST problems (issue 11.6, 13.6)', () => {
  it('a validation error is HTTP 422 with the same problem, a readable message and no issue dump', async () => {
    const rest = await call(app, 'POST', '/v1/tags', { token: session, body: { name: '', colorHex: 'nope' } });
    expect(rest.status).toBe(422);
    const t = await trpc('POST', 'tags.create', { token: session, body: JSON.stringify({ json: { name: '', colorHex: 'nope' } }) });
    expect(t.status).toBe(422);
    const e = t.body.error.json;
    expect(comparable(e.data.problem)).toEqual(comparable(rest.body));
    expect(e.data.problem.type).toBe(`${app.deps.config.publicUrl}/errors/validation_failed`);
    expect(e.data.httpStatus).toBe(422);
    expect(e.message).toBe(rest.body.detail);
    expect(e.message).not.toMatch(/[[{]/);
    expect(t.text).not.toContain('"stack"');
    // The typed client sees the same.
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.url}/trpc`, transformer: superjson, headers: { authorization: `Bearer ${session}` } })] });
    const err = (await client.tags.create.mutate({ name: '' }).catch((x: unknown) => x)) as TRPCClientError<AppRouter>;
    expect(err).toBeInstanceOf(TRPCClientError);
    expect(err.message).toBe('The request is invalid: /name: must not be empty.');
    expect((err.data as { httpStatus: number }).httpStatus).toBe(422);
  });

  it('401, 403 and 404 match REST, headers included', async () => {
    const pat = await createPat(app, session, ['tags:read']);
    const cases: [string, string, 'GET' | 'POST', string, string | undefined, Record<string, unknown> | undefined, string | undefined][] = [
      ['/v1/tags', 'tags.list', 'GET', '', undefined, undefined, undefined],
      ['/v1/tags', 'tags.create', 'POST', '', pat.token, { name: 'x' }, JSON.stringify({ json: { name: 'x' } })],
      ['/v1/tags/00000000-0000-4000-8000-000000000000', 'tags.get', 'GET', `?input=${encodeURIComponent(JSON.stringify({ json: { id: '00000000-0000-4000-8000-000000000000' } }))}`, session, undefined, undefined],
    ];
    for (const [path, proc, method, query, tok, restBody, trpcBody] of cases) {
      const rest = await call(app, method, path, { token: tok, body: restBody });
      const t = await trpc(method, proc + query, { token: tok, body: trpcBody });
      expect({ proc, status: t.status }).toEqual({ proc, status: rest.status });
      expect(comparable(t.body.error.json.data.problem)).toEqual(comparable(rest.body));
      expect(t.headers.get('www-authenticate')).toBe(rest.headers.get('www-authenticate'));
      expect(t.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('a 500 carries no internal cause: the message is "Internal error" and the problem has no detail', async () => {
    const tag = await call(app, 'POST', '/v1/tags', { token: session, body: { name: 'Broken' } });
    // A sealed value that no longer opens (a damaged row): the model throws "sealed value failed to open".
    app.deps.db.$client.prepare('UPDATE tags SET sealed = ? WHERE id = ? AND user_id = ?').run(Buffer.alloc(40, 7), tag.body.id, userId);
    const rest = await call(app, 'GET', `/v1/tags/${tag.body.id}`, { token: session });
    expect(rest.status).toBe(500);
    const t = await trpc('GET', `tags.get?input=${encodeURIComponent(JSON.stringify({ json: { id: tag.body.id } }))}`, { token: session });
    expect(t.status).toBe(500);
    expect(t.body.error.json.message).toBe('Internal error');
    expect(comparable(t.body.error.json.data.problem)).toEqual(comparable(rest.body));
    expect(t.body.error.json.data.problem.detail).toBeUndefined();
    expect(t.text).not.toMatch(/sealed|failed to open|stack/i);
    app.deps.db.$client.prepare('DELETE FROM tags WHERE id = ?').run(tag.body.id);
  });

  it("tRPC's own refusals: wrong method 405, unknown procedure 404, a bad batch 422, malformed JSON 422", async () => {
    const wrong = await trpc('GET', 'tags.create', { token: session });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.json.data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/method_not_allowed`, status: 405 });
    const unknown = await trpc('GET', 'nope.nothing', { token: session });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.json.data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/not_found`, status: 404 });
    const batch = await trpc('POST', 'tags.create,tags.create?batch=1', { token: session, body: '[1,2]' });
    expect(batch.status).toBe(422);
    const first = (Array.isArray(batch.body) ? batch.body[0]! : batch.body).error.json;
    expect(first.data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/validation_failed`, status: 422, errors: [{ pointer: '' }] });
    const bad = await trpc('POST', 'tags.create', { token: session, body: '{"json":' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.json.data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/validation_failed`, errors: [{ pointer: '' }] });
    for (const r of [wrong, unknown, batch, bad]) expect(r.text).not.toContain('internal');
  });
});
