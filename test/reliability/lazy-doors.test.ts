// Issue 29 (peak RSS; docs/performance.md "Memory"): the CalDAV door, the MCP door (the MCP
// SDK), prom-client and the OpenAPI generator are not loaded by a server that has not been asked for them. A real
// server process records every module it resolves; REST and tRPC requests load none of the
// three; the first /dav and /mcp requests load their door and are answered as usual.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, startServerProcess, type ServerProcess } from '../helpers/process.js';

let dir: string;
let loads: string;
let server: ServerProcess;

const loaded = (needle: RegExp) => readFileSync(loads, 'utf8').split('\n').some((l) => needle.test(l));
const DAV = /\/dav\/handler\.(ts|js)$/;
const MCP = /@modelcontextprotocol\/|\/mcp\/door\.(ts|js)$/;
const PROM = /prom-client/;
// The OpenAPI document's generator and its module (server/app.ts builds the document on first request).
const OPENAPI = /trpc-to-openapi\/|\/rest\/openapi\.(ts|js)$/;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cairn-lazy-doors-'));
  loads = path.join(dir, 'loads.txt');
  writeFileSync(loads, '');
  server = await startServerProcess(path.join(dir, 'data'), {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${path.join(root, 'test', 'helpers', 'record-loads.mjs')}`.trim(),
    CAIRN_TEST_RECORD_LOADS: loads,
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('doors loaded when first asked', () => {
  it('REST and tRPC requests load neither door nor prom-client; the first /dav and /mcp requests load and answer', async () => {
    // The recorder works: the server's own modules are in the file.
    expect(loaded(/\/server\/handler\.(ts|js)$/)).toBe(true);
    const reg = await fetch(`${server.url}/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'lazy@example.test', password: 'lazy doors password 1' }) });
    expect(reg.status).toBe(201);
    const token = ((await reg.json()) as { token: string }).token;
    expect((await fetch(`${server.url}/v1/todos`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${server.url}/trpc/todos.list?input=%7B%22json%22%3A%7B%7D%7D`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(loaded(DAV)).toBe(false);
    expect(loaded(MCP)).toBe(false);
    expect(loaded(PROM)).toBe(false);
    expect(loaded(OPENAPI)).toBe(false);

    // Two requests racing the first load are both answered by the one door.
    const [a, b] = await Promise.all([1, 2].map(() => fetch(`${server.url}/.well-known/caldav`, { redirect: 'manual' })));
    expect([a!.status, b!.status]).toEqual([301, 301]);
    expect(loaded(DAV)).toBe(true);
    expect(loaded(MCP)).toBe(false);
    const meta = await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`);
    expect(meta.status).toBe(200);
    expect(((await meta.json()) as { resource: string }).resource).toMatch(/\/mcp$/);
    expect(loaded(MCP)).toBe(true);
    const unauth = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(unauth.status).toBe(401);
    expect(loaded(PROM)).toBe(false);
    expect(loaded(OPENAPI)).toBe(false);

    // The OpenAPI document and /docs: made on the first request for either, /docs' script first.
    const init = await fetch(`${server.url}/docs/swagger-ui-init.js`);
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"openapi": "3.1');
    expect(loaded(OPENAPI)).toBe(true);
    const doc = await fetch(`${server.url}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { paths: Record<string, unknown> }).paths['/v1/todos']).toBeDefined();
  }, 60_000);
});
