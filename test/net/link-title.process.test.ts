// Spec §4.16 end to end: the real server process (no test hooks: the system resolver, Node's own
// trust store) fetches a title over real HTTPS from a loopback server whose certificate it trusts
// only through NODE_EXTRA_CA_CERTS, as DECISIONS §1 says outbound HTTPS does. Loopback only, with
// CAIRN_UNSAFE_ALLOW_LOOPBACK=1; without it the same page is refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call, registerUser } from '../helpers/http.js';
import { html, pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';

let certPath: string;
let trusted: PageServer;
let untrusted: PageServer;
const servers: ServerProcess[] = [];
const dirs: string[] = [];

async function server(env: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-lt-'));
  dirs.push(dir);
  const s = await startServerProcess(dir, env);
  servers.push(s);
  return s;
}

beforeAll(async () => {
  const cert = selfSignedCert();
  trusted = await pageServer((_req, res) => html(res, '<head><meta property="og:title" content="Real &amp; trusted"><title>x</title></head>'), cert);
  untrusted = await pageServer((_req, res) => html(res, '<title>Untrusted</title>'), selfSignedCert());
  certPath = cert.certPath;
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.stop();
  await trusted?.close();
  await untrusted?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('link titles from the real server process', () => {
  it('fetches over HTTPS trusting NODE_EXTRA_CA_CERTS (an http:// link included), refuses another certificate, logs no URL', async () => {
    const s = await server({ NODE_EXTRA_CA_CERTS: certPath, CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
    const { session } = await registerUser(s);
    const ask = async (url: string) => {
      const r = await call(s, 'POST', '/v1/link-title', { token: session, body: { url } });
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    expect(await ask(`https://127.0.0.1:${trusted.port}/real-page`)).toEqual({ title: 'Real & trusted', host: `127.0.0.1:${trusted.port}` });
    expect(await ask(`http://localhost:${trusted.port}/via-http`)).toEqual({ title: 'Real & trusted', host: `localhost:${trusted.port}` });
    expect(await ask(`https://127.0.0.1:${untrusted.port}/`)).toEqual({ title: null, host: `127.0.0.1:${untrusted.port}` });
    expect(trusted.hits).toEqual(['GET /real-page', 'GET /via-http']);
    expect(untrusted.connections()).toBe(1);
    expect(s.output()).toContain('"route":"linkTitle.fetch"');
    for (const secret of ['real-page', 'via-http', String(trusted.port), String(untrusted.port)]) expect(s.output().includes(secret), secret).toBe(false);
  });

  it('without CAIRN_UNSAFE_ALLOW_LOOPBACK the same loopback page is refused before any connection', async () => {
    const s = await server({ NODE_EXTRA_CA_CERTS: certPath });
    const { session } = await registerUser(s);
    const before = trusted.connections();
    for (const url of [`https://127.0.0.1:${trusted.port}/`, `https://localhost:${trusted.port}/`]) {
      const r = await call(s, 'POST', '/v1/link-title', { token: session, body: { url } });
      expect(r.status).toBe(200);
      expect(r.body.title).toBeNull();
    }
    expect(trusted.connections()).toBe(before);
  });
});
