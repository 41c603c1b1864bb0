// Issue 28 item 14: an inbox url capture whose title fetch fails logs why, at debug level, as a
// class (refused address, timeout, too large, not HTML, HTTP status class, …), and never the URL,
// its host or the page. Pages are loopback HTTPS with a certificate made at test time; a connect
// watcher fails the run on any other address. Captures are made with a personal token (the
// title fetch runs for token captures too: docs/security.md "Inbox titles").
// Two apps share the log: `app` fetches titles with the shipped 8 s deadline, so every case that
// must end in its own class (a 300 KB page read over TLS included) does, however slow the machine;
// `hasty`, with a 300 ms deadline, serves only the case whose class is the timeout.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { logSink } from '../helpers/log-sink.js';
import { html, pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';
import type { ConnectAttempt, Resolver } from '../../core/net/index.js';
import { inboxTitlesSettled } from '../../routers/inbox/model.js';

const { lines, stream } = logSink();
const attempts: ConnectAttempt[] = [];
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  if (name === 'private-name.test') return [{ address: '10.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

let app: TestApp;
let hasty: TestApp;
let site: PageServer;
let pat: string;
let hastyPat: string;
const routes = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();

beforeAll(async () => {
  const cert = selfSignedCert();
  const outbound = { resolver, ca: cert.cert, onConnect: (a: ConnectAttempt) => attempts.push(a) };
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { logStream: stream, outbound });
  hasty = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { linkTitleDeadlineMs: 300 }, { logStream: stream, outbound });
  const u = await registerUser(app);
  pat = (await createPat(app, u.session, ['inbox:write', 'inbox:read'])).token;
  const h = await registerUser(hasty);
  hastyPat = (await createPat(hasty, h.session, ['inbox:write', 'inbox:read'])).token;
  site = await pageServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route) route(req, res);
    else html(res, '<title>not here</title>', 404);
  }, cert);
});
afterAll(async () => {
  await inboxTitlesSettled();
  await site?.close();
  await app?.close();
  await hasty?.close();
  expect(attempts.filter((a) => a.address !== '127.0.0.1')).toEqual([]);
});

const FAILED = 'inbox title fetch failed; the item keeps title null';
const failures = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === FAILED);

const tokenOf = (a: TestApp) => (a === hasty ? hastyPat : pat);

/** Captures `url` with a token of `a`, waits for its title task, answers the failure lines it logged. */
async function capture(url: string, a = app) {
  const before = failures().length;
  const r = await call(a, 'POST', '/v1/inbox', { token: tokenOf(a), body: { kind: 'url', url } });
  expect(r.status, r.text).toBe(201);
  await inboxTitlesSettled();
  return { id: r.body.id as string, logged: failures().slice(before) };
}

const page = (path: string, handler: (res: http.ServerResponse) => void) => {
  routes.set(path, (_req, res) => handler(res));
  return `${site.origin}${path}`;
};

describe('a failed inbox title fetch logs its class at debug, never the URL (issue 28 item 14)', () => {
  it('logs nothing at info level', async () => {
    const { logged } = await capture(page('/quiet-404', (res) => html(res, '<title>Nope</title>', 404)));
    expect(logged).toEqual([]);
  });

  it('at debug level: one line per failure, naming its class', async () => {
    app.deps.log.level = 'debug';
    hasty.deps.log.level = 'debug';
    // [url, class, the app that captures it]
    const cases: [string, string, TestApp?][] = [
      [page('/gone-marker-404', (res) => html(res, '<title>Gone</title>', 404)), 'http_4xx'],
      [page('/broken-marker-503', (res) => html(res, '<title>Down</title>', 503)), 'http_5xx'],
      [page('/json-marker', (res) => html(res, '{"title":"x"}', 200, 'application/json')), 'not_html'],
      [page('/gzip-marker', (res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.end('not really gzip');
      }), 'encoded'],
      [page('/untitled-marker', (res) => html(res, '<html><head></head><body>no title here</body></html>')), 'no_title'],
      [page('/huge-marker', (res) => html(res, `<html><head>${' '.repeat(300 * 1024)}</head></html>`)), 'too_large'],
      [page('/silent-marker', () => {}), 'timeout', hasty], // never answers: hasty's 300 ms deadline passes
      ['https://private-name.test/private-marker', 'refused_address'],
      ['https://nowhere.invalid/dns-marker', 'dns'],
    ];
    for (const [url, failure, a = app] of cases) {
      const { id, logged } = await capture(url, a);
      expect(logged, url).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 20, failure });
      expect((await call(a, 'GET', `/v1/inbox/${id}`, { token: tokenOf(a) })).body.title).toBeNull();
    }
    // No line of any kind holds a URL, a host or a path of these pages.
    const all = lines.join('\n');
    for (const needle of ['localhost', `:${site.port}`, 'private-name', 'nowhere.invalid', 'marker', 'https:']) expect(all.includes(needle), needle).toBe(false);
  });

  it('a title that arrives logs no failure', async () => {
    const { id, logged } = await capture(page('/titled', (res) => html(res, '<title>A real page</title>')));
    expect(logged).toEqual([]);
    expect((await call(app, 'GET', `/v1/inbox/${id}`, { token: pat })).body.title).toBe('A real page');
  });
});
