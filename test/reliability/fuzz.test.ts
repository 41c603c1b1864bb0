// Issue 18.2: fuzzing from the contract. fast-check generates requests for every operation of the
// served /openapi.json (nothing here names a route: a merged route is fuzzed without edits), valid
// ones from the documented schemas and mutated ones, and sends them over real HTTP to the
// in-process server (test/helpers/app.ts). Every answer must be:
//   - never a 5xx;
//   - an error: application/problem+json whose `status` equals the HTTP status, and a
//     validation_failed names the field at fault with a JSON pointer for each error;
//   - a success: a documented status whose body validates (ajv) against the documented schema.
// Rate limits: the app runs with CAIRN_RATE_LIMIT_FACTOR=1e9 (every bucket's budget × 1e9; the
// manual clock never refills), so no request is refused for its rate and every one reaches its
// handler. 429 answers are still checked for their problem shape.
//
// Requests: FUZZ_REQUESTS (default 10,000; `npm run soak` sets 200,000). Sent 16 at a time.
// A failure names the seed (and fast-check's shrunk batch); rerun with CAIRN_TEST_SEED=<seed>.
// FUZZ_ONLY=<regex> restricts it to the operations whose path matches (e.g. `webhooks|approvals|grants`).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameSeedOnFailure, testSeed } from '../helpers/seed.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { loadOpenApi, operations, responseValidators, schemaValidator, type Operation } from '../helpers/openapi.js';
import { createEveryResource, fullUser, paramCollections, type Owner } from '../helpers/resources.js';
import { arbFromSchema } from '../helpers/schema-arb.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export const FUZZ_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? (process.env.CAIRN_SOAK ? 200_000 : 10_000));
const BATCH = 16;

// The seed: random on every run (each run explores new inputs); CAIRN_TEST_SEED=<n> fixes it to
// repeat one (FUZZ_SEED too, as before). A failure of any kind (an assertion, a thrown error, a
// timeout) names it at the head of its message, the part the CI's summary keeps.
const seed = testSeed(process.env.FUZZ_SEED, Date.now() % 2 ** 31);
nameSeedOnFailure(seed);

/**
 * Operations that end or change the caller's credential: fuzzed with a throwaway user's session.
 * The webhook and OAuth routes end none of the caller's: `DELETE /v1/grants/{id}` ends an OAuth
 * grant's tokens (never the PAT or session calling it), `rotate-secret` a webhook's signing
 * secret, approve/deny a pending code; the fuzzer's own ids of those are spent like any other.
 */
const CREDENTIAL_ENDING = new Set(['auth-logout', 'auth-revokeAll', 'auth-rotateKey', 'auth-changePassword']);

let app: TestApp;
let ops: Operation[];
let validator: ReturnType<typeof responseValidators>;
let owner: Owner;
let other: Owner;
const ownIds: Record<string, string[]> = {};
const otherIds: string[] = [];
const cursors: string[] = [];
let victim: string | null = null;
let sent = 0;
const statuses = new Map<number, number>();
const sentOps = new Set<string>();
const timing = new Map<string, number>();
const connects: string[] = [];

beforeAll(async () => {
  app = await startApp(
    // relaxed: no fsync per write (durability is the crash harness's business, not the fuzzer's).
    // Loopback allowed: RESOURCES.webhooks subscribes https://127.0.0.1:9/… (see below: nothing is
    // ever sent; no dispatcher runs in this process and the door reports every connection).
    { CAIRN_RATE_LIMIT_FACTOR: '1000000000', CAIRN_DURABILITY: 'relaxed', CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' },
    // A cheap password hash (scrypt N = 2^10, below what CAIRN_SCRYPT_LOG_N accepts) so the
    // auth operations cost what the others do; the hash's strength is not under test here.
    { scryptLogN: 10 },
    // The fuzzer must never reach out. Webhook URLs it generates (fc.webUrl: host names, no IP
    // literals) are checked at create/PATCH through the door's resolver, which resolves nothing
    // here; an IP literal is checked without DNS and never connected to at create time. Sends only
    // happen in the dispatcher, which this in-process app does not run. `onConnect` is told of
    // every address the door would hand a socket (link-title fetches included): asserted loopback.
    { outbound: { resolver: async () => Promise.reject(Object.assign(new Error('no DNS in tests'), { code: 'ENOTFOUND' })), onConnect: (c) => void connects.push(`${c.hostname} ${c.address}:${c.port}`) } },
  );
  const doc = await loadOpenApi(app.url);
  // FUZZ_ONLY=<regex>: fuzz only the operations whose path matches (all of them by default).
  ops = operations(doc).filter((o) => !process.env.FUZZ_ONLY || new RegExp(process.env.FUZZ_ONLY).test(o.path));
  for (const o of ops) byId.set(o.operationId, o);
  validator = responseValidators(doc);
  owner = await fullUser(app);
  other = await fullUser(app);
  for (const round of [1, 2]) {
    const made = await createEveryResource(app, owner, `fuzz${round}`);
    for (const [k, v] of Object.entries(made)) (ownIds[k.split('/')[0]!] ??= []).push(v);
  }
  otherIds.push(...Object.values(await createEveryResource(app, other, 'otherfuzz')));
  // Real cursors, to tamper with.
  for (const op of ops) {
    if (op.method !== 'GET' || !op.params.some((p) => p.name === 'cursor') || op.params.some((p) => p.in === 'path' || p.required)) continue;
    const r = await call(app, 'GET', `${op.path}?limit=1`, { token: owner.pat });
    if (typeof r.body?.next_cursor === 'string') cursors.push(r.body.next_cursor);
  }
}, 120_000);
afterAll(() => app?.close());

type Req = { opId: string; method: string; path: string; query: [string, string][]; headers: Record<string, string>; body?: string; auth: 'pat' | 'session' | 'none' | 'bad' | 'victim'; mutation: string };

const weird = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\ud800',
  'a\udfffb',
  '\u001b[31m',
  '\u202e',
  '😀'.repeat(70),
  'x'.repeat(5000),
  '../../etc/passwd',
  '%00',
  '%',
  '<script>',
  "'; DROP TABLE todos; --",
  '2026-02-30',
  '2026-13-01',
  '0000-00-00',
  '9999-99-99T99:99:99Z',
  '-1',
  '1e999',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
);
const giantNumber = fc.constantFrom(1e308, -1e308, 2 ** 64, -(2 ** 63), 0.1, -0, Number.MAX_SAFE_INTEGER + 2, 1e-320);
const anyJson = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), giantNumber, fc.string(), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }));

/** encodeURIComponent, with a lone surrogate sent as the invalid UTF-8 bytes %ED%A0%80. */
function enc(s: string): string {
  return s
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part, i) => (i % 2 ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

function idArb(collection: string | undefined): fc.Arbitrary<string> {
  const own = collection && ownIds[collection]?.length ? [fc.constantFrom(...ownIds[collection]!)] : [];
  const anyOwn = fc.constantFrom(...Object.values(ownIds).flat());
  return fc.oneof(
    { weight: 6, arbitrary: own.length ? own[0]! : anyOwn },
    { weight: 2, arbitrary: anyOwn },
    { weight: 1, arbitrary: fc.constantFrom(...otherIds) },
    { weight: 1, arbitrary: fc.constant(null).map(() => randomUUID().toUpperCase()) },
    { weight: 1, arbitrary: fc.oneof(fc.uuid(), weird, fc.string({ maxLength: 80 })) },
  );
}

function tamper(cursor: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat({ max: Math.max(cursor.length - 1, 0) }).map((i) => cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1)),
    fc.constant(cursor.slice(0, -3)),
    fc.constant(cursor + 'AAAA'),
    fc.constant(Buffer.from(JSON.stringify({ k: 'x', id: 'y', v: 99 })).toString('base64url')),
    weird,
  );
}

/** A mutation of a JSON value (the body): the kinds issue 18.2 lists. */
function mutateBody(schema: Any, valid: Any): fc.Arbitrary<{ body: string; mutation: string; contentType?: string }> {
  const obj = valid && typeof valid === 'object' && !Array.isArray(valid) ? valid : {};
  const keys = [...new Set([...Object.keys(schema?.properties ?? {}), ...Object.keys(obj)])];
  const key = keys.length ? fc.constantFrom(...keys) : fc.constant('x');
  const set = (m: string, k: fc.Arbitrary<string>, v: fc.Arbitrary<unknown>) => fc.tuple(k, v).map(([kk, vv]) => ({ body: JSON.stringify({ ...obj, [kk]: vv }), mutation: `${m} ${kk}` }));
  return fc.oneof(
    set('wrong type', key, anyJson),
    set('null', key, fc.constant(null)),
    key.map((k) => {
      const o = { ...obj };
      delete o[k];
      return { body: JSON.stringify(o), mutation: `missing ${k}` };
    }),
    set('extra', fc.string({ minLength: 1, maxLength: 10 }), anyJson),
    set('huge string', key, fc.constantFrom('x'.repeat(100_001), 'é'.repeat(70_000))),
    set('unicode', key, fc.string({ unit: 'binary', maxLength: 50 })),
    set('weird string', key, weird),
    set('giant number', key, giantNumber),
    set('id', key, idArb(undefined)),
    fc.nat({ max: 3000 }).map((n) => ({ body: '['.repeat(n + 100) + ']'.repeat(n + 100), mutation: 'deep nesting' })),
    fc.nat({ max: 60 }).map((n) => ({ body: JSON.stringify({ ...obj, [keys[0] ?? 'x']: JSON.parse('{"a":'.repeat(n + 5) + '1' + '}'.repeat(n + 5)) }), mutation: 'nested object' })),
    fc.constantFrom('{"title":', 'nul', '\u0000', "{'a':1}", '{"a":1}{"b":2}', '1e400', '[1,]', '\ufeff{}', '"\\ud800"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}').map((b) => ({
      body: b,
      mutation: 'non-JSON body',
    })),
    fc.constantFrom('null', '[]', '"text"', '42', 'true').map((b) => ({ body: b, mutation: 'body of another JSON type' })),
    fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=utf-16', 'application/jsonx').map((ct) => ({
      body: JSON.stringify(obj),
      mutation: `content type ${ct}`,
      contentType: ct,
    })),
  );
}

function requestArb(op: Operation): fc.Arbitrary<Req> {
  const colls = paramCollections(op.path);
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const ids = idArb(undefined);
  const pathArb = fc.tuple(...pathParams.map((p) => (colls[p.name] === 'errors' ? fc.oneof(fc.constantFrom('not_found', 'validation_failed'), weird) : idArb(colls[p.name])))).map((vals) =>
    // An empty segment would address another route (`/v1/tags/` is the list): sent as a space.
    pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, enc(vals[i]!) || '%20'), op.path),
  );
  const queryArb = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.option(
          (p.name === 'cursor' && cursors.length ? fc.oneof(fc.constantFrom(...cursors), fc.constantFrom(...cursors).chain(tamper)) : arbFromSchema(p.schema, { ids }, p.name)).map((v) => [p.name, String(v)] as [string, string]),
          { nil: undefined, freq: p.required ? 20 : 2 },
        ),
      ),
    )
    .map((xs) => xs.filter((x): x is [string, string] => !!x));
  const bodyArb: fc.Arbitrary<unknown> = op.jsonBody ? arbFromSchema(op.jsonBody, { ids }) : fc.constant(undefined);
  const auth: fc.Arbitrary<Req['auth']> = CREDENTIAL_ENDING.has(op.operationId)
    ? fc.constantFrom('victim', 'victim', 'none', 'bad')
    : op.secured
      ? fc.oneof({ weight: 8, arbitrary: fc.constantFrom('pat' as const, 'session' as const) }, { weight: 1, arbitrary: fc.constantFrom('none' as const, 'bad' as const) })
      : fc.constant('none' as const);
  const mutationKind = fc.oneof({ weight: 2, arbitrary: fc.constant('valid') }, { weight: 3, arbitrary: fc.constantFrom('body', 'query', 'path', 'duplicate query', 'headers') });
  return fc.tuple(pathArb, queryArb, bodyArb, auth, mutationKind).chain(([path, query, body, au, kind]) => {
    const base: Req = {
      opId: op.operationId,
      method: op.method,
      path,
      query,
      headers: op.rawBody ? { 'content-type': 'text/plain' } : {},
      ...(op.jsonBody ? { body: JSON.stringify(body) } : op.rawBody ? { body: 'file body' } : {}),
      auth: au,
      mutation: 'valid',
    };
    if (op.jsonBody) base.headers['content-type'] = 'application/json';
    if (kind === 'valid') return fc.constant(base);
    if (kind === 'body')
      return op.rawBody
        ? fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.constant('')).chain((b) => fc.constantFrom('', 'image/png', 'application/json', 'application/octet-stream; x="\\""').map((ct) => ({ ...base, body: b, headers: ct ? { 'content-type': ct } : {}, mutation: `raw body ${ct}` })))
        : mutateBody(op.jsonBody, body).map((m) => ({ ...base, body: m.body, headers: { ...base.headers, ...(m.contentType ? { 'content-type': m.contentType } : {}) }, mutation: m.mutation }));
    if (kind === 'query') {
      const names = [...queryParams.map((p) => p.name), 'unknown_param', 'limit', 'cursor'];
      return fc.tuple(fc.constantFrom(...names), fc.oneof(weird, fc.string({ maxLength: 30 }), giantNumber.map(String))).map(([n, v]) => ({ ...base, query: [...base.query.filter(([k]) => k !== n), [n, v] as [string, string]], mutation: `query ${n}` }));
    }
    if (kind === 'duplicate query') {
      if (!queryParams.length) return fc.constant({ ...base, query: [...base.query, ['x', '1'], ['x', '2']] as [string, string][], mutation: 'duplicate unknown query' });
      return fc.constantFrom(...queryParams).chain((p) => arbFromSchema(p.schema, { ids }, p.name).map((v) => ({ ...base, query: [...base.query, [p.name, String(v)], [p.name, String(v)]] as [string, string][], mutation: `duplicate ${p.name}` })));
    }
    if (kind === 'path') {
      if (!pathParams.length) return fc.constant({ ...base, path: base.path + '/' + randomUUID(), mutation: 'path suffix' });
      return fc.tuple(fc.constantFrom(...pathParams), weird).map(([p, v]) => ({ ...base, path: op.path.replace(`{${p.name}}`, enc(v) || '%20').replace(/\{[^}]+\}/g, randomUUID()), mutation: `path ${p.name}` }));
    }
    // headers
    return fc
      .constantFrom<[string, string][]>(
        [['idempotency-key', 'k'.repeat(300)]],
        [['idempotency-key', '']],
        [['accept', 'text/html']],
        [['if-match', '"nope"']],
        [['content-length', '0']],
        [['authorization', 'Bearer ' + 'a'.repeat(5000)]],
        [['authorization', 'Basic dXNlcjpwYXNz']],
        [['x-http-method-override', 'DELETE']],
      )
      .map((hs) => ({ ...base, headers: { ...base.headers, ...Object.fromEntries(hs) }, mutation: `header ${hs[0]![0]}` }));
  });
}

const byId = new Map<string, Operation>();
const requestSchema = schemaValidator();
function bodyIsValid(op: Operation, body: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  return requestSchema(op.jsonBody)(parsed);
}

// Requests go out on node:http with the path exactly as generated: fetch (WHATWG URL) would resolve
// dot segments ("/v1/containers/." becomes "/v1/containers/") before the server saw them.
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
type RawAnswer = { status: number; headers: { get(name: string): string | null }; text: string };
function rawRequest(url: string, method: string, headers: Record<string, string>, body: string | undefined): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(app.url);
    const req = http.request(
      { host: u.hostname, port: u.port, method, path: url.slice(app.url.length), headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const h = res.headers;
          resolve({ status: res.statusCode ?? 0, headers: { get: (n) => { const v = h[n.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v; } }, text: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function send(r: Req): Promise<string | null> {
  const op = byId.get(r.opId)!;
  const headers: Record<string, string> = { ...r.headers };
  const tok = r.auth === 'pat' ? owner.pat : r.auth === 'session' ? owner.session : r.auth === 'bad' ? 'cairn_pat_' + 'x'.repeat(40) : r.auth === 'victim' ? victim : null;
  if (tok && !('authorization' in headers)) headers.authorization = `Bearer ${tok}`;
  if (headers['content-length'] === '0') delete headers['content-length'];
  const qs = r.query.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  const url = app.url + r.path + (qs ? `?${qs}` : '');
  const t0 = performance.now();
  const res = await rawRequest(url, r.method, headers, r.body !== undefined && r.method !== 'GET' ? r.body : undefined).catch((e: Error) => e);
  if (res instanceof Error) {
    // What node:http refuses to send (a header name or value it rejects) never reached the server.
    if ((res as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR' || (res as NodeJS.ErrnoException).code === 'ERR_INVALID_HTTP_TOKEN' || /header/i.test(res.message)) return null;
    return `request failed: ${res.message} ${r.method} ${r.path}`;
  }
  const text = res.text;
  sent++;
  timing.set(r.opId, (timing.get(r.opId) ?? 0) + performance.now() - t0);
  sentOps.add(r.opId);
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  const where = `${r.method} ${r.path}${qs ? '?' + qs.slice(0, 200) : ''} [${r.mutation}] ${(r.body ?? '').slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`;
  if (r.auth === 'victim' && res.status < 300) victim = null; // its credential may be gone now
  if (res.status >= 500) return `5xx: ${where}`;
  const ct = res.headers.get('content-type') ?? '';
  if (res.status >= 400) {
    if (!ct.startsWith('application/problem+json')) return `not problem+json (${ct}): ${where}`;
    let p: Any;
    try {
      p = JSON.parse(text);
    } catch {
      return `problem body not JSON: ${where}`;
    }
    if (p.status !== res.status) return `problem status ${p.status} != ${res.status}: ${where}`;
    if (typeof p.type !== 'string' || typeof p.title !== 'string') return `problem without type/title: ${where}`;
    if (p.errors !== undefined && (!Array.isArray(p.errors) || !p.errors.length || p.errors.some((e: Any) => typeof e.pointer !== 'string' || !(e.pointer === '' || e.pointer.startsWith('/')))))
      return `errors without a JSON pointer each: ${where}`;
    // A body the documented schema refuses (checked with ajv) is a field at fault: the problem
    // names it. (A bad header, or a refusal about the state of things, e.g. a trashed project,
    // has no field to point at.)
    if (String(p.type).endsWith('/validation_failed') && !p.errors && !r.mutation.startsWith('header') && op.jsonBody && r.body !== undefined && !bodyIsValid(op, r.body)) return `validation_failed without a pointer for a body the contract refuses: ${where}`;
    return null;
  }
  if (!op.statuses.includes(res.status)) return `undocumented success status ${res.status} (documented ${op.statuses.join(',')}): ${where}`;
  if (res.status === 204 || !ct.includes('json')) return null;
  const v = validator(r.opId, res.status);
  if (v && !v(JSON.parse(text))) return `answer does not match the documented schema ${JSON.stringify(v.errors?.slice(0, 3))}: ${where}`;
  return null;
}

describe('fuzzing from /openapi.json (issue 18.2)', () => {
  it(`${FUZZ_REQUESTS} generated and mutated requests over every operation: no 5xx, problems well formed, successes as documented`, async () => {
    const arbs = new Map(ops.map((o) => [o.operationId, requestArb(o)]));
    const perOp = fc.constantFrom(...ops).chain((o) => arbs.get(o.operationId)!);
    const started = Date.now();
    let genTime = 0;
    let lastEnd = performance.now();
    await fc.assert(
      fc.asyncProperty(fc.array(perOp, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        genTime += performance.now() - lastEnd;
        if (!victim && batch.some((r) => r.auth === 'victim')) victim = (await registerUser(app)).session;
        const errors = (await Promise.all(batch.map(send))).filter(Boolean);
        lastEnd = performance.now();
        if (errors.length) throw new Error(errors.join('\n'));
      }),
      { numRuns: Math.ceil(FUZZ_REQUESTS / BATCH), seed, endOnFailure: true, verbose: 0 },
    );
    console.log(`fuzz: ${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s over ${ops.length} operations (seed ${seed}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    if (process.env.FUZZ_TIMING) console.log(`generation ${genTime.toFixed(0)} ms`, [...timing].sort((a, b) => b[1] - a[1]).slice(0, 12));
    expect(sent).toBeGreaterThanOrEqual(FUZZ_REQUESTS);
    expect(ops.filter((o) => !sentOps.has(o.operationId)).map((o) => o.operationId)).toEqual([]);
    expect(
      connects.filter((c) => !/ (127\.\d+\.\d+\.\d+|::1):\d+$/.test(c)),
      'outbound connections to anything but loopback while fuzzing',
    ).toEqual([]);
  }, 120_000 + FUZZ_REQUESTS * 10);
});
