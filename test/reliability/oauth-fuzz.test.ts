// Issue 18.2 for the OAuth endpoints that /openapi.json does not describe (they are RFC 7591 /
// RFC 6749 endpoints, not /v1 operations): POST /oauth/register (JSON) and POST /oauth/token
// (form-encoded), plus the authorize page's POST /oauth/authorize/wait. fast-check generates
// valid requests from real clients, codes and refresh tokens, and mutations of them: form and JSON
// bodies, wrong and missing content types, repeated parameters, wrong types, weird and huge
// strings, lone surrogates, invalid percent-encoding, deep nesting, Basic credentials good and
// malformed. Every answer must be:
//   - never a 5xx;
//   - a 429: the rate_limited problem (the app runs with every bucket × 1e9, so none is expected);
//   - another error: application/json `{error, error_description?}` with `error` one of RFC 6749 /
//     RFC 7591's codes and the status that code has (invalid_client 401, a body over the limit
//     413 invalid_request, everything else 400), `Cache-Control: no-store` on the token endpoint;
//   - a success: 201 with a client_id (register), 200 with a Bearer pair (token), 200 with a
//     status (wait).
// OAUTH_FUZZ_REQUESTS (default 1,500; soak 20,000). A failure names the seed; CAIRN_TEST_SEED repeats a run.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameSeedOnFailure, testSeed } from '../helpers/seed.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { fullUser, OAUTH_REDIRECT, oauthFlow, type OAuthFlow } from '../helpers/resources.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQUESTS = Number(process.env.OAUTH_FUZZ_REQUESTS ?? (process.env.CAIRN_SOAK ? 20_000 : 1_500));
const BATCH = 16;

// The seed: random on every run (each run explores new inputs); CAIRN_TEST_SEED=<n> fixes it to
// repeat one (FUZZ_SEED too, as before). A failure of any kind (an assertion, a thrown error, a
// timeout) names it at the head of its message, the part the CI's summary keeps.
const seed = testSeed(process.env.FUZZ_SEED, Date.now() % 2 ** 31);
nameSeedOnFailure(seed);

const ERRORS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'invalid_target', 'invalid_redirect_uri', 'invalid_client_metadata']);

let app: TestApp;
let resource: string;
const flows: OAuthFlow[] = [];
let owner: Awaited<ReturnType<typeof fullUser>>;
let publicClient: string;
let basicClient: { id: string; secret: string };
const statuses = new Map<string, number>();

beforeAll(async () => {
  app = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1000000000', CAIRN_DURABILITY: 'relaxed' }, { scryptLogN: 10 });
  resource = app.deps.config.publicUrl;
  owner = await fullUser(app);
  for (let i = 0; i < 3; i++) flows.push(await oauthFlow(app, owner));
  publicClient = (await call(app, 'POST', '/oauth/register', { body: { client_name: 'pub', redirect_uris: [OAUTH_REDIRECT] } })).body.client_id;
  const b = await call(app, 'POST', '/oauth/register', { body: { client_name: 'basic', redirect_uris: [OAUTH_REDIRECT], token_endpoint_auth_method: 'client_secret_basic' } });
  basicClient = { id: b.body.client_id, secret: b.body.client_secret };
}, 60_000);
afterAll(() => app?.close());

const weird = fc.constantFrom('', ' ', '\u0000', '\ud800', 'a\udfffb', '\u202e', '😀'.repeat(40), 'x'.repeat(5000), '%', '%zz', '%ED%A0%80', '<script>', 'null', '[]', '{}', '1e999', '-1', 'cl_', 'cairn_ort_', 'cairn_ort_' + 'A'.repeat(43));
const str = fc.oneof(weird, fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }));
const anyJson = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), str, fc.array(str, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), str, { maxKeys: 3 }));

type Req = { path: string; body: string; headers: Record<string, string>; what: string; flow?: number };

/** encodeURIComponent, with a lone surrogate sent as the invalid UTF-8 bytes %ED%A0%80. */
function enc(s: string): string {
  return s
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part, i) => (i % 2 ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

function form(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
}

/** The token endpoint: a valid-looking set of parameters, then one of the mutations. */
const tokenArb: fc.Arbitrary<Req> = fc
  .record({
    grant: fc.constantFrom('authorization_code', 'refresh_token', 'refresh_token', 'client_credentials', 'password'),
    flow: fc.nat({ max: 2 }),
    client: fc.constantFrom('flow', 'flow', 'public', 'basic', 'unknown'),
    secret: fc.constantFrom('right', 'right', 'wrong', 'none'),
    extra: fc.dictionary(fc.constantFrom('scope', 'resource', 'redirect_uri', 'code_verifier', 'state', 'x'), str, { maxKeys: 2 }),
    mutation: fc.constantFrom('valid', 'valid', 'json', 'no content type', 'text/plain', 'repeat', 'weird value', 'missing', 'basic', 'bad basic', 'truncated', 'huge'),
    pick: fc.nat({ max: 20 }),
    value: str,
  })
  .map(({ grant, flow, client, secret, extra, mutation, pick, value }) => {
    const f = flows[flow]!;
    const pairs: [string, string][] = [['grant_type', grant]];
    if (grant === 'authorization_code') pairs.push(['code', f.code], ['code_verifier', f.verifier], ['redirect_uri', OAUTH_REDIRECT], ['resource', resource]);
    else pairs.push(['refresh_token', f.refresh]);
    const cid = client === 'flow' ? f.clientId : client === 'public' ? publicClient : client === 'basic' ? basicClient.id : 'cl_unknown';
    pairs.push(['client_id', cid]);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (client === 'flow' && secret !== 'none') pairs.push(['client_secret', secret === 'right' ? f.clientSecret : 'wrong-secret']);
    if (client === 'basic' && secret !== 'none')
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basicClient.id)}:${encodeURIComponent(secret === 'right' ? basicClient.secret : 'nope')}`).toString('base64')}`;
    for (const [k, v] of Object.entries(extra)) pairs.push([k, v]);
    const dedup = pairs.filter(([k], i) => pairs.findIndex(([kk]) => kk === k) === i);
    let body = form(dedup);
    switch (mutation) {
      case 'json':
        body = JSON.stringify(Object.fromEntries(dedup));
        headers['content-type'] = 'application/json';
        break;
      case 'no content type':
        delete headers['content-type'];
        break;
      case 'text/plain':
        headers['content-type'] = 'text/plain';
        break;
      case 'repeat':
        body = form([...dedup, dedup[pick % dedup.length]!]);
        break;
      case 'weird value': {
        const i = pick % dedup.length;
        body = form(dedup.map(([k, v], j) => [k, j === i ? value : v]));
        break;
      }
      case 'missing':
        body = form(dedup.filter((_, j) => j !== pick % dedup.length));
        break;
      case 'basic':
        headers.authorization = `Basic ${Buffer.from(`${cid}:${value}`).toString('base64')}`;
        break;
      case 'bad basic':
        headers.authorization = ['Basic', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from('%zz:%').toString('base64')}`, `Bearer ${f.access}`][pick % 5]!;
        break;
      case 'truncated':
        body = body.slice(0, pick * 3) + '%E';
        break;
      case 'huge':
        body = `${body}&x=${'y'.repeat(200_000)}`;
        break;
    }
    return { path: '/oauth/token', body, headers, what: `${grant} ${client} ${secret} ${mutation}`, flow };
  });

/** Registration (RFC 7591): JSON metadata and its mutations. */
const registerArb: fc.Arbitrary<Req> = fc
  .record({
    name: fc.oneof({ weight: 4, arbitrary: fc.constant('App') }, str, anyJson),
    uris: fc.oneof(
      { weight: 3, arbitrary: fc.constant([OAUTH_REDIRECT]) },
      fc.array(fc.oneof(fc.constantFrom(OAUTH_REDIRECT, 'https://app.example/cb', 'com.example.app:/cb', 'http://localhost:1/x', 'javascript:alert(1)', 'https://a.example/#f', 'http://[::1/cb'), str), { maxLength: 12 }),
      anyJson,
    ),
    method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt') }, anyJson),
    drop: fc.constantFrom('', '', '', 'client_name', 'redirect_uris', 'token_endpoint_auth_method'),
    extra: fc.dictionary(fc.constantFrom('grant_types', 'scope', 'logo_uri', '__proto__', 'constructor', 'x'), anyJson, { maxKeys: 2 }),
    mutation: fc.constantFrom('valid', 'valid', 'form', 'not json', 'deep', 'other type', 'huge'),
    n: fc.nat({ max: 3000 }),
  })
  .map(({ name, uris, method, drop, extra, mutation, n }) => {
    const obj: Any = { client_name: name, redirect_uris: uris, token_endpoint_auth_method: method, ...extra };
    if (drop) delete obj[drop];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    let body = JSON.stringify(obj);
    if (mutation === 'form') {
      body = form(Object.entries(obj).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v) ?? ""]));
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (mutation === 'not json') body = ['{"client_name":', '\u0000', "{'a':1}", '{"a":1}{', '\ufeff{}', '"\\ud800"'][n % 6]!;
    else if (mutation === 'deep') body = '['.repeat(n + 50) + ']'.repeat(n + 50);
    else if (mutation === 'other type') body = ['null', '[]', '"x"', '42', 'true'][n % 5]!;
    else if (mutation === 'huge') body = JSON.stringify({ ...obj, client_name: 'x'.repeat(20_000) });
    return { path: '/oauth/register', body, headers, what: `register ${mutation} drop=${drop}` };
  });

/** The authorize page's poll: a form with the page handle. */
const waitArb: fc.Arbitrary<Req> = fc.tuple(fc.oneof(fc.constantFrom(...['h']).map(() => flows[0]!.handle), str), fc.constantFrom('form', 'json', 'repeat')).map(([h, m]) => ({
  path: '/oauth/authorize/wait',
  body: m === 'json' ? JSON.stringify({ handle: h }) : m === 'repeat' ? form([['handle', h], ['handle', h]]) : form([['handle', h]]),
  headers: { 'content-type': m === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
  what: `wait ${m}`,
}));

/**
 * A grant ends when the fuzz presents an old refresh token (reuse detection) or redeems its code
 * again; without live grants the valid token requests could never succeed again, so a revoked
 * flow is replaced by a new one before the next batch (its requests are generated afterwards).
 */
async function renewRevokedFlows(): Promise<void> {
  const live = app.deps.db.$client.prepare('SELECT COUNT(*) AS n FROM oauth_grants WHERE client_id = ? AND revoked_at IS NULL');
  for (let i = 0; i < flows.length; i++) {
    if ((live.get(flows[i]!.clientId) as { n: number }).n === 0) flows[i] = await oauthFlow(app, owner);
  }
}

async function send(r: Req): Promise<string | null> {
  const res = await fetch(app.url + r.path, { method: 'POST', headers: r.headers, body: r.body }).catch((e: Error) => e);
  if (res instanceof Error) return res instanceof TypeError && /header/i.test(res.message) ? null : `request failed: ${res.message}`;
  const text = await res.text();
  const key = `${r.path} ${res.status}`;
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
  const where = `POST ${r.path} [${r.what}] ${r.body.slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`;
  if (res.status >= 500) return `5xx: ${where}`;
  const ct = res.headers.get('content-type') ?? '';
  if (r.path === '/oauth/token' && res.headers.get('cache-control') !== 'no-store') return `token answer without no-store: ${where}`;
  let body: Any;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${where}`;
  }
  if (res.status === 429) return ct.startsWith('application/problem+json') && body.status === 429 ? null : `429 not a problem: ${where}`;
  if (res.status >= 400) {
    if (!ct.startsWith('application/json')) return `error not application/json (${ct}): ${where}`;
    if (!ERRORS.has(body.error)) return `unknown error code: ${where}`;
    if (body.error_description !== undefined && typeof body.error_description !== 'string') return `error_description not a string: ${where}`;
    // A body over the endpoint's limit is 413 invalid_request (HTTP's own status for it).
    const expected = body.error === 'invalid_client' ? 401 : res.status === 413 && body.error === 'invalid_request' ? 413 : 400;
    if (res.status !== expected) return `${body.error} with status ${res.status}, expected ${expected}: ${where}`;
    return null;
  }
  if (r.path === '/oauth/register') return res.status === 201 && typeof body.client_id === 'string' ? null : `register success: ${where}`;
  if (r.path === '/oauth/token') {
    if (res.status !== 200 || body.token_type !== 'Bearer' || typeof body.access_token !== 'string' || typeof body.refresh_token !== 'string') return `token success: ${where}`;
    // The chain continues from the newest token: later valid requests of this flow present it.
    if (r.flow !== undefined) flows[r.flow]!.refresh = body.refresh_token;
    return null;
  }
  return res.status === 200 && typeof body.status === 'string' ? null : `wait success: ${where}`;
}

describe('fuzzing the OAuth endpoints outside /openapi.json (issue 18.2)', () => {
  it(`${REQUESTS} generated and mutated requests to /oauth/register, /oauth/token and /oauth/authorize/wait: no 5xx, RFC 6749 error JSON with the right status`, async () => {
    const any = fc.oneof({ weight: 5, arbitrary: tokenArb }, { weight: 3, arbitrary: registerArb }, { weight: 1, arbitrary: waitArb });
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(any, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await renewRevokedFlows();
        const errors = (await Promise.all(batch.map(send))).filter(Boolean);
        sent += batch.length;
        if (errors.length) throw new Error(errors.join('\n'));
      }),
      { numRuns: Math.ceil(REQUESTS / BATCH), seed, endOnFailure: true, verbose: 0 },
    );
    console.log(`oauth fuzz: ${sent} requests (seed ${seed}); ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect(sent).toBeGreaterThanOrEqual(REQUESTS);
    // Each endpoint answered both successes and refusals.
    for (const k of ['/oauth/register 201', '/oauth/register 400', '/oauth/token 200', '/oauth/token 400', '/oauth/token 401', '/oauth/authorize/wait 200']) expect(statuses.get(k) ?? 0, k).toBeGreaterThan(0);
  }, 120_000);
});
