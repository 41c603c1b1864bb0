// Issue 11.10–11.12: bad input never gets a 5xx or a non-problem answer, and a path or a body means
// exactly what its bytes say. Everything over real HTTP, raw bytes where fetch would rewrite them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, rawGet, rawHttp, registerUser } from '../helpers/http.js';
import { REST_ROUTES } from '../../rest/routes.js';
import { LIMITS } from '../../core/config.js';

let app: TestApp;
let session: string;
let token: string;
beforeAll(async () => {
  app = await startApp();
  session = (await registerUser(app)).session;
  token = (await createPat(app, session, ['tasks:write'])).token;
});
afterAll(() => app.close());

const nested = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

async function postRaw(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(app.url + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
}

describe('deeply nested JSON is refused before anything walks it (issue 11.10)', () => {
  it('a body 100,000 deep is 422 at the root pointer on every route with a body, with an Idempotency-Key', async () => {
    const deep = `{"name":"x","colorHex":${nested(100_000)}}`;
    const withBody = REST_ROUTES.filter((r) => ['POST', 'PATCH', 'PUT'].includes(r.method));
    expect(withBody.length).toBeGreaterThan(10);
    for (const r of withBody) {
      const res = await call(app, r.method, concrete(r.path), { token, rawBody: deep, headers: { 'content-type': 'application/json', 'Idempotency-Key': `deep-${r.procedurePath}` } });
      const p = expectProblem(res, 422, 'validation_failed');
      expect({ route: r.path, errors: p.errors }).toEqual({ route: r.path, errors: [{ pointer: '', message: expect.stringContaining(`deeper than ${LIMITS.jsonDepth}`) }] });
    }
  });

  it(`${LIMITS.jsonDepth} levels pass the guard; one more does not; brackets inside strings do not count`, async () => {
    const ok = await call(app, 'POST', '/v1/tags', { token, rawBody: `{"name":"x","colorHex":${nested(LIMITS.jsonDepth - 1)}}`, headers: { 'content-type': 'application/json' } });
    expect(expectProblem(ok, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/colorHex');
    const over = await call(app, 'POST', '/v1/tags', { token, rawBody: `{"name":"x","colorHex":${nested(LIMITS.jsonDepth)}}`, headers: { 'content-type': 'application/json' } });
    expect(expectProblem(over, 422, 'validation_failed').errors?.[0]?.pointer).toBe('');
    const name = '[{'.repeat(40) + '\\"';
    const strings = await call(app, 'POST', '/v1/tags', { token, rawBody: JSON.stringify({ name: name.slice(0, 60) }), headers: { 'content-type': 'application/json' } });
    expect(strings.status).toBe(201);
  });

  it('over /trpc too: a deep mutation body (with an Idempotency-Key), a deep batch and a deep query input', async () => {
    const single = await postRaw('/trpc/tags.create', `{"json":{"name":"x","colorHex":${nested(100_000)}}}`, { 'Idempotency-Key': 'trpc-deep' });
    expect(single.status).toBe(422);
    expect(single.body.error.json.data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/validation_failed`, errors: [{ pointer: '' }] });
    const batch = await postRaw('/trpc/tags.create,tags.create?batch=1', `{"0":{"json":{"name":"a"}},"1":{"json":${nested(50_000)}}}`);
    expect(batch.status).toBe(422);
    const big = await postRaw('/trpc/tags.create', JSON.stringify({ json: { name: 'x'.repeat(LIMITS.jsonBodyBytes) } }));
    expect(big.status).toBe(413);
    expect(big.body.error.json.data.problem.type).toBe(`${app.deps.config.publicUrl}/errors/payload_too_large`);
    const deepInput = encodeURIComponent(`{"json":${'['.repeat(1500)}${']'.repeat(1500)}}`);
    const q = await fetch(`${app.url}/trpc/tags.list?input=${deepInput}`, { headers: { authorization: `Bearer ${token}` } });
    expect(q.status).toBe(422);
    // A path the URL parser would read as a host is still answered by tRPC, not a 500.
    const odd = await rawGet(app, `/trpc//tags.list?input=${encodeURIComponent('{"json":{}}')}`, token);
    expect(odd.status).toBeLessThan(500);
  });
});

describe('paths Express cannot decode and requests Node cannot parse are problems (issue 11.10)', () => {
  it('/errors/%zz, /errors/% and /errors/%C0%AF are 404 problems, not 500', async () => {
    for (const target of ['/errors/%zz', '/errors/%', '/errors/%C0%AF']) {
      const res = await rawGet(app, target);
      expect({ target, status: res.status }).toEqual({ target, status: 404 });
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.type).toBe(`${app.deps.config.publicUrl}/errors/not_found`);
    }
  });

  it('a 20,000-character path is a 431 problem; raw 0xFF 0xFE bytes in a path a 400 problem', async () => {
    const long = await rawGet(app, '/v1/' + 'a'.repeat(20_000));
    expect(long.status).toBe(431);
    expect(long.headers.get('content-type')).toBe('application/problem+json');
    expect(long.body).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/headers_too_large`, status: 431, request_id: expect.stringMatching(/^req_/) });
    expect(long.headers.get('x-request-id')).toBe(long.body.request_id);
    const bytes = await rawHttp(app, Buffer.concat([Buffer.from('GET /v1/'), Buffer.from([0xff, 0xfe]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]));
    expect(bytes.status).toBe(400);
    expect(bytes.body).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/malformed_request`, status: 400 });
    const page = await call(app, 'GET', '/errors/headers_too_large');
    expect(page.status).toBe(200);
  });
});

describe('one path, one operation (issue 11.11)', () => {
  it('dot segments, raw or percent-encoded, are 404 problems under /v1 and /trpc instead of being resolved', async () => {
    for (const target of ['/v1/headings/.', '/v1/todos/%2e', '/v1/todos/%2E', '/v1/tags/x/..', '/v1/tags/x/%2e%2E', '/v1/tags/x/.%2e', '/v1/./tags', '/v1/tags\\.', '/trpc/./tags.list', '/v1/tags/./?limit=1']) {
      const res = await rawGet(app, target, token);
      expect({ target, status: res.status, type: res.body?.type }).toEqual({ target, status: 404, type: `${app.deps.config.publicUrl}/errors/not_found` });
    }
    // Dots elsewhere are fine: in a query value, or as part of a longer segment.
    expect((await rawGet(app, '/v1/tags?cursor=..', token)).status).toBe(422);
    // `...` is not a dot segment: it reaches GET /v1/tags/{id} (and is not an id there).
    expect((await rawGet(app, '/v1/tags/...', token)).body.errors?.[0]?.pointer).toBe('/id');
    expect((await rawGet(app, '/v1/tags', token)).status).toBe(200);
  });
});

describe('bytes and values that are not what they claim (issue 11.12)', () => {
  it('invalid UTF-8 in a JSON body is malformed JSON at the root pointer, on /v1 and /trpc; nothing is stored', async () => {
    for (const bad of [Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff])]) {
      const v1 = await postRaw('/v1/tags', Buffer.concat([Buffer.from('{"name":"'), bad, Buffer.from('"}')]));
      expect(v1.status).toBe(422);
      expect(v1.body.errors).toEqual([{ pointer: '', message: expect.stringContaining('UTF-8') }]);
      const trpc = await postRaw('/trpc/tags.create', Buffer.concat([Buffer.from('{"json":{"name":"'), bad, Buffer.from('"}}')]));
      expect(trpc.status).toBe(422);
      expect(trpc.body.error.json.data.problem.errors).toEqual([{ pointer: '', message: expect.stringContaining('UTF-8') }]);
    }
    const list = await call(app, 'GET', '/v1/tags', { token });
    expect(list.text).not.toContain('\ufffd');
  });

  it('updated_since names a real instant: 2026-02-30 and 24:00 are refused at /updated_since', async () => {
    for (const v of ['2026-02-30T00:00:00Z', '2026-04-31T10:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T10:60:00Z', '2026-01-01T10:00:00+25:00']) {
      const p = expectProblem(await call(app, 'GET', `/v1/tags?updated_since=${encodeURIComponent(v)}`, { token }), 422, 'validation_failed');
      expect(p.errors?.[0]?.pointer).toBe('/updated_since');
    }
    expect((await call(app, 'GET', '/v1/tags?updated_since=2028-02-29T23:59:59.999Z', { token })).status).toBe(200);
  });

  it('an empty query value is the same as leaving the parameter out, on every GET route', async () => {
    const doc = (await call(app, 'GET', '/openapi.json')).body;
    const gets = REST_ROUTES.filter((r) => r.method === 'GET');
    let lists = 0;
    for (const r of gets) {
      const params = ((doc.paths[r.path]?.get?.parameters ?? []) as { in: string; name: string }[]).filter((p) => p.in === 'query').map((p) => p.name);
      if (!params.length) continue;
      if (params.includes('limit')) lists++;
      const path = concrete(r.path);
      const without = await call(app, 'GET', path, { token: session });
      const empty = await call(app, 'GET', `${path}?${params.map((n) => `${n}=`).join('&')}`, { token: session });
      const strip = (b: unknown) => JSON.stringify(b, (k, v) => (k === 'request_id' || k === 'instance' ? undefined : v));
      expect({ route: r.path, status: empty.status, body: strip(empty.body) }).toEqual({ route: r.path, status: without.status, body: strip(without.body) });
      // A bare name (no '=') is empty too.
      const bare = await call(app, 'GET', `${path}?${params[0]}`, { token: session });
      expect({ route: r.path, status: bare.status }).toEqual({ route: r.path, status: without.status });
    }
    expect(lists).toBeGreaterThanOrEqual(8);
  });

  it('the same holds for the query parameters of POST routes (`today=`) and next to a real value', async () => {
    const posts = REST_ROUTES.filter((r) => r.meta.queryInput?.length);
    expect(posts.length).toBeGreaterThanOrEqual(2);
    for (const r of posts) {
      const todo = await call(app, 'POST', '/v1/todos', { token: session, body: { title: `q ${r.procedurePath}` } });
      const project = (await call(app, 'POST', '/v1/containers', { token: session, body: { kind: 'project', name: 'Q' } })).body.id;
      const heading = (await call(app, 'POST', '/v1/headings', { token: session, body: { projectId: project, name: 'H' } })).body.id;
      const target = r.path.startsWith('/v1/todos/') ? todo.body.id : heading;
      const path = r.path.replace('{id}', target);
      const empty = await call(app, r.method, `${path}?${r.meta.queryInput!.map((n) => `${n}=`).join('&')}`, { token: session });
      expect({ route: r.path, status: empty.status }).toEqual({ route: r.path, status: 200 });
    }
    const both = await call(app, 'GET', '/v1/tags?limit=&limit=2', { token: session });
    expect(both.status).toBe(200);
  });
});
