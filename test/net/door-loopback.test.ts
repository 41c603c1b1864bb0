// The outbound door's own behaviour against loopback servers only (CAIRN_UNSAFE_ALLOW_LOOPBACK's
// setting, allowLoopback): redirects only on request, what is never sent, the byte cap, the
// deadline. A connect watcher fails the file on any non-loopback address.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundFetch, OutboundError, type ConnectAttempt, type OutboundOptions } from '../../core/net/index.js';
import { html, pageServer, type PageServer } from '../helpers/tls.js';

const attempts: ConnectAttempt[] = [];
const seen: http.IncomingHttpHeaders[] = [];
let site: PageServer;
const base = (): OutboundOptions => ({ deadlineMs: 2_000, maxBytes: 1024, allowLoopback: true, onConnect: (a) => attempts.push(a) });

beforeAll(async () => {
  site = await pageServer((req, res) => {
    seen.push(req.headers);
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/redirect') res.writeHead(302, { location: '/page' }).end();
    else if (u.pathname === '/see-other') res.writeHead(303, { location: '/echo' }).end();
    else if (u.pathname === '/echo') html(res, `${req.method} ${req.headers['content-length'] ?? '-'}`, 200, 'text/plain');
    else if (u.pathname === '/big') html(res, 'z'.repeat(4096), 200, 'text/plain');
    else if (u.pathname === '/hang') return;
    else html(res, 'page body', 200, 'text/plain');
  });
});
afterAll(async () => {
  await site.close();
  expect(attempts.filter((a) => a.address !== '127.0.0.1' && a.address !== '::1')).toEqual([]);
});

const reasonOf = (p: Promise<unknown>) => p.then(() => 'resolved', (e: unknown) => (e instanceof OutboundError ? e.reason : `other: ${String(e)}`));

describe('the outbound door against loopback', () => {
  it('reads a body into a buffer', async () => {
    const r = await outboundFetch(`http://127.0.0.1:${site.port}/page`, base());
    expect(r).toMatchObject({ status: 200, complete: true, redirects: 0 });
    expect(r.body.toString()).toBe('page body');
  });

  it('answers a 3xx as it is unless the caller asks for redirects', async () => {
    const r = await outboundFetch(`http://127.0.0.1:${site.port}/redirect`, base());
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('/page');
    const f = await outboundFetch(`http://127.0.0.1:${site.port}/redirect`, { ...base(), redirects: 1 });
    expect(f).toMatchObject({ status: 200, redirects: 1 });
    expect(f.url.pathname).toBe('/page');
  });

  it('never asks for more than 5 redirects whatever the caller says', async () => {
    // A redirect loop is cut after 5 redirects: 6 requests, then too_many_redirects.
    const loop = await pageServer((_req, res) => res.writeHead(302, { location: '/again' }).end());
    try {
      expect(await reasonOf(outboundFetch(`http://127.0.0.1:${loop.port}/`, { ...base(), redirects: 50 }))).toBe('too_many_redirects');
      expect(loop.hits).toHaveLength(6);
    } finally {
      await loop.close();
    }
  });

  it('a 303 after a POST continues as a GET without the body', async () => {
    const r = await outboundFetch(`http://127.0.0.1:${site.port}/see-other`, { ...base(), method: 'POST', body: '{"a":1}', redirects: 1 });
    expect(r.body.toString()).toBe('GET -');
  });

  it('never sends Authorization, Cookie or Proxy-Authorization, and asks for no compression', async () => {
    seen.length = 0;
    await outboundFetch(`http://127.0.0.1:${site.port}/page`, { ...base(), headers: { Authorization: 'Bearer x', cookie: 'a=b', 'Proxy-Authorization': 'Basic y', 'x-ok': '1' } });
    expect(seen[0]).toMatchObject({ 'x-ok': '1', 'accept-encoding': 'identity' });
    expect(seen[0]!.authorization).toBeUndefined();
    expect(seen[0]!.cookie).toBeUndefined();
    expect(seen[0]!['proxy-authorization']).toBeUndefined();
  });

  it('fails too_large past the byte cap, and stops early (not an error) when the consumer says so', async () => {
    expect(await reasonOf(outboundFetch(`http://127.0.0.1:${site.port}/big`, base()))).toBe('too_large');
    let got = 0;
    const r = await outboundFetch(`http://127.0.0.1:${site.port}/big`, { ...base(), onChunk: (c) => ((got += c.length), true) });
    expect(r.complete).toBe(false);
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThanOrEqual(1024);
  });

  it('a throwing consumer rejects the call instead of crashing the process', async () => {
    const err = await outboundFetch(`http://127.0.0.1:${site.port}/page`, { ...base(), onChunk: () => { throw new Error('consumer broke'); } }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('consumer broke');
  });

  it('fails timeout at the deadline', async () => {
    const started = Date.now();
    expect(await reasonOf(outboundFetch(`http://127.0.0.1:${site.port}/hang`, { ...base(), deadlineMs: 300 }))).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses loopback when loopback is not allowed, before connecting', async () => {
    const before = site.connections();
    expect(await reasonOf(outboundFetch(`http://127.0.0.1:${site.port}/page`, { ...base(), allowLoopback: false }))).toBe('refused_address');
    expect(await reasonOf(outboundFetch(`http://localhost:${site.port}/page`, { ...base(), allowLoopback: false }))).toBe('refused_address');
    expect(site.connections()).toBe(before);
  });
});
