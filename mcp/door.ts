// The MCP door (issue 31, docs/mcp.md): `POST /mcp` speaks the Model Context Protocol over
// streamable HTTP through the official TypeScript SDK (v2, `@modelcontextprotocol/server`
// `createMcpHandler`: the 2026-07-28 revision statelessly, with `server/discover` and its header
// checks, and 2025-era clients through its stateless fallback), and
// `/.well-known/oauth-protected-resource/mcp` describes the resource (RFC 9728).
//
// What the door does before the SDK sees a request, in order:
// 1. `Origin` (MCP transport security): absent is allowed (not a browser); PUBLIC_URL's origin or
//    one of CAIRN_MCP_ALLOWED_ORIGINS is allowed, exactly (scheme, host and port); any other is
//    403. The SDK's own check compares host names only, ports aside, so it is not used.
// 2. Only POST (the revision has no GET stream and no sessions): anything else is 405, Allow: POST.
// 3. The per-credential bucket (spec §8.1, keyed by the presented token before any lookup).
// 4. The body, at most 1 MiB (413), read once.
// 5. The credential (routers/auth/credentials.ts): a token for this resource and this door only
//    (DECISIONS §8: an OAuth token minted for PUBLIC_URL/mcp, or a personal token created with
//    audience mcp; a session or a REST token is refused). A refusal is 401 with the MCP challenge.
// 6. A `tools/call` of a tool this credential may not use: 403 `insufficient_scope` naming every
//    scope the call needs (spec §5.3 via the expanded scope set; the SDK's `requireScopes`
//    compares scope strings exactly, so it is not used). `tools/list` shows only usable tools, but
//    a hidden tool is recognised here, never "tool not found".
// The SDK is handed a web `Request` built from the bytes read, with the body already parsed; its
// answer is copied onto the node response with the RateLimit-* headers of the buckets counted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, McpServer, type AuthInfo, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/principal.js';
import { authenticate, parseBearerHeader } from '../routers/auth/credentials.js';
import { limitCredential, RateTracker } from '../routers/middleware/rate-limit.js';
import { finishProblem, toProblem } from '../routers/middleware/problems.js';
import { runAfterAnswer, type HttpOut } from '../routers/trpc.js';
import { AppError } from '../core/errors.js';
import { LIMITS } from '../core/config.js';
import { SCOPES, type Scope } from '../core/scopes.js';
import { invalidArgs, ok, toolError } from './results.js';
import { MCP_SCOPES, scopesForCall, toolUsable, TOOLS, TOOLS_BY_NAME, type ToolDef, type ToolEnv } from './tools.js';

import { MCP_METADATA_PATH, MCP_PATH } from './paths.js';

export { MCP_METADATA_PATH, MCP_PATH, isMcpPath } from './paths.js';

const VERSION = '0.1.0';
const INSTRUCTIONS =
  "Cairn is the user's task manager (Things-style: Today, Upcoming, Anytime, Someday, Logbook; areas, projects, headings; an inbox; notes). " +
  "Always pass `today` as the user's local date (YYYY-MM-DD) to tools that take it. Use find_projects for ids; names work where a tool says so.";

/** The resource identifier (RFC 8707) of the MCP server: PUBLIC_URL/mcp. */
export const mcpResource = (deps: Deps) => `${deps.config.publicUrl}${MCP_PATH}`;
const metadataUrl = (deps: Deps) => `${deps.config.publicUrl}${MCP_METADATA_PATH}`;

/** RFC 9728 metadata of the MCP resource. */
export function mcpResourceMetadata(deps: Deps) {
  return {
    resource: mcpResource(deps),
    authorization_servers: [deps.config.publicUrl],
    bearer_methods_supported: ['header'],
    // What the tools use, plus the umbrellas that imply them (spec §5.3); no offline_access.
    scopes_supported: [...MCP_SCOPES, ...SCOPES.filter((s) => s === 'tasks:read' || s === 'tasks:write')],
    resource_name: 'Cairn (MCP)',
    resource_documentation: `${deps.config.publicUrl}/docs`,
  };
}

/** One request's state, found by the AuthInfo object the SDK hands the server factory. */
type RequestState = { env: ToolEnv };
const STATES = new WeakMap<AuthInfo, RequestState>();

/** A zod schema whose validation is left to the tool (so a bad argument is a tool error with a pointer); its JSON Schema converted once. */
function advertised(schema: z.ZodObject, validate: boolean): StandardSchemaWithJSON {
  const std = schema['~standard'] as unknown as StandardSchemaWithJSON['~standard'];
  const cache: Record<string, Record<string, unknown>> = {};
  const once = (io: 'input' | 'output') => (opts: { target: string }) => (cache[`${io}:${opts.target}`] ??= std.jsonSchema[io](opts as never));
  return {
    '~standard': {
      ...std,
      validate: validate ? std.validate : (value: unknown) => ({ value }),
      jsonSchema: { input: once('input'), output: once('output') },
    },
  } as StandardSchemaWithJSON;
}

const SCHEMAS = new Map(TOOLS.map((t) => [t.name, { input: advertised(t.input, false), output: advertised(t.output, true) }]));

function buildServer(st: RequestState): McpServer {
  // `tools` is declared even when this credential may use none, so tools/list answers (empty).
  const server = new McpServer({ name: 'cairn', version: VERSION }, { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } });
  const { env } = st;
  // Fixed order (the table's); only what this credential may use.
  for (const t of TOOLS) {
    if (!toolUsable(t, env.principal.scopes)) continue;
    const schemas = SCHEMAS.get(t.name)!;
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: schemas.input, outputSchema: schemas.output, annotations: { title: t.title, ...t.annotations } },
      async (args: unknown) => {
        const parsed = t.input.safeParse(args ?? {});
        if (!parsed.success) return toolError(env.deps, env.requestId, invalidArgs(parsed.error.issues));
        try {
          return ok(await t.run(env, parsed.data as never));
        } catch (e) {
          return toolError(env.deps, env.requestId, e);
        }
      },
    );
  }
  return server;
}

// ---- HTTP -------------------------------------------------------------------------------------

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, type = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Cache-Control': 'no-store', ...headers, 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function sendProblem(deps: Deps, res: ServerResponse, requestId: string, e: unknown, extra: Record<string, string> = {}): void {
  const { problem, headers, internalCause } = toProblem(e);
  if (internalCause !== undefined) deps.log.error({ err: internalCause, requestId }, 'mcp request failed');
  send(res, problem.status, finishProblem(problem, deps.config.publicUrl, requestId, MCP_PATH), { ...headers, ...extra }, 'application/problem+json');
}

const quoted = (s: string) => s.replace(/["\\]/g, '');

/** The 401 challenge of the MCP resource (MCP authorization spec, RFC 9728 §5.1, RFC 6750 §3). */
function challenge401(deps: Deps, e: AppError, tokenPresented: boolean): string {
  const base = `Bearer resource_metadata="${metadataUrl(deps)}", scope="${MCP_SCOPES.join(' ')}"`;
  return tokenPresented ? `${base}, error="invalid_token", error_description="${quoted(e.detail)}"` : base;
}

function challenge403(deps: Deps, scopes: readonly string[], detail: string): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}", resource_metadata="${metadataUrl(deps)}", error_description="${quoted(detail)}"`;
}

/** Origin as `scheme://host[:port]` (lower-cased, default port dropped), or null when it is none. */
function originOf(value: string): string | null {
  try {
    const u = new URL(value);
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}

function originAllowed(deps: Deps, origin: string | undefined): boolean {
  if (origin === undefined || origin === '') return true;
  const o = originOf(origin);
  if (!o) return false;
  const allowed = [originOf(deps.config.publicUrl), ...(deps.config.mcpAllowedOrigins ?? []).map(originOf)];
  return allowed.includes(o);
}

const jsonRpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

/** The body, at most `max` bytes (null past it). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The tools a JSON-RPC message (or a legacy batch) calls, with their arguments. */
function toolCalls(body: unknown): { tool: ToolDef; args: Record<string, unknown> }[] {
  const msgs = Array.isArray(body) ? body : [body];
  const out: { tool: ToolDef; args: Record<string, unknown> }[] = [];
  for (const m of msgs) {
    if (!m || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') continue;
    const params = (m as { params?: unknown }).params as { name?: unknown; arguments?: unknown } | undefined;
    const tool = typeof params?.name === 'string' ? TOOLS_BY_NAME.get(params.name) : undefined;
    if (!tool) continue;
    const args = params?.arguments && typeof params.arguments === 'object' && !Array.isArray(params.arguments) ? (params.arguments as Record<string, unknown>) : {};
    out.push({ tool, args });
  }
  return out;
}

/** Every scope the calls need that the credential lacks, as the whole set each call needs. */
function refusedScopes(p: Principal, calls: { tool: ToolDef; args: Record<string, unknown> }[]): string[] | null {
  const needed = new Set<string>();
  let refused = false;
  for (const { tool, args } of calls) {
    let scopes = scopesForCall(tool, args);
    // search with no kinds asked: any one read scope of its kinds will do.
    if (tool.name === 'search' && scopes.length === 0 && !toolUsable(tool, p.scopes)) scopes = ['todos:read'];
    if (scopes.some((s) => !p.scopes.has(s as Scope)) || !toolUsable(tool, p.scopes)) {
      refused = true;
      for (const s of scopes) needed.add(s);
    }
  }
  return refused ? [...needed] : null;
}

function toWebRequest(deps: Deps, req: IncomingMessage, body: Buffer): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === 'host' || k === 'content-length' || k === 'connection' || k === 'transfer-encoding') continue;
    headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return new Request(mcpResource(deps), { method: 'POST', headers, body });
}

async function writeWebResponse(res: ServerResponse, answer: Response, extra: Record<string, string>): Promise<void> {
  const headers: Record<string, string> = { ...extra };
  answer.headers.forEach((v, k) => {
    headers[k] = v;
  });
  headers['cache-control'] ??= 'no-store';
  res.writeHead(answer.status, headers);
  if (answer.body) {
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  }
  res.end();
}

/** `rate`: the request's tracker (the edge bucket already counted), so RateLimit-* name the most constrained bucket. */
export type McpDoor = (req: IncomingMessage, res: ServerResponse, opts: { requestId: string; ip: string; rate?: RateTracker | undefined }) => void;

/** `server/handler.ts` routes `/mcp` and its metadata path here. */
export function createMcpDoor(deps: Deps): McpDoor {
  const handler = createMcpHandler(({ authInfo }) => buildServer(STATES.get(authInfo!)!), {
    legacy: 'stateless',
    responseMode: 'auto',
    keepAliveMs: 0,
    maxRequestBodySize: LIMITS.jsonBodyBytes,
    onerror: (err) => deps.log.debug({ err: err.message }, 'mcp refused a request'),
  });

  async function serve(req: IncomingMessage, res: ServerResponse, requestId: string, ip: string, rate: RateTracker): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path === MCP_METADATA_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, jsonRpcError('Method not allowed.'), { Allow: 'GET, HEAD' });
      res.setHeader('Access-Control-Allow-Origin', '*');
      return send(res, 200, mcpResourceMetadata(deps), { 'Cache-Control': 'public, max-age=3600' });
    }
    if (!originAllowed(deps, req.headers.origin)) return send(res, 403, jsonRpcError('Forbidden: this Origin may not call the MCP server.'));
    if (req.method !== 'POST') return send(res, 405, jsonRpcError('Method not allowed: the MCP server takes POST only (no GET stream, no sessions).'), { Allow: 'POST' });

    const authorization = req.headers.authorization;
    const ctx = { deps, authorization, ip, rate } as Parameters<typeof limitCredential>[0];
    try {
      limitCredential(ctx);
    } catch (e) {
      return sendProblem(deps, res, requestId, e, rate.headers());
    }
    const body = await readBody(req, LIMITS.jsonBodyBytes);
    if (body === null) return sendProblem(deps, res, requestId, new AppError('payload_too_large', 'The request body is larger than 1 MiB.'), rate.headers());

    let principal: Principal;
    try {
      principal = await authenticate(deps, authorization, ctx.bearer !== undefined ? ctx.bearer : parseBearerHeader(authorization), mcpResource(deps), 'mcp');
    } catch (e) {
      if (e instanceof AppError && e.status === 401) {
        return send(res, 401, { error: 'invalid_token', error_description: e.detail }, { ...rate.headers(), 'WWW-Authenticate': challenge401(deps, e, !!authorization) });
      }
      return sendProblem(deps, res, requestId, e, rate.headers());
    }

    let parsed: unknown;
    let parsedOk = false;
    try {
      parsed = JSON.parse(body.toString('utf8'));
      parsedOk = true;
    } catch {
      // The SDK answers a body that is not JSON (a JSON-RPC parse error).
    }
    if (parsedOk) {
      const calls = toolCalls(parsed);
      const refused = calls.length ? refusedScopes(principal, calls) : null;
      if (refused) {
        const detail = `This call needs the scope${refused.length > 1 ? 's' : ''} ${refused.join(' ')}.`;
        return send(res, 403, { error: 'insufficient_scope', error_description: detail }, { ...rate.headers(), 'WWW-Authenticate': challenge403(deps, refused, detail) });
      }
    }

    const http: HttpOut = { headers: {} };
    const env: ToolEnv = { deps, principal, requestId, http, rate, subject: ctx.credentialSubject ?? ctx.bearer?.subject };
    const authInfo: AuthInfo = {
      // The SDK passes this through to handlers only; the secret itself is not needed there.
      token: 'redacted',
      clientId: principal.grantId ?? principal.credentialId,
      scopes: [...principal.scopes],
      expiresAt: Math.floor(principal.expiresAt / 1000),
      resource: new URL(mcpResource(deps)),
      resourceMetadataUrl: metadataUrl(deps),
    };
    STATES.set(authInfo, { env });
    const answer = await handler.fetch(toWebRequest(deps, req, body), { authInfo, ...(parsedOk ? { parsedBody: parsed } : {}) });
    // A url capture's title fetch starts once the answer has gone out (routers/trpc.ts afterAnswer).
    runAfterAnswer(http, res);
    await writeWebResponse(res, answer, rate.headers());
  }

  return (req, res, { requestId, ip, rate }) => {
    serve(req, res, requestId, ip, rate ?? new RateTracker()).catch((e: unknown) => {
      if (res.headersSent) {
        deps.log.error({ err: e, requestId }, 'mcp answer failed');
        res.destroy();
        return;
      }
      sendProblem(deps, res, requestId, e);
    });
  };
}
