// Spec §2.11, §4.16 (docs/api.md "Link titles"): POST /v1/link-title over HTTP against loopback
// HTTPS pages with a certificate made at test time. Every URL here is loopback or `.invalid`, and
// a connect watcher fails the run on any other address; the refused-address cases (private
// targets, redirects to them) run in a loopback-only network namespace (test/net/door.test.ts).
// Two apps: `app` has the shipped 8 s deadline, so a page that must be read (300 KB over TLS
// included) is read however slow the machine; `hasty`, with a 1.5 s deadline, serves only the
// pages that never finish, where the deadline is what is tested.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { logSink } from '../helpers/log-sink.js';
import { html, pageServer, selfSignedCert, type Cert, type PageServer } from '../helpers/tls.js';
import type { ConnectAttempt, Resolver } from '../../core/net/index.js';

const attempts: ConnectAttempt[] = [];
// Names resolve only to loopback; anything else fails as DNS would.
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

const { lines, stream: sink } = logSink();

let cert: Cert;
let app: TestApp;
let hasty: TestApp;
let session: string;
let hastySession: string;
let site: PageServer;
const routes = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();

beforeAll(async () => {
  cert = selfSignedCert();
  const outbound = { resolver, ca: cert.cert, onConnect: (a: ConnectAttempt) => attempts.push(a) };
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { logStream: sink, outbound });
  hasty = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { linkTitleDeadlineMs: 1_500 }, { outbound });
  session = (await registerUser(app)).session;
  hastySession = (await registerUser(hasty)).session;
  site = await pageServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route) route(req, res);
    else html(res, '<title>not here</title>', 404);
  }, cert);
});
afterAll(async () => {
  await site?.close();
  await app?.close();
  await hasty?.close();
  // The second guard: whatever the door did, it never handed a socket a non-loopback address.
  expect(attempts.filter((a) => a.address !== '127.0.0.1' && a.address !== '::1')).toEqual([]);
});

const titleOf = async (url: string, token = session, a = app) => {
  const r = await call(a, 'POST', '/v1/link-title', { token, body: { url } });
  expect(r.status, r.text).toBe(200);
  return r.body as { title: string | null; host: string };
};
const page = (path: string, body: string, type?: string, status?: number) => {
  routes.set(path, (_req, res) => html(res, body, status, type));
  return `${site.origin}${path}`;
};

describe('POST /v1/link-title: what the title is (spec §4.16)', () => {
  it('answers og:title before <title>, and the host of the URL sent', async () => {
    const url = page('/og', '<html><head><title>Plain title</title><meta property="og:title" content="Open Graph title"></head><body>x</body></html>');
    expect(await titleOf(url)).toEqual({ title: 'Open Graph title', host: `localhost:${site.port}` });
  });

  it('falls back to <title> when there is no og:title (or an empty one)', async () => {
    expect((await titleOf(page('/plain', '<!doctype html><html><head><title>Just a title</title></head><body></body></html>'))).title).toBe('Just a title');
    expect((await titleOf(page('/empty-og', '<head><meta property="og:title" content="  "><title>Fallback</title></head>'))).title).toBe('Fallback');
  });

  it('decodes entities in text and attributes and collapses whitespace', async () => {
    expect((await titleOf(page('/ent', '<head><title>\n  Fish &amp; Chips &#x2014; caf&eacute;\t&lt;b&gt;  </title></head>'))).title).toBe('Fish & Chips — café <b>');
    expect((await titleOf(page('/ent-og', '<head><meta property="og:title" content="Tom &amp; Jerry&#39;s   &quot;Show&quot;"></head>'))).title).toBe('Tom & Jerry\'s "Show"');
  });

  it('reads a title with markup-looking text as text, not tags', async () => {
    expect((await titleOf(page('/rcdata', '<head><title>a <b>bold</b> claim</title></head>'))).title).toBe('a <b>bold</b> claim');
  });

  it('cuts the title to 512 characters', async () => {
    const long = 'é'.repeat(600);
    const r = await titleOf(page('/long', `<head><title>${long}</title></head>`));
    expect(r.title).toBe('é'.repeat(512));
  });

  it('a page without a title is null', async () => {
    expect((await titleOf(page('/none', '<html><body><h1>No title</h1></body></html>'))).title).toBeNull();
  });
});

describe('POST /v1/link-title: pages that cannot be read give title null (spec §4.16)', () => {
  it('non-HTML content types are not read', async () => {
    expect((await titleOf(page('/json', '<title>Looks like HTML</title>', 'application/json'))).title).toBeNull();
    expect((await titleOf(page('/xhtml', '<title>XHTML</title>', 'application/xhtml+xml'))).title).toBeNull();
    expect((await titleOf(page('/text', '<title>Text</title>', 'text/plain'))).title).toBeNull();
  });

  it('a non-200 answer is null even with a title', async () => {
    expect((await titleOf(page('/gone', '<title>Gone</title>', undefined, 410))).title).toBeNull();
    expect((await titleOf(`${site.origin}/missing`)).title).toBeNull();
    expect((await titleOf(page('/created', '<title>Created</title>', undefined, 201))).title).toBeNull();
  });

  it('reads at most 256 KB: a title past the cap is null, a title before it is kept', async () => {
    const pad = `<!-- ${'x'.repeat(300 * 1024)} -->`;
    expect((await titleOf(page('/big-late', `<html><head>${pad}<title>Too late</title></head></html>`))).title).toBeNull();
    // The title comes first but the head never ends before the cap: the <title> read still counts.
    expect((await titleOf(page('/big-early', `<html><head><title>Early</title>${pad}</head></html>`))).title).toBe('Early');
  });

  it('stops reading past the cap and closes the connection instead of draining the page', async () => {
    let finished = false;
    // Resolved by the page server's 'close' of the response: true if the client went away before
    // the whole page was written. It may come a moment after the answer; awaited, not slept for.
    let closedEarly!: (early: boolean) => void;
    const closed = new Promise<boolean>((resolve) => (closedEarly = resolve));
    routes.set('/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><head>');
      let sent = 0;
      const push = () => {
        while (sent < 64 * 1024 * 1024) {
          sent += 64 * 1024;
          if (!res.write(`<!-- ${'y'.repeat(64 * 1024 - 9)} -->`)) return void res.once('drain', push);
        }
        finished = true;
        res.end();
      };
      res.on('close', () => closedEarly(!finished));
      push();
    });
    expect((await titleOf(`${site.origin}/endless`)).title).toBeNull();
    // Bounded: a connection the client kept open would never close (the page is 64 MB).
    let bound: NodeJS.Timeout | undefined;
    const early = await Promise.race([closed, new Promise<string>((resolve) => (bound = setTimeout(() => resolve('no close within 10 s'), 10_000)))]);
    clearTimeout(bound);
    expect(early).toBe(true);
  });

  it('a server that never answers is null once the deadline passes', async () => {
    routes.set('/hang', () => undefined); // never answers
    const started = Date.now();
    expect((await titleOf(`${site.origin}/hang`, hastySession, hasty)).title).toBeNull();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(5_000);
  });

  it('a body that stalls after the head also ends at the deadline', async () => {
    routes.set('/stall', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><head><title>Never clos');
    });
    expect((await titleOf(`${site.origin}/stall`, hastySession, hasty)).title).toBeNull();
  });

  it('a name that does not resolve is null', async () => {
    expect(await titleOf('https://nowhere.invalid/page')).toEqual({ title: null, host: 'nowhere.invalid' });
  });

  it('a certificate the server does not trust is null', async () => {
    const other = await pageServer((_req, res) => html(res, '<title>Untrusted</title>'), selfSignedCert());
    try {
      expect((await titleOf(`${other.origin}/`)).title).toBeNull();
      expect(other.connections()).toBe(1);
      expect(other.hits).toEqual([]); // the handshake failed before any request was sent
    } finally {
      await other.close();
    }
  });
});

describe('POST /v1/link-title: https and redirects (spec §4.16)', () => {
  it('fetches an http:// link over https (the answer names the host sent)', async () => {
    const url = page('/upgrade', '<title>Over TLS</title>').replace('https://', 'http://');
    expect(await titleOf(url)).toEqual({ title: 'Over TLS', host: `localhost:${site.port}` });
  });

  it('follows a chain of 5 redirects', async () => {
    for (let i = 1; i <= 5; i++) routes.set(`/r5/${i}`, (_req, res) => res.writeHead(302, { location: i < 5 ? `/r5/${i + 1}` : '/r5/end' }).end());
    page('/r5/end', '<title>After five</title>');
    expect((await titleOf(`${site.origin}/r5/1`)).title).toBe('After five');
    expect(site.hits.filter((h) => h.startsWith('GET /r5/'))).toEqual(['GET /r5/1', 'GET /r5/2', 'GET /r5/3', 'GET /r5/4', 'GET /r5/5', 'GET /r5/end']);
  });

  it('refuses the 6th redirect: title null, and its target is never asked for', async () => {
    for (let i = 1; i <= 6; i++) routes.set(`/r6/${i}`, (_req, res) => res.writeHead(301, { location: i < 6 ? `${site.origin}/r6/${i + 1}` : '/r6/end' }).end());
    page('/r6/end', '<title>After six</title>');
    expect((await titleOf(`${site.origin}/r6/1`)).title).toBeNull();
    expect(site.hits.filter((h) => h.startsWith('GET /r6/'))).toEqual(['GET /r6/1', 'GET /r6/2', 'GET /r6/3', 'GET /r6/4', 'GET /r6/5', 'GET /r6/6']);
  });

  it('a redirect to an http:// URL is fetched over https too', async () => {
    routes.set('/to-http', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${site.port}/after-http` }).end());
    page('/after-http', '<title>Still TLS</title>');
    expect((await titleOf(`${site.origin}/to-http`)).title).toBe('Still TLS');
  });

  it('a redirect to another scheme or with userinfo is null', async () => {
    routes.set('/to-file', (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    routes.set('/to-user', (_req, res) => res.writeHead(302, { location: `https://user:pw@localhost:${site.port}/og` }).end());
    expect((await titleOf(`${site.origin}/to-file`)).title).toBeNull();
    expect((await titleOf(`${site.origin}/to-user`)).title).toBeNull();
  });

  it('sends no cookie and no credential, and keeps no cookie between hops', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    routes.set('/cookie', (req, res) => {
      seen.push(req.headers);
      res.writeHead(302, { location: '/cookie2', 'set-cookie': 'sid=abc; Path=/' }).end();
    });
    routes.set('/cookie2', (req, res) => {
      seen.push(req.headers);
      html(res, '<title>Cookie</title>');
    });
    expect((await titleOf(`${site.origin}/cookie`)).title).toBe('Cookie');
    expect(seen).toHaveLength(2);
    for (const h of seen) {
      expect(h.cookie).toBeUndefined();
      expect(h.authorization).toBeUndefined();
    }
  });
});

describe('POST /v1/link-title: who may call it and what it takes', () => {
  it('a personal token is forbidden_scope whatever its scopes', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tasks:write', 'settings:write', 'sessions:write', 'webhooks:write', 'inbox:write', 'attachments:write']);
    const url = page('/pat', '<title>Not for keys</title>');
    const before = site.hits.length;
    expectProblem(await call(app, 'POST', '/v1/link-title', { token: pat.token, body: { url } }), 403, 'forbidden_scope');
    expect(site.hits.length).toBe(before);
  });

  it('no credential is 401', async () => {
    expectProblem(await call(app, 'POST', '/v1/link-title', { body: { url: `${site.origin}/og` } }), 401, 'unauthorized');
  });

  it('a bad url is 422 at /url, and nothing is fetched', async () => {
    const before = site.connections();
    for (const url of ['', 'not a url', 'ftp://localhost/x', 'javascript:alert(1)', `https://u:p@localhost:${site.port}/`, `https://localhost/${'a'.repeat(2048)}`, 42, null]) {
      const p = expectProblem(await call(app, 'POST', '/v1/link-title', { token: session, body: { url } }), 422, 'validation_failed');
      expect(p.errors?.[0]?.pointer, String(url)).toBe('/url');
    }
    expect(expectProblem(await call(app, 'POST', '/v1/link-title', { token: session, body: {} }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/url');
    expect(expectProblem(await call(app, 'POST', '/v1/link-title', { token: session, body: { url: `${site.origin}/og`, extra: 1 } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/extra');
    expect(site.connections()).toBe(before);
  });

  it('a url of exactly 2048 characters is accepted', async () => {
    const path = `/len?${'q'.repeat(2048 - `${site.origin}/len?`.length)}`;
    expect(`${site.origin}${path}`).toHaveLength(2048);
    page(path, '<title>Long URL</title>');
    expect((await titleOf(`${site.origin}${path}`)).title).toBe('Long URL');
  });

  it('works over /trpc for a session (the same procedure)', async () => {
    const url = page('/trpc', '<title>Via tRPC</title>');
    expect(await app.caller(session).linkTitle.fetch({ url })).toEqual({ title: 'Via tRPC', host: `localhost:${site.port}` });
  });
});

describe('POST /v1/link-title: nothing stored, cached or logged', () => {
  it('the URL, its host and the title are absent from the logs, and a second call fetches again', async () => {
    const marker = `/secret-path-${Date.now()}`;
    const url = page(marker, '<title>Logged-Title-Marker</title>');
    lines.length = 0;
    expect((await titleOf(url)).title).toBe('Logged-Title-Marker');
    expect((await titleOf(url)).title).toBe('Logged-Title-Marker');
    expect(site.hits.filter((h) => h === `GET ${marker}`)).toHaveLength(2);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.filter((e) => e.msg === 'request' && e.route === 'linkTitle.fetch')).toHaveLength(2);
    const all = lines.join('\n');
    for (const s of [marker, 'secret-path', 'Logged-Title-Marker', `localhost:${site.port}`, String(site.port)]) expect(all.includes(s), s).toBe(false);
  });

  it('writes nothing to the database', async () => {
    const count = () => {
      const db = app.deps.db.$client;
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
      return tables.map((t) => `${t.name}:${(db.prepare(`SELECT count(*) AS n FROM "${t.name}"`).get() as { n: number }).n}`).join(',');
    };
    const before = count();
    expect((await titleOf(page('/nostore', '<title>Nothing kept</title>'))).title).toBe('Nothing kept');
    expect(count()).toBe(before);
  });
});
