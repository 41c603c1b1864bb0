// Client ID Metadata Documents (issue 31 item 2; docs/oauth.md "Client ID Metadata Documents";
// routers/oauth/client-metadata.ts): a client_id that is an https URL is fetched through the
// outbound door from a loopback HTTPS page server (a self-signed certificate trusted through the
// door's test hooks, CAIRN_UNSAFE_ALLOW_LOOPBACK=1), checked, cached by the injected clock, and
// used as a public client at /oauth/authorize and /oauth/token. Every refusal at the authorize
// endpoint is the HTML page, never a redirect (the callbacks are not known yet).
//
// The 5 s deadline: `fetchOptions` is checked to hand the door 5000 ms, and one app runs with the
// test-only `clientMetadataDeadlineMs` of 1 s against a server that never answers, so the
// refusal is seen after a 1 s wait inside the door (the test itself never sleeps). 1 s, not less:
// the request must reach the server (connect, TLS handshake) before the deadline, which 200 ms
// did not leave a loaded machine time enough to be sure of.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { pageServer, selfSignedCert, type Cert, type PageServer } from '../helpers/tls.js';
import { REDIRECT, authorizeUrl, openAuthorize, pkce, token, waitPoll } from './helpers.js';
import { LIMITS } from '../../core/config.js';
import type { OutboundTestHooks } from '../../core/net/index.js';
import { MetadataCache, cacheLifetimeMs, clientIdUrlProblem, fetchOptions, resolveMetadataClient } from '../../routers/oauth/client-metadata.js';

type Doc = { status?: number; headers?: Record<string, string>; body?: string | object; hang?: boolean };
/** What the page server answers, by path; a test sets its own paths (the cache is per URL). */
const routes = new Map<string, () => Doc>();
const held: ServerResponse[] = [];
let cert: Cert;
let docs: PageServer;
let app: TestApp;
let hooks: OutboundTestHooks;

const url = (path: string) => `${docs.origin}${path}`;
const doc = (path: string, extra: Record<string, unknown> = {}) => ({ client_id: url(path), client_name: 'Doc App', redirect_uris: [REDIRECT], ...extra });
const hitsOf = (path: string) => docs.hits.filter((h) => h === `GET ${path}`).length;

beforeAll(async () => {
  cert = selfSignedCert();
  docs = await pageServer((req, res) => {
    const route = routes.get(req.url!);
    if (!route) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    const d = route();
    if (d.hang) return void held.push(res);
    res.writeHead(d.status ?? 200, { 'content-type': 'application/json', ...d.headers });
    res.end(typeof d.body === 'string' ? d.body : JSON.stringify(d.body));
  }, cert);
  hooks = { ca: cert.cert, resolver: async () => [{ address: '127.0.0.1', family: 4 }] };
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { outbound: hooks });
});
afterAll(async () => {
  await app.close();
  await docs.close();
});

/** Opens the authorize page for a client_id, as an app would send the user there. */
async function authorize(a: TestApp, clientId: string, redirectUri = REDIRECT) {
  const { verifier, challenge } = pkce();
  const page = await openAuthorize(
    authorizeUrl(a, { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'todos:read todos:write', resource: `${a.deps.config.publicUrl}/mcp`, code_challenge: challenge, code_challenge_method: 'S256', state: 'st' }),
  );
  return { ...page, verifier };
}

/** The page's text as a reader sees it (tags out, entities decoded). */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** A refusal: 400, the HTML error page with this reason, no redirect. */
function expectRefused(page: Awaited<ReturnType<typeof authorize>>, reason: string | RegExp) {
  expect(page.status).toBe(400);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.location).toBeNull();
  expect(page.userCode).toBeUndefined();
  const text = textOf(page.html);
  if (typeof reason === 'string') expect(text).toContain(reason);
  else expect(text).toMatch(reason);
}

describe('discovery', () => {
  it('advertises metadata documents and the iss parameter (RFC 8414, RFC 9207)', async () => {
    const r = await call(app, 'GET', '/.well-known/oauth-authorization-server');
    expect(r.body.client_id_metadata_document_supported).toBe(true);
    expect(r.body.authorization_response_iss_parameter_supported).toBe(true);
    expect(r.body.registration_endpoint).toBe(`${app.url}/oauth/register`);
  });
});

describe('a document that passes', () => {
  it('shows the authorize page, names the app by its host, and keeps a public client row', async () => {
    routes.set('/ok/client.json', () => ({ body: doc('/ok/client.json') }));
    const page = await authorize(app, url('/ok/client.json'));
    expect(page.status).toBe(200);
    expect(page.userCode).toMatch(/^\d{9}$/);
    expect(textOf(page.html)).toContain(`App identified by its metadata document at localhost:${docs.port} , which names itself Doc App unverified`);
    const u = await registerUser(app);
    const shown = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session });
    expect(shown.body.client).toEqual({ id: url('/ok/client.json'), name: `localhost:${docs.port}`, verified: false });
    expect(shown.body.redirectUri).toBe(REDIRECT);
  });

  it('takes a document of exactly 64 KiB and refuses one byte more', async () => {
    const padded = (path: string, size: number) => {
      const base = JSON.stringify(doc(path, { pad: '' }));
      return JSON.stringify(doc(path, { pad: 'x'.repeat(size - base.length) }));
    };
    const exact = padded('/size/exact.json', LIMITS.clientMetadata.maxBytes);
    const over = padded('/size/over.json', LIMITS.clientMetadata.maxBytes + 1);
    expect(Buffer.byteLength(exact)).toBe(64 * 1024);
    expect(Buffer.byteLength(over)).toBe(64 * 1024 + 1);
    routes.set('/size/exact.json', () => ({ body: exact }));
    routes.set('/size/over.json', () => ({ body: over }));
    expect((await authorize(app, url('/size/exact.json'))).status).toBe(200);
    expectRefused(await authorize(app, url('/size/over.json')), `The app's metadata document (${url('/size/over.json')}) cannot be used: it is larger than 64 KiB.`);
  });
});

describe('the deadline', () => {
  it('hands the door 5 s, 64 KiB, no redirect, https only', () => {
    const o = fetchOptions(app.deps);
    expect(o).toMatchObject({ deadlineMs: 5_000, maxBytes: 64 * 1024, redirects: 0, httpsOnly: true, method: 'GET', allowLoopback: true });
  });

  it('refuses a document that does not arrive in time (a 1 s deadline in this test)', async () => {
    const slow = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { clientMetadataDeadlineMs: 1_000 }, { outbound: hooks });
    try {
      routes.set('/slow/client.json', () => ({ hang: true }));
      expectRefused(await authorize(slow, url('/slow/client.json')), 'cannot be used: it did not arrive within 1 s.');
      expect(hitsOf('/slow/client.json')).toBe(1);
    } finally {
      for (const r of held.splice(0)) r.destroy();
      await slow.close();
    }
  });
});

describe('the client_id URL', () => {
  it('is https only: an http URL is refused without a connection', async () => {
    routes.set('/plain/client.json', () => ({ body: doc('/plain/client.json') }));
    const before = docs.connections();
    const plain = `http://localhost:${docs.port}/plain/client.json`;
    expectRefused(await authorize(app, plain), `The client_id ${plain} must be an https URL`);
    expect(docs.connections()).toBe(before);
  });

  it.each([
    ['a fragment', '/frag/client.json#x', 'must not contain a fragment'],
    ['no path', '/', 'must have a path'],
    ['dot segments', '/a/../client.json', 'must be written in normalised form'],
  ])('refuses %s without a connection', async (_name, path, reason) => {
    const before = docs.connections();
    expectRefused(await authorize(app, `https://localhost:${docs.port}${path}`), reason);
    expect(docs.connections()).toBe(before);
  });

  it('refuses user information and overlong URLs', () => {
    expect(clientIdUrlProblem('https://user:pw@example.com/c.json')).toBe('must not carry user information');
    expect(clientIdUrlProblem(`https://example.com/${'a'.repeat(2048)}`)).toBe('is longer than 2048 characters');
    expect(clientIdUrlProblem('https://example.com/c.json?v=1')).toBeNull();
  });
});

describe('the document', () => {
  it('must name its own URL as client_id', async () => {
    routes.set('/mismatch/client.json', () => ({ body: doc('/mismatch/client.json', { client_id: 'https://other.example/client.json' }) }));
    expectRefused(await authorize(app, url('/mismatch/client.json')), 'cannot be used: it names another client_id (https://other.example/client.json) than its own URL.');
  });

  it.each([
    ['an http callback off loopback', ['http://evil.example/cb'], 'has an unacceptable redirect_uris[0]: it http is allowed only for loopback hosts'],
    ['a javascript: callback', [REDIRECT, 'javascript:alert(1)'], 'has an unacceptable redirect_uris[1]: it the javascript: scheme is not allowed'],
    ['a callback with a fragment', ['https://app.example/cb#x'], 'has an unacceptable redirect_uris[0]: it must not contain a fragment'],
    ['no callbacks', [], 'has no redirect_uris'],
    ['eleven callbacks', Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`), 'has more than 10 redirect_uris'],
  ])('follows the registration rules for redirect_uris: %s', async (_name, uris, reason) => {
    const path = `/redirects/${encodeURIComponent(_name.replace(/\W+/g, '-'))}.json`;
    routes.set(path, () => ({ body: doc(path, { redirect_uris: uris }) }));
    expectRefused(await authorize(app, url(path)), reason);
  });

  it('refuses a callback the document does not list', async () => {
    routes.set('/listed/client.json', () => ({ body: doc('/listed/client.json') }));
    expectRefused(await authorize(app, url('/listed/client.json'), 'https://attacker.example/cb'), 'is not one this app lists in its metadata document');
  });

  it.each([
    ['a client_secret', { client_secret: 'shh' }, 'must not contain a client_secret'],
    ['a confidential auth method', { token_endpoint_auth_method: 'client_secret_basic' }, 'must declare token_endpoint_auth_method none'],
    ['a bad client_name', { client_name: 'x'.repeat(257) }, 'has a client_name that is not a string of 1 to 256 characters'],
    ['another grant type', { grant_types: ['client_credentials'] }, 'lists grant_types other than authorization_code and refresh_token'],
  ])('is a public client only: refuses %s', async (_name, extra, reason) => {
    const path = `/public/${_name.replace(/\W+/g, '-')}.json`;
    routes.set(path, () => ({ body: doc(path, extra) }));
    expectRefused(await authorize(app, url(path)), reason);
  });

  it('must be a 200 JSON answer: no redirect followed, no other type, valid JSON', async () => {
    routes.set('/moved/client.json', () => ({ status: 302, headers: { location: url('/ok/client.json') }, body: '' }));
    routes.set('/gone/client.json', () => ({ status: 404, body: '{}' }));
    routes.set('/html/client.json', () => ({ headers: { 'content-type': 'text/html' }, body: '<p>hi</p>' }));
    routes.set('/broken/client.json', () => ({ body: '{"client_id":' }));
    const okHits = hitsOf('/ok/client.json');
    expectRefused(await authorize(app, url('/moved/client.json')), 'answered 302: redirects are not followed.');
    expect(hitsOf('/ok/client.json')).toBe(okHits);
    expectRefused(await authorize(app, url('/gone/client.json')), 'answered 404 instead of 200.');
    expectRefused(await authorize(app, url('/html/client.json')), 'is served as text/html, not application/json.');
    expectRefused(await authorize(app, url('/broken/client.json')), 'is not valid JSON.');
  });
});

describe('caching', () => {
  it('keeps a document for its max-age by the injected clock, then fetches it again', async () => {
    routes.set('/cache/max-age.json', () => ({ headers: { 'cache-control': 'public, max-age=600' }, body: doc('/cache/max-age.json') }));
    expect((await authorize(app, url('/cache/max-age.json'))).status).toBe(200);
    expect((await authorize(app, url('/cache/max-age.json'))).status).toBe(200);
    expect(hitsOf('/cache/max-age.json')).toBe(1);
    app.clock.advance(599_000);
    await authorize(app, url('/cache/max-age.json'));
    expect(hitsOf('/cache/max-age.json')).toBe(1);
    app.clock.advance(2_000);
    await authorize(app, url('/cache/max-age.json'));
    expect(hitsOf('/cache/max-age.json')).toBe(2);
  });

  it('keeps even a no-store document for the 60 s floor', async () => {
    routes.set('/cache/no-store.json', () => ({ headers: { 'cache-control': 'no-store' }, body: doc('/cache/no-store.json') }));
    await authorize(app, url('/cache/no-store.json'));
    app.clock.advance(59_000);
    await authorize(app, url('/cache/no-store.json'));
    expect(hitsOf('/cache/no-store.json')).toBe(1);
    app.clock.advance(2_000);
    await authorize(app, url('/cache/no-store.json'));
    expect(hitsOf('/cache/no-store.json')).toBe(2);
  });

  it('keeps a document no longer than the one-day ceiling, whatever it asks', async () => {
    routes.set('/cache/year.json', () => ({ headers: { 'cache-control': 'max-age=31536000' }, body: doc('/cache/year.json') }));
    await authorize(app, url('/cache/year.json'));
    app.clock.advance(86_399_000);
    await authorize(app, url('/cache/year.json'));
    expect(hitsOf('/cache/year.json')).toBe(1);
    app.clock.advance(2_000);
    await authorize(app, url('/cache/year.json'));
    expect(hitsOf('/cache/year.json')).toBe(2);
  });

  it('sees a changed document once its cache runs out (the row follows it)', async () => {
    let uris = [REDIRECT];
    routes.set('/cache/changes.json', () => ({ headers: { 'cache-control': 'max-age=120' }, body: doc('/cache/changes.json', { redirect_uris: uris }) }));
    expect((await authorize(app, url('/cache/changes.json'))).status).toBe(200);
    uris = ['http://127.0.0.1:9/other'];
    expect((await authorize(app, url('/cache/changes.json'))).status).toBe(200);
    app.clock.advance(121_000);
    expectRefused(await authorize(app, url('/cache/changes.json')), 'is not one this app lists in its metadata document');
    expect((await authorize(app, url('/cache/changes.json'), 'http://127.0.0.1:9/other')).status).toBe(200);
  });

  it('fetches once for requests that arrive together', async () => {
    routes.set('/cache/together.json', () => ({ body: doc('/cache/together.json') }));
    const [a, b] = await Promise.all([resolveMetadataClient(app.deps, url('/cache/together.json')), resolveMetadataClient(app.deps, url('/cache/together.json'))]);
    expect(a.client.id).toBe(url('/cache/together.json'));
    expect(b.client.id).toBe(a.client.id);
    expect(hitsOf('/cache/together.json')).toBe(1);
  });

  it('reads freshness as a shared cache would (RFC 9111 §4.2.1), within floor and ceiling', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    const date = new Date(now).toUTCString();
    const inAnHour = new Date(now + 3_600_000).toUTCString();
    expect(cacheLifetimeMs({}, now)).toBe(60_000);
    expect(cacheLifetimeMs({ 'cache-control': 'max-age=600' }, now)).toBe(600_000);
    expect(cacheLifetimeMs({ 'cache-control': 'max-age=600, s-maxage=900' }, now)).toBe(900_000);
    expect(cacheLifetimeMs({ 'cache-control': 'max-age=600', age: '100' }, now)).toBe(500_000);
    expect(cacheLifetimeMs({ 'cache-control': 'private, max-age=600' }, now)).toBe(60_000);
    expect(cacheLifetimeMs({ 'cache-control': 'no-cache' }, now)).toBe(60_000);
    expect(cacheLifetimeMs({ 'cache-control': 'max-age=5' }, now)).toBe(60_000);
    expect(cacheLifetimeMs({ 'cache-control': 'max-age=999999999' }, now)).toBe(86_400_000);
    expect(cacheLifetimeMs({ expires: inAnHour, date }, now)).toBe(3_600_000);
    expect(cacheLifetimeMs({ expires: inAnHour }, now)).toBe(3_600_000);
    expect(cacheLifetimeMs({ expires: 'not a date' }, now)).toBe(60_000);
  });

  it('holds a bounded number of documents, dropping expired ones first, then the least recently used', () => {
    expect(LIMITS.clientMetadata.cacheEntries).toBe(1000);
    const c = new MetadataCache<string>(3);
    c.set('a', 'A', 100, 0);
    c.set('b', 'B', 10, 0);
    c.set('c', 'C', 100, 0);
    c.set('d', 'D', 100, 20); // b has expired: it goes, the others stay
    expect([c.get('a', 20), c.get('c', 20), c.get('d', 20)]).toEqual(['A', 'C', 'D']);
    c.get('a', 21); // a is now the most recently used; c the least
    c.set('e', 'E', 100, 21);
    expect(c.size).toBe(3);
    expect(c.get('c', 21)).toBeUndefined();
    expect([c.get('a', 21), c.get('d', 21), c.get('e', 21)]).toEqual(['A', 'D', 'E']);
    expect(c.get('a', 100)).toBeUndefined();
  });
});

describe('the token endpoint', () => {
  it('exchanges and refreshes for a document client without a secret, and stops once the document is gone', async () => {
    let served = true;
    const path = '/token/client.json';
    routes.set(path, () => (served ? { headers: { 'cache-control': 'max-age=60' }, body: doc(path) } : { status: 404, body: '{}' }));
    const clientId = url(path);
    const u = await registerUser(app);
    const page = await authorize(app, clientId);
    expect(page.status).toBe(200);
    expect((await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, body: { scopes: ['todos:read', 'todos:write'] } })).status).toBe(200);
    const redirect = new URL((await waitPoll(app, page.handle!)).redirect!);
    expect(redirect.searchParams.get('iss')).toBe(app.url);
    const code = redirect.searchParams.get('code')!;

    // A secret is never accepted for such a client.
    const withSecret = await token(app, { grant_type: 'authorization_code', code, code_verifier: page.verifier, client_id: clientId, client_secret: 'c2VjcmV0', redirect_uri: REDIRECT });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');

    const t = await token(app, { grant_type: 'authorization_code', code, code_verifier: page.verifier, client_id: clientId, redirect_uri: REDIRECT, resource: `${app.url}/mcp` });
    expect(t.status).toBe(200);
    expect(t.body.scope).toBe('todos:read todos:write');
    const refreshed = await token(app, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);

    // The document is taken down: once the cache runs out, the client's refreshes end.
    served = false;
    app.clock.advance(61_000);
    const gone = await token(app, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId });
    expect(gone.status).toBe(401);
    expect(gone.body).toEqual({ error: 'invalid_client', error_description: `The app's metadata document (${clientId}) answered 404 instead of 200.` });
  });

  it('refuses an http client_id at the token endpoint too', async () => {
    const r = await token(app, { grant_type: 'refresh_token', refresh_token: 'cairn_ort_x', client_id: `http://localhost:${docs.port}/x.json` });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
    expect(r.body.error_description).toContain('must be an https URL');
  });
});
