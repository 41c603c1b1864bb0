// Helpers of the MCP door's tests (issue 31): an `mcp` personal token, the SDK's own client over
// streamable HTTP, and raw JSON-RPC posts for what the client hides (statuses, challenges).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call } from '../helpers/http.js';

type Url = { url: string };

/** A personal access token with audience mcp and the given scopes. */
export async function mcpToken(app: Url, session: string, scopes: string[]): Promise<string> {
  const r = await call(app, 'POST', '/v1/keys', { token: session, body: { name: 'assistant', audience: 'mcp', scopes, expiresInDays: 30 } });
  if (r.status !== 201) throw new Error(`mcp key: ${r.status} ${r.text}`);
  return r.body.token as string;
}

/**
 * The SDK's Client, connected to /mcp with a bearer token. `auto` probes with server/discover and
 * speaks the current revision (2026-07-28); `legacy` (the SDK's default) opens with a 2025-11-25
 * initialize.
 */
export async function mcpClient(app: Url, token: string, mode: 'auto' | 'legacy' = 'auto'): Promise<Client> {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { authProvider: { token: async () => token } }));
  return client;
}

export type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** tools/call through the client; the result as the tests read it. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

let id = 0;

/** One JSON-RPC message posted as a 2025-11-25 client would (no session: the stateless fallback). */
export async function rpc(app: Url, method: string, params: Record<string, unknown> = {}, opts: { token?: string; headers?: Record<string, string>; httpMethod?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const httpMethod = opts.httpMethod ?? 'POST';
  const res = await fetch(`${app.url}/mcp`, { method: httpMethod, headers, ...(httpMethod === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) } : {}) });
  const text = await res.text();
  let body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    body = JSON.parse(text);
  } catch {
    // An SSE answer: the data line of its one event.
    const data = /^data: (.*)$/m.exec(text)?.[1];
    body = data ? JSON.parse(data) : text;
  }
  return { status: res.status, headers: res.headers, body, text };
}
