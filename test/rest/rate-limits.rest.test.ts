// Spec §8.1 (issue 3): fixed-window buckets per credential (all requests, writes), the per-IP
// edge token bucket, route buckets, RateLimit-* headers for the most constrained bucket, 429
// rate_limited with Retry-After, CAIRN_RATE_LIMIT_FACTOR and CAIRN_TRUST_PROXY. The apps here
// run at factor 1 (the spec's numbers) and move the manual clock; nothing sleeps.
import { afterEach, describe, expect, it } from 'vitest';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { restartApp, stopKeepingData } from '../helpers/restart.js';
import { RATE_BUCKETS } from '../../core/config.js';
import { authedProcedure, createCallerFactory, createContextInner, router } from '../../routers/trpc.js';
import { edgeLimit, routeLimit } from '../../rest/rate-limit.js';
import { limiterFor } from '../../routers/middleware/rate-limit.js';
import { sendProblem } from '../../rest/send.js';
import { initRequestState } from '../../rest/state.js';
import { AppError } from '../../core/errors.js';

const WINDOW = 5 * 60_000;
const apps: TestApp[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

async function app1(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1', ...env });
  apps.push(a);
  return a;
}

/** One request after 50 ms: the edge bucket (20/s) regains exactly the token it spends. */
async function paced(app: TestApp, method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<Res> {
  app.clock.advance(50);
  return call(app, method, path, opts);
}

function rateHeaders(r: Res) {
  return {
    limit: Number(r.headers.get('ratelimit-limit')),
    remaining: Number(r.headers.get('ratelimit-remaining')),
    reset: Number(r.headers.get('ratelimit-reset')),
  };
}

/** Seconds left in the current 5-minute window (windows are aligned to the epoch). */
function windowLeft(app: TestApp): number {
  const now = app.clock();
  return Math.ceil((Math.floor(now / WINDOW) * WINDOW + WINDOW - now) / 1000);
}

async function userWithPat(app: TestApp, scopes = ['tags:write']) {
  const u = await registerUser(app);
  const pat = await createPat(app, u.session, scopes);
  return { ...u, pat: pat.token };
}

describe('the bucket table (spec §8.1)', () => {
  it('holds exactly the spec numbers', () => {
    expect(RATE_BUCKETS).toMatchObject({
      credential: { per: 'credential', limit: 600, windowMs: 300_000 },
      credentialWrites: { per: 'credential', limit: 120, windowMs: 300_000 },
      oauthToken: { per: 'ip', limit: 60, windowMs: 60_000 },
      oauthRegister: { per: 'ip', limit: 10, windowMs: 3_600_000 },
      approvalLookupUser: { per: 'user', limit: 10, windowMs: 60_000 },
      approvalLookupIp: { per: 'ip', limit: 30, windowMs: 60_000 },
      keyCreate: { per: 'user', limit: 10, windowMs: 86_400_000 },
      webhookCreate: { per: 'user', limit: 20, windowMs: 3_600_000 },
      edge: { per: 'ip', ratePerSecond: 20, burst: 100 },
    });
  });
});

describe('per-credential buckets (spec §8.1)', () => {
  it('the 121st write in a window is refused with headers and Retry-After; the next window frees it', async () => {
    const app = await app1();
    const { pat, session } = await userWithPat(app);
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW); // a fresh window
    for (let i = 1; i <= 120; i++) {
      const r = await paced(app, 'POST', '/v1/tags', { token: pat, body: { name: `t${i}` } });
      expect(r.status, `write ${i}`).toBe(201);
      if (i === 110) expect(rateHeaders(r)).toEqual({ limit: 120, remaining: 10, reset: windowLeft(app) });
    }
    const refused = await paced(app, 'POST', '/v1/tags', { token: pat, body: { name: 't121' } });
    const p = expectProblem(refused, 429, 'rate_limited');
    expect(p.detail).toMatch(/credentialWrites/);
    expect(refused.headers.get('retry-after')).toBe(String(windowLeft(app)));
    expect(rateHeaders(refused)).toEqual({ limit: 120, remaining: 0, reset: windowLeft(app) });
    // Nothing was written.
    const names = (await call(app, 'GET', '/v1/tags?limit=200', { token: session })).body.data.map((t: { name: string }) => t.name);
    expect(names).not.toContain('t121');
    // Reads go on: they count in the all-requests bucket only.
    expect((await paced(app, 'GET', '/v1/tags', { token: pat })).status).toBe(200);
    // The window turns over: the write goes through.
    app.clock.advance(windowLeft(app) * 1000);
    expect((await paced(app, 'POST', '/v1/tags', { token: pat, body: { name: 't121' } })).status).toBe(201);
  });

  it('reads and writes count in their own buckets; 600 requests of any kind per credential', async () => {
    const app = await app1();
    const { pat } = await userWithPat(app, ['tags:write']);
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    for (let i = 0; i < 470; i++) expect((await paced(app, 'GET', '/v1/tags?limit=1', { token: pat })).status).toBe(200);
    // 470 reads took nothing from the write budget: all 120 writes still go through.
    for (let i = 0; i < 120; i++) expect((await paced(app, 'POST', '/v1/tags', { token: pat, body: { name: `w${i}` } })).status).toBe(201);
    for (let i = 0; i < 10; i++) expect((await paced(app, 'GET', '/v1/tags?limit=1', { token: pat })).status).toBe(200);
    const read = await paced(app, 'GET', '/v1/tags?limit=1', { token: pat });
    expect(expectProblem(read, 429, 'rate_limited').detail).toMatch(/credential\b/);
    expect(rateHeaders(read)).toEqual({ limit: 600, remaining: 0, reset: windowLeft(app) });
    expect(read.headers.get('retry-after')).toBe(String(windowLeft(app)));
  });

  it('two credentials of one user have separate buckets', async () => {
    const app = await app1();
    const u = await registerUser(app);
    const a = (await createPat(app, u.session, ['tags:write'], 30, 'a')).token;
    const b = (await createPat(app, u.session, ['tags:write'], 30, 'b')).token;
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    for (let i = 0; i < 120; i++) expect((await paced(app, 'POST', '/v1/tags', { token: a, body: { name: `a${i}` } })).status).toBe(201);
    expectProblem(await paced(app, 'POST', '/v1/tags', { token: a, body: { name: 'a-more' } }), 429, 'rate_limited');
    const other = await paced(app, 'POST', '/v1/tags', { token: b, body: { name: 'b0' } });
    expect(other.status).toBe(201);
    expect(rateHeaders(other).remaining).toBeGreaterThan(0);
    expect((await paced(app, 'POST', '/v1/tags', { token: u.session, body: { name: 's0' } })).status).toBe(201);
  });

  it('counts before the credential is looked up: an unknown token has a bucket of its own', async () => {
    const app = await app1();
    const bogus = 'cairn_pat_' + 'A'.repeat(43);
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    for (let i = 0; i < 600; i++) expectProblem(await paced(app, 'GET', '/v1/tags', { token: bogus }), 401, 'unauthorized');
    const r = await paced(app, 'GET', '/v1/tags', { token: bogus });
    expectProblem(r, 429, 'rate_limited');
    expect(rateHeaders(r)).toMatchObject({ limit: 600, remaining: 0 });
  });

  it('the same buckets hold over /trpc (a batch counts once per call), with headers and Retry-After', async () => {
    const app = await app1();
    const { pat } = await userWithPat(app);
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    const trpc = (names: string[]) => {
      app.clock.advance(50 * names.length);
      const body = Object.fromEntries(names.map((name, i) => [String(i), { json: { name } }]));
      return call(app, 'POST', `/trpc/${names.map(() => 'tags.create').join(',')}?batch=1`, { token: pat, body });
    };
    for (let i = 0; i < 59; i++) expect((await trpc([`x${i}a`, `x${i}b`])).status).toBe(200); // 118 writes
    const last = await trpc(['y1', 'y2', 'y3']); // the 119th and 120th pass, the 121st does not
    expect(last.status).toBe(207);
    expect(last.body.map((r: { error?: { json: { data: { httpStatus: number } } } }) => r.error?.json.data.httpStatus ?? 200)).toEqual([200, 200, 429]);
    expect(last.headers.get('retry-after')).toBe(String(windowLeft(app)));
    expect(rateHeaders(last)).toEqual({ limit: 120, remaining: 0, reset: windowLeft(app) });
  });
});

describe('the edge bucket: 20 requests/s per IP, burst 100 (spec §8.1)', () => {
  it('allows a burst of 100, then one request per 50 ms; every response has the headers', async () => {
    const app = await app1();
    for (let i = 1; i <= 100; i++) {
      const r = await call(app, 'GET', '/healthz');
      expect(r.status, `request ${i}`).toBe(200);
      expect(rateHeaders(r)).toEqual({ limit: 100, remaining: 100 - i, reset: Math.ceil(i / 20) });
    }
    const refused = await call(app, 'GET', '/v1/tags', { token: 'whatever' });
    expectProblem(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(rateHeaders(refused)).toEqual({ limit: 100, remaining: 0, reset: 5 });
    expect((await call(app, 'GET', '/elsewhere')).status).toBe(429);
    app.clock.advance(50);
    expect((await call(app, 'GET', '/healthz')).status).toBe(200);
    expect((await call(app, 'GET', '/healthz')).status).toBe(429);
    app.clock.advance(5_000);
    for (let i = 0; i < 100; i++) expect((await call(app, 'GET', '/healthz')).status).toBe(200);
    expect((await call(app, 'GET', '/healthz')).status).toBe(429);
  });

  it('headers name the most constrained bucket that applied, on problems too', async () => {
    const app = await app1();
    const r = await call(app, 'GET', '/v1/nope');
    expectProblem(r, 404, 'not_found');
    expect(rateHeaders(r)).toEqual({ limit: 100, remaining: 99, reset: 1 });
    const bad = await call(app, 'GET', '/v1/tags');
    expectProblem(bad, 401, 'unauthorized');
    expect(bad.headers.get('ratelimit-limit')).toBe('100');
  });

  it('the client IP is the socket address unless CAIRN_TRUST_PROXY names the proxy', async () => {
    const direct = await app1();
    for (let i = 0; i < 100; i++) await call(direct, 'GET', '/healthz', { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    expect((await call(direct, 'GET', '/healthz', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(429);

    const proxied = await app1({ CAIRN_TRUST_PROXY: 'loopback' });
    for (let i = 0; i < 100; i++) expect((await call(proxied, 'GET', '/healthz', { headers: { 'x-forwarded-for': '203.0.113.7' } })).status).toBe(200);
    expect((await call(proxied, 'GET', '/healthz', { headers: { 'x-forwarded-for': '203.0.113.7' } })).status).toBe(429);
    expect((await call(proxied, 'GET', '/healthz', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('documents the RateLimit-* headers on every answer and Retry-After on 429', async () => {
    const app = await app1();
    const doc = (await call(app, 'GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/tags'].post.responses['201'].headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
    expect(Object.keys(doc.components.responses.validation_failed.headers)).toContain('RateLimit-Remaining');
    expect(Object.keys(doc.components.responses.rate_limited.headers)).toEqual(expect.arrayContaining(['Retry-After', 'RateLimit-Reset']));
    expect(doc.paths['/v1/tags'].post.responses['429'].$ref).toBe('#/components/responses/rate_limited');
  });
});

describe('CAIRN_TRUST_PROXY', () => {
  it('takes addresses, CIDR ranges and named ranges; refuses hop counts and "true"', async () => {
    const { loadConfig, ConfigError } = await import('../../core/config.js');
    expect(loadConfig({ CAIRN_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16, ::1, fd00::/8, loopback' }).trustProxy).toBe('10.0.0.1, 192.168.0.0/16, ::1, fd00::/8, loopback');
    expect(loadConfig({ CAIRN_TRUST_PROXY: '' }).trustProxy).toBeUndefined();
    expect(loadConfig({}).trustProxy).toBeUndefined();
    for (const bad of ['1', 'true', '10.0.0.0/33', 'proxy.example', '10.0.0.1,']) {
      expect(() => loadConfig({ CAIRN_TRUST_PROXY: bad }), bad).toThrow(ConfigError);
    }
  });
});

describe('CAIRN_RATE_LIMIT_FACTOR', () => {
  it('multiplies every budget', async () => {
    const app = await app1({ CAIRN_RATE_LIMIT_FACTOR: '0.1' });
    app.clock.advance(10_000);
    const { pat } = await userWithPat(app);
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    // 12 writes (120 × 0.1), paced at the edge's scaled rate of 2/s.
    for (let i = 0; i < 12; i++) {
      app.clock.advance(500);
      expect((await call(app, 'POST', '/v1/tags', { token: pat, body: { name: `f${i}` } })).status).toBe(201);
    }
    app.clock.advance(500);
    const r = await call(app, 'POST', '/v1/tags', { token: pat, body: { name: 'f12' } });
    expectProblem(r, 429, 'rate_limited');
    expect(rateHeaders(r).limit).toBe(12);
    // The edge burst is 10 (100 × 0.1).
    app.clock.advance(10_000);
    for (let i = 0; i < 10; i++) expect((await call(app, 'GET', '/healthz')).status).toBe(200);
    expect((await call(app, 'GET', '/healthz')).status).toBe(429);
  });

  it('defaults to 1', async () => {
    const { loadConfig } = await import('../../core/config.js');
    expect(loadConfig({}).rateLimitFactor).toBe(1);
  });
});

describe('route buckets', () => {
  it('POST /v1/keys: 10 per UTC day per user, counted on success, agreeing with the stored count after a restart', async () => {
    const app = await app1();
    app.clock.set(Date.parse('2026-11-21T23:00:00.000Z'));
    const u = await registerUser(app);
    const post = (a: TestApp, body: unknown = { name: 'k', scopes: ['tags:read'], expiresInDays: 30 }) =>
      paced(a, 'POST', '/v1/keys', { token: u.session, body });
    // A refused attempt creates nothing and costs nothing.
    expectProblem(await post(app, { name: 'k', scopes: ['tags:read'], expiresInDays: 31 }), 422, 'validation_failed');
    for (let i = 1; i <= 4; i++) {
      const r = await post(app);
      expect(r.status).toBe(201);
      expect(rateHeaders(r)).toMatchObject({ limit: 10, remaining: 10 - i });
    }
    // A restart forgets the in-memory counters; the bucket starts from the tokens created today.
    stopKeepingData(app);
    const again = await restartApp(app, { CAIRN_RATE_LIMIT_FACTOR: '1' });
    apps.push(again);
    for (let i = 5; i <= 10; i++) {
      const r = await post(again);
      expect(r.status, `key ${i}`).toBe(201);
      expect(rateHeaders(r)).toMatchObject({ limit: 10, remaining: 10 - i });
    }
    const refused = await post(again);
    expectProblem(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil((Date.parse('2026-11-22T00:00:00.000Z') - again.clock()) / 1000)));
    expect(rateHeaders(refused)).toMatchObject({ limit: 10, remaining: 0 });
    again.clock.set(Date.parse('2026-11-22T00:00:00.000Z'));
    expect((await post(again)).status).toBe(201);
  });

  it('procedure meta rateLimits: per-user and per-IP buckets count every attempt', async () => {
    const app = await app1();
    const probe = router({
      lookup: authedProcedure
        .meta({ rateLimits: ['approvalLookupUser', 'approvalLookupIp'] })
        .input(z.object({ code: z.string() }))
        .query(({ input }) => {
          if (input.code !== '123456789') throw new AppError('not_found', 'no such code');
          return { ok: true };
        }),
    });
    const factory = createCallerFactory(probe);
    const as = (token: string, ip: string) => factory(createContextInner({ deps: app.deps, requestId: 't', authorization: `Bearer ${token}`, ip }));
    const a = await registerUser(app);
    const b = await registerUser(app);
    // Per user: 10 a minute, failed lookups included, whatever the IP.
    for (let i = 0; i < 10; i++) await expect(as(a.session, `192.0.2.${i}`).lookup({ code: String(i) })).rejects.toMatchObject({ problemCode: 'not_found' });
    await expect(as(a.session, '192.0.2.99').lookup({ code: '123456789' })).rejects.toMatchObject({ problemCode: 'rate_limited' });
    // Per IP: 30 a minute across users, none of whom reaches their own 10 (a new minute first).
    app.clock.advance(60_000);
    const users = [a, b, await registerUser(app), await registerUser(app)];
    let n = 0;
    for (const u of users) for (let i = 0; i < 8 && n < 30; i++, n++) await as(u.session, '198.51.100.9').lookup({ code: '123456789' });
    const fifth = await registerUser(app);
    await expect(as(fifth.session, '198.51.100.9').lookup({ code: '123456789' })).rejects.toMatchObject({ problemCode: 'rate_limited' });
    expect(await as(fifth.session, '198.51.100.10').lookup({ code: '123456789' })).toEqual({ ok: true });
  });

  it('routeLimit attaches a per-IP bucket to a plain Express route (POST /oauth/token: 60 a minute)', async () => {
    const app = await app1();
    const deps = app.deps;
    const ex = express();
    ex.use((req: Request, _res: Response, next: NextFunction) => {
      initRequestState(req, 'req_test', req.ip ?? '');
      next();
    });
    ex.use(edgeLimit(deps));
    ex.post('/oauth/token', routeLimit(deps, 'oauthToken'), (_req, res) => {
      res.json({ ok: true });
    });
    ex.use((err: unknown, req: Request, res: Response, _next: NextFunction) => sendProblem(deps, req, res, err));
    const server = createServer(ex);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const post = () => fetch(`${url}/oauth/token`, { method: 'POST' });
      for (let i = 1; i <= 60; i++) {
        app.clock.advance(50);
        const r = await post();
        expect(r.status).toBe(200);
        if (i === 60) expect(r.headers.get('ratelimit-limit')).toBe('60');
      }
      app.clock.advance(50);
      const refused = await post();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(refused.headers.get('retry-after'))).toBe(Math.ceil((60_000 - (app.clock() % 60_000)) / 1000));
      expect(() => routeLimit(deps, 'keyCreate')).toThrow(/not a per-IP bucket/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('the limiter forgets ended windows (memory stays bounded)', async () => {
    const app = await app1();
    const limiter = limiterFor(app.deps);
    for (let i = 0; i < 50; i++) limiter.hit([{ name: 'oauthRegister', subject: `ip${i}` }]);
    const size = () => (limiter as unknown as { windows: Map<string, unknown> }).windows.size;
    expect(size()).toBeGreaterThanOrEqual(50);
    app.clock.advance(2 * 3_600_000);
    limiter.hit([{ name: 'oauthRegister', subject: 'late' }]);
    expect(size()).toBe(1);
  });
});

describe('the credential buckets count the credential, not its spelling (issue 11.4)', () => {
  /** A base64url string whose last character spells the same bytes with other unused bits. */
  function respell(b64u: string): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = b64u[b64u.length - 1]!;
    const unusedBits = (b64u.length * 6) % 8; // 32 bytes → 43 chars → 258 bits: 2 unused
    const i = alphabet.indexOf(last);
    return b64u.slice(0, -1) + alphabet[(i & ~((1 << unusedBits) - 1)) | 1]!;
  }

  it('re-spelt Authorization headers share one budget; a non-canonical token is refused and counted', async () => {
    // factor 0.05: 30 requests per credential per window, edge 1/s with burst 5 (the clock moves 1 s a request).
    const app = await app1({ CAIRN_RATE_LIMIT_FACTOR: '0.05' });
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    const u = await registerUser(app);
    const pat = (await createPat(app, u.session, ['tags:read'])).token;
    app.clock.set(Math.floor(app.clock() / WINDOW) * WINDOW + WINDOW);
    const body = pat.slice('cairn_pat_'.length);
    const odd = `cairn_pat_${respell(body)}`;
    expect(odd).not.toBe(pat);
    const spellings = [`Bearer ${pat}`, `bearer ${pat}`, `BEARER   ${pat}  `, `Bearer ${odd}`];
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      app.clock.advance(1000);
      const r = await call(app, 'GET', '/v1/tags', { headers: { authorization: spellings[i % spellings.length]! } });
      statuses.push(r.status);
      if (spellings[i % spellings.length]!.includes(odd)) expectProblem(r, 401, 'unauthorized');
      else expect(r.status).toBe(200);
    }
    app.clock.advance(1000);
    const refused = await call(app, 'GET', '/v1/tags', { headers: { authorization: `bEaReR ${pat}` } });
    expectProblem(refused, 429, 'rate_limited');
    expect(statuses.filter((s) => s === 429)).toEqual([]);
  });

  it('a session JWT re-spelt in its signature is refused (one credential, one spelling)', async () => {
    const app = await app1();
    const u = await registerUser(app);
    const [h, p, sig] = u.session.split('.') as [string, string, string];
    const odd = `${h}.${p}.${respell(sig)}`;
    expect(odd).not.toBe(u.session);
    expect((await call(app, 'GET', '/v1/me', { token: u.session })).status).toBe(200);
    expectProblem(await call(app, 'GET', '/v1/me', { token: odd }), 401, 'unauthorized');
  });
});
