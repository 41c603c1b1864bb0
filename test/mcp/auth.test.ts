// Issue 31 item 1-2 (docs/mcp.md "Connecting", "Scopes"): the MCP door's HTTP rules. The resource is
// PUBLIC_URL/mcp (RFC 9728 metadata at its well-known path); only mcp credentials open it and they
// open nothing else (DECISIONS §8); a missing scope is a 403 step-up challenge naming every scope
// the call needs (spec §5.3 implications honoured); Origin is checked exactly; only POST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { TOOLS } from '../../mcp/tools.js';
import { callTool, mcpClient, mcpToken, rpc } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const meta = () => `${app.url}/.well-known/oauth-protected-resource/mcp`;

describe('the MCP resource and its credentials', () => {
  it('describes itself at /.well-known/oauth-protected-resource/mcp (RFC 9728)', async () => {
    const r = await call(app, 'GET', '/.well-known/oauth-protected-resource/mcp');
    expect(r.status).toBe(200);
    expect(r.body.resource).toBe(`${app.url}/mcp`);
    expect(r.body.authorization_servers).toEqual([app.url]);
    expect(r.body.scopes_supported).toEqual(expect.arrayContaining(['todos:read', 'todos:write', 'containers:read', 'notes:read', 'inbox:write', 'tasks:read', 'tasks:write']));
    expect(r.body.scopes_supported).not.toContain('offline_access');
    expect(r.body.scopes_supported).not.toContain('sessions:write');
  });

  it('answers 401 with the /mcp challenge without a credential, and with error="invalid_token" for a bad one', async () => {
    const none = await rpc(app, 'tools/list');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${meta()}", scope="todos:read todos:write containers:read containers:write notes:read notes:write inbox:read inbox:write filters:read"`);
    const bad = await rpc(app, 'tools/list', {}, { token: 'cairn_pat_' + 'A'.repeat(43) });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer resource_metadata="${meta().replace(/[.?]/g, '\\$&')}", scope="[^"]+", error="invalid_token"`));
    expect(bad.body.error).toBe('invalid_token');
  });

  it('refuses sessions, rest tokens and dav tokens at /mcp (401 with the /mcp challenge); an mcp token works', async () => {
    const u = await registerUser(app);
    const rest = (await createPat(app, u.session, ['todos:read', 'containers:read'])).token;
    const dav = (await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'phone', audience: 'dav', expiresInDays: 30 } })).body.token as string;
    const mcp = await mcpToken(app, u.session, ['todos:read', 'containers:read']);
    for (const token of [u.session, rest, dav]) {
      const r = await rpc(app, 'tools/list', {}, { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain(`resource_metadata="${meta()}"`);
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const ok = await rpc(app, 'tools/list', {}, { token: mcp });
    expect(ok.status).toBe(200);
    expect(ok.body.result.tools.map((t: { name: string }) => t.name)).toContain('find_todos');
  });

  it('refuses an mcp token at /v1 and /trpc', async () => {
    const u = await registerUser(app);
    const mcp = await mcpToken(app, u.session, ['todos:read']);
    expect((await call(app, 'GET', '/v1/todos', { token: mcp })).status).toBe(401);
    expect((await call(app, 'GET', '/trpc/todos.list?input=%7B%22json%22%3A%7B%7D%7D', { token: mcp })).status).toBe(401);
  });

  it('answers GET and DELETE with 405 and Allow: POST', async () => {
    const u = await registerUser(app);
    const mcp = await mcpToken(app, u.session, ['todos:read']);
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await rpc(app, '', {}, { token: mcp, httpMethod: method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it('serves a 2025-11-25 client statelessly: initialize, then tools/list with no session', async () => {
    const u = await registerUser(app);
    const mcp = await mcpToken(app, u.session, ['todos:read', 'containers:read']);
    const init = await rpc(app, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } }, { token: mcp });
    expect(init.status).toBe(200);
    expect(init.body.result.protocolVersion).toBe('2025-11-25');
    expect(init.body.result.serverInfo.name).toBe('cairn');
    expect(init.headers.get('mcp-session-id')).toBeNull();
    const list = await rpc(app, 'tools/list', {}, { token: mcp });
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['overview', 'find_todos', 'get_todo', 'find_projects', 'search']);
  });
});

describe('Origin', () => {
  it('allows no Origin and PUBLIC_URL\'s origin; refuses any other with 403 (another port included)', async () => {
    const u = await registerUser(app);
    const mcp = await mcpToken(app, u.session, ['todos:read']);
    expect((await rpc(app, 'tools/list', {}, { token: mcp })).status).toBe(200);
    expect((await rpc(app, 'tools/list', {}, { token: mcp, headers: { origin: app.url } })).status).toBe(200);
    const port = Number(new URL(app.url).port);
    for (const origin of ['https://evil.example', `http://127.0.0.1:${port + 1}`, 'null', 'not a url']) {
      const r = await rpc(app, 'tools/list', {}, { token: mcp, headers: { origin } });
      expect(r.status, origin).toBe(403);
      expect(r.body.error.code).toBe(-32000);
    }
    // Refused before the credential: no token needed to be refused.
    expect((await rpc(app, 'tools/list', {}, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
  });

  it('allows the origins of CAIRN_MCP_ALLOWED_ORIGINS', async () => {
    const other = await startApp({ CAIRN_MCP_ALLOWED_ORIGINS: 'https://assistant.example, http://localhost:6274' });
    try {
      const u = await registerUser(other);
      const mcp = await mcpToken(other, u.session, ['todos:read']);
      expect((await rpc(other, 'tools/list', {}, { token: mcp, headers: { origin: 'https://assistant.example' } })).status).toBe(200);
      expect((await rpc(other, 'tools/list', {}, { token: mcp, headers: { origin: 'http://localhost:6274' } })).status).toBe(200);
      expect((await rpc(other, 'tools/list', {}, { token: mcp, headers: { origin: 'https://assistant.example:8443' } })).status).toBe(403);
    } finally {
      await other.close();
    }
  });
});

describe('scopes (spec §5.3)', () => {
  it('lists each tool to a token holding exactly its scopes, in the fixed order', async () => {
    for (const t of TOOLS) {
      const u = await registerUser(app);
      const scopes = t.scopes.length ? [...t.scopes] : ['notes:read'];
      const client = await mcpClient(app, await mcpToken(app, u.session, scopes));
      const names = (await client.listTools()).tools.map((x) => x.name);
      expect(names, t.name).toContain(t.name);
      expect(names).toEqual(TOOLS.map((x) => x.name).filter((n) => names.includes(n)));
      await client.close();
    }
  });

  it('honours implications and umbrellas: tasks:read lists every read tool, tasks:write every tool', async () => {
    const u = await registerUser(app);
    const read = await mcpClient(app, await mcpToken(app, u.session, ['tasks:read']));
    const listed = (await read.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => t.name));
    const write = await mcpClient(app, await mcpToken(app, u.session, ['tasks:write']));
    expect((await write.listTools()).tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    // A write scope implies its read scope: todos:write + containers:write read what find_todos reads.
    const implied = await mcpClient(app, await mcpToken(app, u.session, ['todos:write', 'containers:write']));
    expect((await implied.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['find_todos', 'get_todo', 'add_todos', 'find_projects', 'add_project']));
    await Promise.all([read.close(), write.close(), implied.close()]);
  });

  it('lists with annotations stated explicitly, an outputSchema and described inputs', async () => {
    const u = await registerUser(app);
    const client = await mcpClient(app, await mcpToken(app, u.session, ['tasks:write']));
    for (const t of (await client.listTools()).tools) {
      expect(Object.keys(t.annotations ?? {}), t.name).toEqual(expect.arrayContaining(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']));
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.description, t.name).toBeTruthy();
    }
    const find = (await client.listTools()).tools.find((t) => t.name === 'find_todos')!;
    expect((find.inputSchema.properties as Record<string, { description?: string }>).today!.description).toMatch(/local date/);
    await client.close();
  });

  it('a call of a tool the token cannot use is 403 insufficient_scope naming every scope the call needs (hidden tools too)', async () => {
    const u = await registerUser(app);
    const weak = await mcpToken(app, u.session, ['settings:read']);
    const weakClient = await mcpClient(app, weak);
    expect((await weakClient.listTools()).tools).toEqual([]);
    await weakClient.close();
    for (const t of TOOLS) {
      const r = await rpc(app, 'tools/call', { name: t.name, arguments: {} }, { token: weak });
      expect(r.status, t.name).toBe(403);
      const needed = t.scopes.length ? t.scopes.join(' ') : 'todos:read';
      expect(r.headers.get('www-authenticate'), t.name).toBe(
        `Bearer error="insufficient_scope", scope="${needed}", resource_metadata="${meta()}", error_description="This call needs the scope${needed.includes(' ') ? 's' : ''} ${needed}."`,
      );
      expect(r.body.error).toBe('insufficient_scope');
    }
    // An unknown tool is the SDK's answer, not a challenge.
    const unknown = await rpc(app, 'tools/call', { name: 'no_such_tool', arguments: {} }, { token: weak });
    expect(unknown.status).toBe(200);
  });

  it('recognises what one call needs beyond the tool: a project by name needs containers:read; by id it does not', async () => {
    const u = await registerUser(app);
    const project = await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Errands' } });
    const token = await mcpToken(app, u.session, ['todos:write']);
    const byName = await rpc(app, 'tools/call', { name: 'add_todos', arguments: { todos: [{ title: 'call the bank', project: 'Errands' }] } }, { token });
    expect(byName.status).toBe(403);
    expect(byName.headers.get('www-authenticate')).toContain('scope="todos:write containers:read"');
    const client = await mcpClient(app, token);
    const byId = await callTool(client, 'add_todos', { todos: [{ title: 'call the bank', project: project.body.id }] });
    expect(byId.isError).toBeFalsy();
    expect(byId.structuredContent.todos[0].projectId).toBe(project.body.id);
    // search: kinds asked for need their read scopes.
    const notesOnly = await mcpToken(app, u.session, ['notes:read']);
    const s = await rpc(app, 'tools/call', { name: 'search', arguments: { q: 'bank', types: ['todo', 'note'] } }, { token: notesOnly });
    expect(s.status).toBe(403);
    expect(s.headers.get('www-authenticate')).toContain('scope="todos:read notes:read"');
    await client.close();
  });
});

describe('the revision 2026-07-28 header checks (the SDK handler)', () => {
  it('refuses a request whose Mcp-Method header disagrees with its body', async () => {
    const u = await registerUser(app);
    const token = await mcpToken(app, u.session, ['todos:read', 'containers:read']);
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', ...headers }, body: JSON.stringify(body) });
    const good = await post({ 'mcp-method': 'tools/list' });
    expect(good.status).toBe(200);
    expect(((await good.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    const bad = await post({ 'mcp-method': 'tools/call' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32020);
  });
});
