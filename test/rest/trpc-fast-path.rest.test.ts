// Issue 12: /trpc is answered on node:http by rest/trpc.ts, not by tRPC's own adapter. The answers
// must be the adapter's to the byte (but for request ids): each request below is sent twice, once
// as a client sends it (the fast path) and once with `trpc-accept: application/json`, which the
// fast path leaves to tRPC's adapter (a header its protocol defines; JSON is its default).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser, type Res } from '../helpers/http.js';
import { trpcFastPathCount } from '../../rest/trpc.js';
import { LIMITS } from '../../core/config.js';
import { authenticationCount } from '../../routers/auth/credentials.js';

let app: TestApp;
let pat: string;
let todoId: string;
beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  pat = (await createPat(app, u.session, ['tasks:write'])).token;
  todoId = (await call(app, 'POST', '/v1/todos', { token: pat, body: { title: 'fast path' } })).body.id;
});
afterAll(() => app.close());

const input = (v: unknown) => encodeURIComponent(JSON.stringify({ json: v }));
const batchInput = (...vs: unknown[]) => encodeURIComponent(JSON.stringify(Object.fromEntries(vs.map((v, i) => [String(i), { json: v }]))));
const MISSING = '00000000-0000-4000-8000-0000000000FF';

type Req = { name: string; method: 'GET' | 'POST'; path: string; body?: unknown; token?: string | null; headers?: Record<string, string>; fast: boolean };

const cases = (): Req[] => [
  { name: 'a query', method: 'GET', path: `/trpc/todos.get?input=${input({ id: todoId })}`, fast: true },
  { name: 'a query without input', method: 'GET', path: '/trpc/me.get', fast: true },
  { name: 'a query answering 404', method: 'GET', path: `/trpc/todos.get?input=${input({ id: MISSING })}`, fast: true },
  { name: 'a query with bad input (422)', method: 'GET', path: `/trpc/todos.get?input=${input({ id: 'lower-case' })}`, fast: true },
  { name: 'a batch with mixed answers (207)', method: 'GET', path: `/trpc/todos.get,todos.get,me.get?batch=1&input=${batchInput({ id: todoId }, { id: MISSING })}`, fast: true },
  { name: 'a batch of one', method: 'GET', path: `/trpc/todos.get?batch=1&input=${batchInput({ id: todoId })}`, fast: true },
  { name: 'no credential (401 with its challenge)', method: 'GET', path: '/trpc/me.get', token: null, fast: true },
  { name: 'a mutation refused (422)', method: 'POST', path: '/trpc/tags.create', body: { json: { name: '' } }, fast: true },
  { name: 'a mutation batch refused', method: 'POST', path: '/trpc/tags.update,tags.delete?batch=1', body: { 0: { json: { id: MISSING, colorHex: '#ffffff' } }, 1: { json: { id: MISSING } } }, fast: true },
  { name: 'an idempotent replay', method: 'POST', path: '/trpc/tags.create', body: { json: { name: 'Replayed' } }, headers: { 'idempotency-key': 'fast-path-1' }, fast: true },
  { name: 'a query sent as POST', method: 'POST', path: '/trpc/me.get', body: {}, fast: false },
  { name: 'a mutation sent as GET', method: 'GET', path: `/trpc/tags.create?input=${input({ name: 'x' })}`, fast: false },
  { name: 'an unknown procedure', method: 'GET', path: '/trpc/nope.get', fast: false },
  { name: 'a batch over the limit', method: 'GET', path: `/trpc/${Array(LIMITS.trpcBatchMax + 1).fill('me.get').join(',')}?batch=1`, fast: false },
  { name: 'input that is not JSON', method: 'GET', path: '/trpc/todos.get?input=%7Bnope', fast: false },
  { name: 'a mutation without a JSON content type', method: 'POST', path: '/trpc/tags.create', body: { json: { name: 'Typed' } }, headers: { 'content-type': 'text/plain' }, fast: false },
];

const HEADERS = ['content-type', 'cache-control', 'www-authenticate', 'retry-after', 'idempotent-replayed', 'access-control-allow-origin'];

function comparable(r: Res) {
  const text = r.text.replace(/req_[A-Za-z0-9_-]+/g, 'req_X');
  return { status: r.status, body: text, headers: Object.fromEntries(HEADERS.map((h) => [h, r.headers.get(h)])) };
}

function send(c: Req, viaAdapter: boolean): Promise<Res> {
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  if (viaAdapter) headers['trpc-accept'] = 'application/json';
  return call(app, c.method, c.path, { token: c.token === null ? undefined : (c.token ?? pat), body: c.body, headers });
}

describe('/trpc on node:http answers as tRPC does', () => {
  it('every case: the same status, body and headers as tRPC’s own adapter; the fast path answers what it should', async () => {
    // The replay case compares two replays: the first answer is stored here.
    const first = await send(cases().find((c) => c.name === 'an idempotent replay')!, false);
    expect(first.status).toBe(200);
    for (const c of cases()) {
      const before = trpcFastPathCount();
      const fast = await send(c, false);
      expect({ case: c.name, fast: trpcFastPathCount() - before }).toEqual({ case: c.name, fast: c.fast ? 1 : 0 });
      const adapter = await send(c, true);
      expect({ case: c.name, ...comparable(fast) }).toEqual({ case: c.name, ...comparable(adapter) });
    }
  });

  it('a successful mutation answers like the adapter, and its event is written once', async () => {
    const a = await send({ name: 'create', method: 'POST', path: '/trpc/tags.create', body: { json: { name: 'Same' } }, fast: true }, false);
    const b = await send({ name: 'again', method: 'POST', path: '/trpc/tags.create', body: { json: { name: 'Same' } }, fast: true }, true);
    expect(a.status).toBe(200);
    expect(comparable(a)).toEqual(comparable(b)); // the second finds the existing tag: same body
  });

  it('the access log names the procedures of a fast-path request', async () => {
    const before = trpcFastPathCount();
    const r = await call(app, 'GET', `/trpc/todos.get,me.get?batch=1&input=${batchInput({ id: todoId })}`, { token: pat });
    expect(r.status).toBe(200);
    expect(trpcFastPathCount()).toBe(before + 1);
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expect(r.headers.get('ratelimit-remaining')).not.toBeNull();
  });

  it('the calls of a batch authenticate once; single calls and separate requests each once; a bad credential fails every call', async () => {
    const counted = async (path: string, token: string | undefined = pat) => {
      const before = authenticationCount();
      const r = await call(app, 'GET', path, { token });
      return { r, n: authenticationCount() - before };
    };
    const batch = await counted(`/trpc/todos.get,todos.get,me.get,todos.get?batch=1&input=${batchInput({ id: todoId }, { id: todoId }, undefined, { id: MISSING })}`);
    expect(batch.r.status).toBe(207);
    expect(batch.n).toBe(1);
    const answers = batch.r.body as { result?: { data: { json: { id?: string; sub?: string } } }; error?: { json: { data: { httpStatus: number } } } }[];
    expect(answers.map((a) => a.result?.data.json.id ?? a.result?.data.json.sub ?? a.error?.json.data.httpStatus)).toEqual([todoId, todoId, expect.any(String), 404]);
    expect((await counted(`/trpc/todos.get?input=${input({ id: todoId })}`)).n).toBe(1);
    expect((await counted(`/trpc/todos.get?batch=1&input=${batchInput({ id: todoId })}`)).n).toBe(1);
    for (let i = 0; i < 2; i++) expect((await counted(`/trpc/me.get,me.get?batch=1`)).n).toBe(1);
    const bad = await counted(`/trpc/me.get,todos.get?batch=1&input=${batchInput(undefined, { id: todoId })}`, 'cairn_pat_' + 'A'.repeat(43));
    expect(bad.r.status).toBe(401);
    expect((bad.r.body as { error: { json: { data: { httpStatus: number } } } }[]).map((a) => a.error.json.data.httpStatus)).toEqual([401, 401]);
    expect(bad.n).toBe(1);
  });
});
