// Issue 28 item 1 (approval phishing) and item 3 (open redirect), over real HTTP with the manual
// clock. The client address comes from X-Forwarded-For: the app trusts the loopback proxy
// (CAIRN_TRUST_PROXY=loopback), so each call says which network it comes from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';
import { networkOf, sameNetwork, describeUserAgent, boundUserAgent } from '../../routers/oauth/request-context.js';
import { authorizeUrl, pkce, register, token, waitPoll } from './helpers.js';

const NET_A = '203.0.113.7'; // the attacker
const NET_B = '198.51.100.20'; // the victim
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const PLANNER_CB = 'https://planner.example/cb';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ CAIRN_TRUST_PROXY: 'loopback' });
});
afterAll(() => app.close());

const from = (ip: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra });

async function openAuthorizeFrom(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { redirect: 'manual', headers });
  const html = await res.text();
  const code = /id="user-code">(\d{3})-(\d{3})-(\d{3})</.exec(html);
  const handle = /data-wait="([A-Za-z0-9_-]+)"/.exec(html);
  return { status: res.status, html, headers: res.headers, location: res.headers.get('location'), userCode: code ? code.slice(1).join('') : undefined, handle: handle?.[1] };
}

function params(client_id: string, redirect_uri: string, challenge: string, extra: Record<string, string | undefined> = {}) {
  return { response_type: 'code', client_id, redirect_uri, scope: 'todos:read', resource: app.deps.config.publicUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'st', ...extra };
}

/** A public app's real registration (the attacker knows its client_id and callback). */
async function planner() {
  return register(app, { client_name: 'Planner', redirect_uris: [PLANNER_CB] });
}

describe('approval phishing (issue 28 item 1)', () => {
  it('the attack from the issue: a request started on network A needs an explicit confirmation to be approved from network B', async () => {
    const victim = await registerUser(app);
    await call(app, 'POST', '/v1/todos', { token: victim.session, body: { title: 'victim secret to-do' } });
    const client = await planner();
    // The attacker opens the authorize page with the app's real callback and their own PKCE.
    const attacker = pkce();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, attacker.challenge)), from(NET_A, { 'user-agent': FIREFOX_LINUX }));
    expect(page.status).toBe(200);
    app.clock.advance(40_000);

    // The victim enters the code the attacker sent them: the screen carries where and when it started.
    const look = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: victim.session, headers: from(NET_B) });
    expect(look.status).toBe(200);
    expect(look.body.startedFrom).toMatchObject({ ageSeconds: 40, network: '203.0.113.0/24', address: NET_A, userAgent: FIREFOX_LINUX, device: 'Firefox on Linux', sameNetworkAsYou: false });
    expect(look.body.startedFrom.summary).toBe('Started 40 s ago from 203.0.113.0/24 (address 203.0.113.7), Firefox on Linux. You are on 198.51.100.0/24: another network.');
    expect(look.body.yourNetwork).toBe('198.51.100.0/24');
    expect(look.body.confirmOtherNetworkRequired).toBe(true);
    expect(look.body.warning).toMatch(/^Never approve a code someone else gave you\./);

    // Without the confirmation: refused, saying why; the request stays pending.
    const refused = expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: victim.session, headers: from(NET_B), body: { scopes: ['todos:read'] } }), 422, 'validation_failed');
    expect(refused.errors).toEqual([{ pointer: '/confirmOtherNetwork', message: expect.stringMatching(/started from 203\.0\.113\.0\/24, not from your network \(198\.51\.100\.0\/24\)\. If someone gave you this code, deny it/) }]);
    expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: victim.session, headers: from(NET_B), body: { scopes: ['todos:read'], confirmOtherNetwork: false } }), 422, 'validation_failed');
    expect((await waitPoll(app, page.handle!)).status).toBe('pending');

    // With it, the approval goes through — and the attacker, who holds the page and the verifier,
    // gets the access: the confirmation is a speed bump for the victim, not a fix (docs/oauth.md).
    const ok = await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: victim.session, headers: from(NET_B), body: { scopes: ['todos:read'], confirmOtherNetwork: true } });
    expect(ok.status).toBe(200);
    expect(ok.body.decision).toBe('approved');
    const w = await waitPoll(app, page.handle!);
    const code = new URL(w.redirect!).searchParams.get('code')!;
    const t = await token(app, { grant_type: 'authorization_code', code, code_verifier: attacker.verifier, client_id: client.client_id, redirect_uri: PLANNER_CB });
    expect(t.status).toBe(200);
    const todos = await call(app, 'GET', '/v1/todos', { token: t.body.access_token });
    expect(JSON.stringify(todos.body)).toContain('victim secret to-do');
  });

  it('the same over /trpc: the confirmation is required there too', async () => {
    const victim = await registerUser(app);
    const client = await planner();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(NET_A));
    const r = await call(app, 'POST', '/trpc/approvals.approve', { token: victim.session, headers: from(NET_B), body: { json: { code: page.userCode, scopes: ['todos:read'] } } });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('/confirmOtherNetwork');
  });

  it.each([
    ['the same IPv4 /24', '203.0.113.7', '203.0.113.250', '203.0.113.0/24'],
    ['the same IPv6 /64', '2001:db8:1:2::5', '2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['both loopback', '127.0.0.1', '::1', 'loopback'],
  ])('%s needs no confirmation', async (_what, startIp, approveIp, network) => {
    const u = await registerUser(app);
    const client = await planner();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(startIp));
    const look = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session, headers: from(approveIp) });
    expect(look.body.startedFrom).toMatchObject({ network, sameNetworkAsYou: true });
    expect(look.body.confirmOtherNetworkRequired).toBe(false);
    expect(look.body.startedFrom.summary).toMatch(/That is your network too\.$/);
    const ok = await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, headers: from(approveIp), body: { scopes: ['todos:read'] } });
    expect(ok.status).toBe(200);
  });

  it('another IPv6 /64, or IPv4 against IPv6, is another network', async () => {
    const u = await registerUser(app);
    const client = await planner();
    for (const [startIp, approveIp] of [
      ['2001:db8:1:2::5', '2001:db8:1:3::5'],
      ['203.0.113.7', '2001:db8:1:2::5'],
      ['203.0.113.7', '127.0.0.1'],
    ] as const) {
      const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(startIp));
      expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, headers: from(approveIp), body: { scopes: ['todos:read'] } }), 422, 'validation_failed');
    }
  });

  it('networks: /24 and /64, IPv4-mapped IPv6 as IPv4, loopback, unknown never matches', () => {
    expect(networkOf('::ffff:203.0.113.9')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:127.0.0.1')).toBe('loopback');
    expect(networkOf('127.8.9.10')).toBe('loopback');
    expect(networkOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(networkOf('2001:DB8:0:1:2:3:4:5')).toBe('2001:db8:0:1::/64');
    expect(networkOf('')).toBe('unknown');
    expect(networkOf('not an ip')).toBe('unknown');
    expect(sameNetwork('unknown', 'unknown')).toBe(false);
    expect(describeUserAgent('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1')).toBe('Safari on iOS');
    expect(describeUserAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0')).toBe('Edge on Windows');
    expect(describeUserAgent('Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36')).toBe('Chrome on Android');
    expect(describeUserAgent('curl/8.5.0')).toBe('curl');
    expect(describeUserAgent(null)).toBe('an unknown program (no user agent sent)');
    expect(boundUserAgent('a\u0000b\n c')).toBe('a b c');
  });

  it('the context is sealed (no address or user agent in the database), bounded, and gone once decided', async () => {
    const u = await registerUser(app);
    const client = await planner();
    const ua = 'Unique-Agent-' + 'x'.repeat(1000);
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from('192.0.2.123', { 'user-agent': ua }));
    const look = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session, headers: from('192.0.2.1') });
    expect(look.body.startedFrom.userAgent).toHaveLength(200);
    expect(look.body.startedFrom.userAgent.startsWith('Unique-Agent-xxx')).toBe(true);
    const row = () => app.deps.db.$client.prepare('SELECT * FROM oauth_requests ORDER BY created_at DESC, rowid DESC LIMIT 1').get() as Record<string, unknown>;
    expect(row().started_context).toBeInstanceOf(Buffer);
    app.deps.db.$client.pragma('wal_checkpoint(TRUNCATE)');
    const disk = Buffer.concat(['cairn.db', 'cairn.db-wal'].filter((f) => existsSync(`${app.dataDir}/${f}`)).map((f) => readFileSync(`${app.dataDir}/${f}`)));
    expect(disk.includes('Unique-Agent')).toBe(false);
    expect(disk.includes('192.0.2.123')).toBe(false);
    await call(app, 'POST', `/v1/approvals/${page.userCode}/deny`, { token: u.session, headers: from('192.0.2.1') });
    expect(row().started_context).toBeNull();
  });

  it('pending requests live 5 minutes (the injected clock)', async () => {
    const u = await registerUser(app);
    const client = await planner();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(NET_A));
    app.clock.advance(5 * 60_000 - 1);
    const look = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session, headers: from(NET_A) });
    expect(look.status).toBe(200);
    expect(look.body.startedFrom.summary).toMatch(/^Started 5 min ago /);
    expect((await waitPoll(app, page.handle!)).status).toBe('pending');
    app.clock.advance(1);
    const gone = expectProblem(await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session, headers: from(NET_A) }), 404, 'not_found');
    expect(gone.detail).toMatch(/expire after 5 minutes/);
    expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, headers: from(NET_A), body: { scopes: ['todos:read'] } }), 404, 'not_found');
    expect(new URL((await waitPoll(app, page.handle!)).redirect!).searchParams.get('error')).toBe('access_denied');
  });

  it('a denied request cannot be approved later, confirmed or not, before or after its page learned it', async () => {
    const u = await registerUser(app);
    const client = await planner();
    for (const pollFirst of [false, true]) {
      const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(NET_A));
      expect((await call(app, 'POST', `/v1/approvals/${page.userCode}/deny`, { token: u.session, headers: from(NET_B) })).body.decision).toBe('denied');
      if (pollFirst) expect(new URL((await waitPoll(app, page.handle!)).redirect!).searchParams.get('error')).toBe('access_denied');
      expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, headers: from(NET_B), body: { scopes: ['todos:read'], confirmOtherNetwork: true } }), 404, 'not_found');
      expectProblem(await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, headers: from(NET_A), body: { scopes: ['todos:read'] } }), 404, 'not_found');
      expectProblem(await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: u.session, headers: from(NET_A) }), 404, 'not_found');
      if (!pollFirst) expect(new URL((await waitPoll(app, page.handle!)).redirect!).searchParams.get('error')).toBe('access_denied');
      expect((await waitPoll(app, page.handle!)).status).toBe('gone');
    }
  });

  it('the authorize page warns never to pass the code on, and opens the console in a new tab, saying so', async () => {
    const client = await planner();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, PLANNER_CB, pkce().challenge)), from(NET_A));
    expect(page.html).toMatch(/<a href="[^"]+\/app#code=\d{9}" target="_blank" rel="noopener noreferrer" id="console-link">/);
    expect(page.html).toMatch(/opens in a new tab: keep this page open/);
    expect(page.html).toMatch(/id="warning">Enter this code yourself\. Never read it out, send it to anyone, or approve a code someone else gave you/);
  });

  it('the console shows the warning, where it started and the other-network box, and clears #code once decided', async () => {
    // The console is the web app's Settings (app/src/Settings.tsx), rendered by its script: the
    // markup is checked in the browser (browser-phishing.oauth.test.ts); here, the bundle.
    // The bundle is split (app/serve.ts): Settings is a chunk loaded on first use, so every chunk
    // reachable from the entry is read, and the checks below run on the one holding the console.
    const html = await (await fetch(`${app.url}/app`)).text();
    const entry = /<script type="module" src="(\/app\/assets\/app\.[0-9A-Za-z]+\.js)"/.exec(html)![1]!;
    const seen = new Map<string, string>();
    const queue = [entry];
    while (queue.length) {
      const at = queue.shift()!;
      if (seen.has(at)) continue;
      const text = await (await fetch(`${app.url}${at}`)).text();
      seen.set(at, text);
      for (const m of text.matchAll(/["'`]\.\/(chunk\.[0-9A-Za-z]+\.js)["'`]/g)) queue.push(`/app/assets/${m[1]}`);
    }
    const js = [...seen.values()].find((t) => t.includes('"approval-warning"')) ?? '';
    // (Boolean checks: a failure should not print the whole bundle.)
    for (const id of ['approval-warning', 'approval-started', 'approval-other-network', 'confirm-other-network', 'approval-callback']) expect(js.includes(`"${id}"`)).toBe(true);
    expect(js.indexOf('"approval-warning"')).toBeLessThan(js.indexOf('"approval-callback"'));
    expect(js.includes('confirmOtherNetwork')).toBe(true);
    expect(/history\.replaceState\(null,\s*["']["'],\s*`\$\{location\.pathname\}#\/settings`\)/.test(js)).toBe(true);
  });
});

describe('no open redirect (issue 28 item 3)', () => {
  it('an https callback of a client that never completed a grant: an error page with a link naming it, no redirect', async () => {
    const client = await register(app, { client_name: 'Fresh', redirect_uris: ['https://anywhere.example/landing'] });
    const r = await openAuthorizeFrom(authorizeUrl(app, { client_id: client.client_id, response_type: 'x' }), {});
    expect(r.status).toBe(400);
    expect(r.location).toBeNull();
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    const link = /<a href="([^"]+)" rel="noopener noreferrer" id="back-link">([^<]+)<\/a>/.exec(r.html)!;
    expect(link[2]).toBe('https://anywhere.example/landing');
    const href = new URL(link[1]!.replace(/&amp;/g, '&'));
    expect(href.origin + href.pathname).toBe('https://anywhere.example/landing');
    expect(href.searchParams.get('error')).toBe('unsupported_response_type');
    expect(r.html).toContain('response_type must be code.');
    expect((r.html.match(/<a /g) ?? []).length).toBe(1);
    // Every error of that client's requests, not only this one.
    const noPkce = await openAuthorizeFrom(authorizeUrl(app, { client_id: client.client_id, response_type: 'code', scope: 'todos:read', resource: app.deps.config.publicUrl }), {});
    expect([noPkce.status, noPkce.location]).toEqual([400, null]);
  });

  it.each([
    ['a loopback callback', 'http://127.0.0.1:9/cb'],
    ['an https loopback callback', 'https://localhost/cb'],
    ['a private-use scheme', 'com.example.app:/cb'],
  ])('%s keeps the RFC 6749 error redirect', async (_what, uri) => {
    const client = await register(app, { redirect_uris: [uri] });
    const r = await openAuthorizeFrom(authorizeUrl(app, { client_id: client.client_id, response_type: 'x', state: 's1' }), {});
    expect(r.status).toBe(303);
    const loc = new URL(r.location!);
    expect(loc.href.startsWith(uri)).toBe(true);
    expect([loc.searchParams.get('error'), loc.searchParams.get('state'), loc.searchParams.get('iss')]).toEqual(['unsupported_response_type', 's1', app.deps.config.publicUrl]);
  });

  it('an https client that completed a grant keeps the error redirect', async () => {
    const u = await registerUser(app);
    const client = await register(app, { redirect_uris: ['https://done.example/cb'] });
    const before = await openAuthorizeFrom(authorizeUrl(app, { client_id: client.client_id, response_type: 'x' }), {});
    expect(before.status).toBe(400);
    // A whole grant: authorize, approve, redeem.
    const { verifier, challenge } = pkce();
    const page = await openAuthorizeFrom(authorizeUrl(app, params(client.client_id, 'https://done.example/cb', challenge)), {});
    expect((await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: u.session, body: { scopes: ['todos:read'] } })).status).toBe(200);
    const code = new URL((await waitPoll(app, page.handle!)).redirect!).searchParams.get('code')!;
    expect((await token(app, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: client.client_id })).status).toBe(200);
    const after = await openAuthorizeFrom(authorizeUrl(app, { client_id: client.client_id, response_type: 'x' }), {});
    expect(after.status).toBe(303);
    expect(new URL(after.location!).searchParams.get('error')).toBe('unsupported_response_type');
  });
});

describe('favicon (issue 28 item 14)', () => {
  it('/favicon.ico is a small icon, cached, revalidated by ETag, same origin', async () => {
    const r = await fetch(`${app.url}/favicon.ico`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/x-icon');
    expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = Buffer.from(await r.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(bytes.length).toBeLessThan(2048);
    const etag = r.headers.get('etag')!;
    const again = await fetch(`${app.url}/favicon.ico`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await fetch(`${app.url}/favicon.ico`, { method: 'HEAD' })).status).toBe(200);
    // Every page's CSP lets it load from self.
    for (const path of ['/app', '/docs/', '/errors']) expect((await fetch(app.url + path)).headers.get('content-security-policy')).toMatch(/img-src 'self'/);
  });
});
