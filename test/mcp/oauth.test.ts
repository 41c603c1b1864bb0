// Issue 31 "Done means": the SDK's own Client with its OAuth client provider against /mcp:
// discovery of the protected resource (from the 401 challenge) and of the authorization server,
// registration (dynamic registration, and a Client ID Metadata Document served by this test over
// loopback HTTPS), PKCE authorization approved by a first-party session through the nine-digit
// code, tools/list and calls, refresh, and the audience refusals both ways (docs/mcp.md "OAuth",
// docs/oauth.md "Client ID Metadata Documents").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { OAUTH_REDIRECT, oauthFlow } from '../helpers/resources.js';
import { pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';
import type { ConnectAttempt } from '../../core/net/index.js';
import { callTool, rpc } from './helpers.js';

let app: TestApp;
let docs: PageServer;
const attempts: ConnectAttempt[] = [];
/** The assistant's metadata document, served at https://localhost:<port>/assistant/client.json. */
const docUrl = () => `${docs.origin}/assistant/client.json`;
beforeAll(async () => {
  const cert = selfSignedCert();
  docs = await pageServer((req, res) => {
    if (req.url !== '/assistant/client.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(JSON.stringify({ client_id: docUrl(), client_name: 'Test Assistant (document)', redirect_uris: [OAUTH_REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }));
  }, cert);
  // The document is fetched through the outbound door: loopback allowed for the test, the test's
  // CA trusted, `localhost` resolved to the page server, every connect watched.
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { outbound: { ca: cert.cert, resolver: async () => [{ address: '127.0.0.1', family: 4 }], onConnect: (a) => attempts.push(a) } });
});
afterAll(async () => {
  await app.close();
  await docs.close();
});

type Stored = Parameters<NonNullable<OAuthClientProvider['saveClientInformation']>>[0];
type Tokens = Parameters<OAuthClientProvider['saveTokens']>[0];

/** An assistant's OAuth state, in memory (what a desktop client keeps in its store). */
class TestProvider implements OAuthClientProvider {
  /** With a URL, the client identifies itself by its metadata document instead of registering. */
  constructor(readonly clientMetadataUrl?: string) {}
  info: Stored | undefined;
  toks: Tokens | undefined;
  verifier = '';
  authUrl: URL | undefined;
  get redirectUrl() {
    return OAUTH_REDIRECT;
  }
  get clientMetadata() {
    return { client_name: 'Test Assistant', redirect_uris: [OAUTH_REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(i: Stored) {
    this.info = i;
  }
  tokens() {
    return this.toks;
  }
  saveTokens(t: Tokens) {
    this.toks = t;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: OAuthDiscoveryState | undefined;
  saveDiscoveryState(d: OAuthDiscoveryState) {
    this.discovery = d;
  }
  discoveryState() {
    return this.discovery;
  }
}

/**
 * The user's side: open the authorize page, look the nine-digit code up and approve it with the
 * session, wait for the redirect. Returns the callback's parameters, the page and what the
 * approval screen was shown.
 */
async function approve(authUrl: URL, session: string): Promise<{ params: URLSearchParams; html: string; shown: { client: { id: string; name: string; verified: boolean }; resource: string } }> {
  const page = await fetch(authUrl, { redirect: 'manual' });
  const html = await page.text();
  const digits = /id="user-code">(\d{3})-(\d{3})-(\d{3})</.exec(html);
  const handle = /data-wait="([A-Za-z0-9_-]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !digits || !handle) throw new Error(`authorize page: ${page.status} ${html.slice(0, 300)}`);
  const code = digits.slice(1).join('');
  const shown = await call(app, 'GET', `/v1/approvals/${code}`, { token: session });
  if (shown.status !== 200) throw new Error(`lookup: ${shown.status} ${shown.text}`);
  const scopes = (authUrl.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
  const ok = await call(app, 'POST', `/v1/approvals/${code}/approve`, { token: session, body: { scopes } });
  if (ok.status >= 300) throw new Error(`approve: ${ok.status} ${ok.text}`);
  const wait = await call(app, 'POST', '/oauth/authorize/wait', { rawBody: `handle=${handle}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  // The callback's parameters: code, state and iss (RFC 9207, which the SDK checks).
  const params = new URL(wait.body.redirect).searchParams;
  if (!params.get('code')) throw new Error(`wait: ${wait.text}`);
  return { params, html, shown: shown.body };
}

/** Connects with the provider: the first attempt ends at the authorize page, the user approves, the second connects. */
async function connectWithOAuth(provider: TestProvider, session: string) {
  const url = new URL(`${app.url}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(new Client({ name: 'assistant', version: '1' }, { versionNegotiation: { mode: 'auto' } }).connect(first)).rejects.toThrow();
  expect(provider.authUrl?.searchParams.get('resource')).toBe(`${app.url}/mcp`);
  expect(provider.authUrl?.searchParams.get('code_challenge_method')).toBe('S256');
  const approval = await approve(provider.authUrl!, session);
  expect(approval.params.get('iss')).toBe(app.url);
  await first.finishAuth(approval.params);
  expect(provider.toks?.access_token).toMatch(/^cairn_oat_/);
  const client = new Client({ name: 'assistant', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return { client, approval };
}

describe('OAuth with the SDK client', () => {
  it('discovers, registers, authorizes with the nine-digit code, calls tools, refreshes; tokens stay at their door', async () => {
    const u = await registerUser(app);
    const provider = new TestProvider();
    const { client, approval } = await connectWithOAuth(provider, u.session);
    // Discovery found the MCP resource and Cairn as its authorization server; with no
    // clientMetadataUrl the SDK registered dynamically (a `cl_` id).
    expect(provider.discovery?.resourceMetadata?.resource).toBe(`${app.url}/mcp`);
    expect(provider.discovery?.authorizationServerMetadata?.issuer).toBe(app.url);
    expect(provider.info?.client_id).toMatch(/^cl_/);
    expect(approval.shown.client.name).toBe('Test Assistant');
    expect(approval.shown.resource).toBe(`${app.url}/mcp`);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['find_todos', 'add_todos', 'update_todos', 'search']));
    const added = await callTool(client, 'add_todos', { today: '2026-11-21', todos: [{ title: 'call the bank', when: 'today' }] });
    const id = added.structuredContent.todos[0].id as string;
    expect((await callTool(client, 'find_todos', { view: 'today', today: '2026-11-21' })).structuredContent.todos.map((t: { id: string }) => t.id)).toEqual([id]);
    expect((await callTool(client, 'update_todos', { todos: [{ id, action: 'complete' }] })).structuredContent.todos[0].status).toBe('completed');
    expect((await callTool(client, 'search', { q: 'bank', types: ['todo'] })).structuredContent.hits.map((h: { id: string }) => h.id)).toEqual([id]);

    // The access token lives an hour: past it the client refreshes and goes on.
    const before = provider.toks!.access_token;
    app.clock.advance(2 * 3_600_000);
    expect((await callTool(client, 'get_todo', { id })).structuredContent.status).toBe('completed');
    expect(provider.toks!.access_token).not.toBe(before);

    // Audience, both ways (spec §5.2 rule 3, DECISIONS §8): the live /mcp token is refused at /v1
    // and /trpc with the REST challenge; a live /v1 token (it works at /v1) is refused at /mcp
    // with the /mcp challenge.
    const mcpAccess = provider.toks!.access_token;
    expect((await rpc(app, 'tools/list', {}, { token: mcpAccess })).status).toBe(200);
    const atV1 = await call(app, 'GET', '/v1/todos', { token: mcpAccess });
    expect(atV1.status).toBe(401);
    expect(atV1.headers.get('www-authenticate')).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource"`);
    expect((await call(app, 'GET', '/trpc/todos.list?input=%7B%22json%22%3A%7B%7D%7D', { token: mcpAccess })).status).toBe(401);
    const restFlow = await oauthFlow(app, { session: u.session, pat: '', userId: u.userId, password: u.password, email: u.email });
    expect((await call(app, 'GET', '/v1/todos', { token: restFlow.access })).status).toBe(200);
    const refused = await rpc(app, 'tools/list', {}, { token: restFlow.access });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await client.close();
  });

  it('identifies the client by its Client ID Metadata Document (fetched over loopback HTTPS) instead of registering', async () => {
    const u = await registerUser(app);
    const provider = new TestProvider(docUrl());
    const { client, approval } = await connectWithOAuth(provider, u.session);
    // The SDK saw client_id_metadata_document_supported and used the URL as its client_id: no
    // registration. Cairn fetched the document through the outbound door (to the page server only).
    expect(provider.discovery?.authorizationServerMetadata?.client_id_metadata_document_supported).toBe(true);
    expect(provider.info?.client_id).toBe(docUrl());
    expect(provider.authUrl?.searchParams.get('client_id')).toBe(docUrl());
    expect(docs.hits).toContain('GET /assistant/client.json');
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a.address === '127.0.0.1' && a.port === docs.port)).toBe(true);
    // The approval screen names the app by the document URL's host; the page adds the document's
    // own name, as unverified.
    expect(approval.shown.client).toEqual({ id: docUrl(), name: `localhost:${docs.port}`, verified: false });
    expect(approval.html).toContain(`<strong id="client-host">localhost:${docs.port}</strong>`);
    expect(approval.html).toContain('Test Assistant (document)');

    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['find_todos', 'add_todos']));
    const added = await callTool(client, 'add_todos', { today: '2026-11-21', todos: [{ title: 'water the plants', when: 'today' }] });
    const id = added.structuredContent.todos[0].id as string;
    expect((await callTool(client, 'find_todos', { view: 'today', today: '2026-11-21' })).structuredContent.todos.map((t: { id: string }) => t.id)).toEqual([id]);

    // Past the access token's hour (and the document's cache) the client refreshes: Cairn reads
    // the document again, and the call goes on with a new token.
    const before = provider.toks!.access_token;
    const fetched = docs.hits.length;
    app.clock.advance(2 * 3_600_000);
    expect((await callTool(client, 'get_todo', { id })).structuredContent.title).toBe('water the plants');
    expect(provider.toks!.access_token).not.toBe(before);
    expect(docs.hits.length).toBe(fetched + 1);

    // The grant is listed under the host, for the MCP resource.
    const grants = await call(app, 'GET', '/v1/grants', { token: u.session });
    expect(grants.body.data).toEqual([expect.objectContaining({ client: { id: docUrl(), name: `localhost:${docs.port}`, verified: false }, resource: `${app.url}/mcp` })]);
    // Tokens of a document client stay at their door too.
    expect((await call(app, 'GET', '/v1/todos', { token: provider.toks!.access_token })).status).toBe(401);
    await client.close();
  });
});
