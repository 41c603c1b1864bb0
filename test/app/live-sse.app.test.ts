// Issue 32 item 5 (docs/app.md "Live updates"): the `live.events` subscription over SSE, fed by the
// outbox, against the real server process (tsx server/main.ts): the project's own client from
// Node with the `eventsource` package, a change over /v1 arriving as an event, the headers and
// pings of the stream, first-party sessions only, at most 4 streams per account, the stream ending
// with its session, the server stopping promptly with streams open; then the web app in Chromium
// showing a to-do created over /v1 through the stream (the request list shows the SSE request,
// with the Authorization header and no token in its URL) without polling meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSource } from 'eventsource';
import type { Browser, Request as PwRequest, Response as PwResponse } from 'playwright-core';
import { createCairnClient, type CairnClient } from '../../client/index.js';
import { launchBrowser, noChromium, watchPage, ymd } from '../helpers/browser.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call, createPat, registerUser } from '../helpers/http.js';

type Msg = { id: string; data: { events: { type: string; id: string }[]; more: boolean } };
type Err = { message: string; data?: { code?: string; httpStatus?: number; problem?: { type?: string; detail?: string } } };

/** One subscription, recording what it got; `until` waits for a condition on it (no sleeps). */
function open(client: CairnClient, input?: { lastEventId?: string }) {
  const s = { messages: [] as Msg[], error: undefined as Err | undefined, started: false, completed: false, unsubscribe: () => {} };
  const waiters = new Set<() => void>();
  const changed = () => waiters.forEach((w) => w());
  const sub = client.live.events.subscribe(input, {
    onStarted: () => ((s.started = true), changed()),
    onData: (m) => (s.messages.push(m as Msg), changed()),
    onError: (e) => ((s.error = e as unknown as Err), changed()),
    onComplete: () => ((s.completed = true), changed()),
  });
  s.unsubscribe = () => sub.unsubscribe();
  const until = (what: string, ok: () => boolean, ms = 5_000) =>
    new Promise<void>((resolve, reject) => {
      if (ok()) return resolve();
      const t = setTimeout(() => (waiters.delete(w), reject(new Error(`timed out after ${ms} ms waiting for ${what}; got ${JSON.stringify({ messages: s.messages, error: s.error, completed: s.completed })}`))), ms);
      const w = () => {
        if (ok()) {
          clearTimeout(t);
          waiters.delete(w);
          resolve();
        }
      };
      waiters.add(w);
    });
  return { s, until };
}

const clientFor = (server: ServerProcess, token: string) => createCairnClient({ url: server.url, token, EventSource });

describe('live.events over SSE (a real server process)', () => {
  let server: ServerProcess;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-live-'));
    server = await startServerProcess(dataDir);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a change made over /v1 arrives as an event naming its type and id, and nothing else', async () => {
    const u = await registerUser(server);
    const other = await registerUser(server);
    const { s, until } = open(clientFor(server, u.session));
    await until('the first message', () => s.messages.length === 1);
    // The first message carries the starting cursor and no events.
    expect(s.messages[0]).toMatchObject({ data: { events: [], more: false } });
    expect(s.messages[0]!.id).toMatch(/^\d+$/);
    // Another account's change is not this stream's.
    expect((await call(server, 'POST', '/v1/todos', { token: other.session, body: { title: 'Not yours' } })).status).toBe(201);
    const t0 = Date.now();
    const r = await call(server, 'POST', '/v1/todos', { token: u.session, body: { title: 'Secret title over REST' } });
    expect(r.status).toBe(201);
    await until('the todo.created event', () => s.messages.some((m) => m.data.events.some((e) => e.id === r.body.id)));
    const latency = Date.now() - t0;
    expect(latency).toBeLessThan(5_000);
    const all = s.messages.flatMap((m) => m.data.events);
    expect(all).toEqual([{ type: 'todo.created', id: r.body.id }]);
    // Ids and types only: no content of the to-do travels in the stream.
    expect(JSON.stringify(s.messages)).not.toContain('Secret title');
    const cursor = s.messages.at(-1)!.id;
    expect(Number(cursor)).toBeGreaterThan(Number(s.messages[0]!.id));
    s.unsubscribe();

    // Resuming from a cursor replays what happened since.
    const patched = await call(server, 'PATCH', `/v1/todos/${r.body.id}`, { token: u.session, body: { title: 'Renamed' } });
    expect(patched.status).toBe(200);
    const again = open(clientFor(server, u.session), { lastEventId: cursor });
    await again.until('the replayed update', () => again.s.messages.length >= 1);
    expect(again.s.messages[0]!.data).toEqual({ events: [{ type: 'todo.updated', id: r.body.id }], more: false });
    again.s.unsubscribe();
    console.log(`[live-sse] /v1 create to event on the stream: ${latency} ms`);
  }, 30_000);

  it('the SSE answer carries a stream’s headers, the credential in the header only, and pings', async () => {
    const u = await registerUser(server);
    const ac = new AbortController();
    const res = await fetch(`${server.url}/trpc/live.events`, { headers: { Authorization: `Bearer ${u.session}`, Accept: 'text/event-stream' }, signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('content-encoding')).toBeNull();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // The connected event, the first message, then a ping (every 10 s, routers/trpc.ts `sse`).
    const deadline = Date.now() + 15_000;
    while (!text.includes('event: ping') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    ac.abort();
    expect(text).toContain('event: connected');
    expect(text).toContain('"reconnectAfterInactivityMs":25000');
    expect(text).toMatch(/data: \{"json":\{"events":\[\],"more":false\}\}\nid: \d+/);
    expect(text).toContain('event: ping');

    // No credential: the stream says unauthorized and ends.
    const anon = await fetch(`${server.url}/trpc/live.events`);
    const body = await anon.text();
    expect(body).toContain('event: serialized-error');
    expect(body).toContain('UNAUTHORIZED');
  }, 30_000);

  it('is for first-party sessions only: a personal token is refused with forbidden_scope', async () => {
    const u = await registerUser(server);
    const pat = await createPat(server, u.session, ['tasks:read', 'tasks:write', 'sessions:read']);
    const { s, until } = open(clientFor(server, pat.token));
    await until('the refusal', () => !!s.error);
    expect(s.error!.data).toMatchObject({ code: 'FORBIDDEN', httpStatus: 403 });
    expect(s.error!.data!.problem!.type).toMatch(/\/errors\/forbidden_scope$/);
    expect(s.messages).toEqual([]);
  }, 30_000);

  it('at most 4 streams per account: the 5th is refused with conflict, and a freed place can be taken again', async () => {
    const u = await registerUser(server);
    // Two sessions of the same account: the bound is per account, not per session.
    const second = (await call(server, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token as string;
    const streams = [0, 1, 2, 3].map((i) => open(clientFor(server, i % 2 ? second : u.session)));
    for (const x of streams) await x.until('the first message', () => x.s.messages.length === 1);
    const fifth = open(clientFor(server, u.session));
    await fifth.until('the refusal', () => !!fifth.s.error);
    expect(fifth.s.error!.data).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    expect(fifth.s.error!.data!.problem!.type).toMatch(/\/errors\/conflict$/);
    expect(fifth.s.error!.message).toContain('already has 4 live streams open');
    // Another account is not affected.
    const stranger = open(clientFor(server, (await registerUser(server)).session));
    await stranger.until('its first message', () => stranger.s.messages.length === 1);
    stranger.s.unsubscribe();
    // A stream closed by its client frees its place (the server sees the socket close).
    streams[0]!.s.unsubscribe();
    let sixth = open(clientFor(server, u.session));
    const deadline = Date.now() + 5_000;
    for (;;) {
      await sixth.until('an answer', () => sixth.s.messages.length > 0 || !!sixth.s.error);
      if (sixth.s.messages.length || Date.now() > deadline) break;
      sixth = open(clientFor(server, u.session));
    }
    expect(sixth.s.error).toBeUndefined();
    sixth.s.unsubscribe();
    for (const x of streams.slice(1)) x.s.unsubscribe();
  }, 30_000);

  it('the stream ends with its session: logout, and a password change made by another session', async () => {
    const u = await registerUser(server);
    const a = open(clientFor(server, u.session));
    await a.until('the first message', () => a.s.messages.length === 1);
    expect((await call(server, 'POST', '/v1/auth/logout', { token: u.session })).status).toBe(204);
    // Nothing else happens on the account: the periodic check (every 2 s) ends it.
    await a.until('the end of the stream', () => !!a.s.error, 5_000);
    expect(a.s.error!.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });

    const b = (await call(server, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token as string;
    const c = (await call(server, 'POST', '/v1/auth/login', { body: { email: u.email, password: u.password } })).body.token as string;
    const sb = open(clientFor(server, b));
    await sb.until('the first message', () => sb.s.messages.length === 1);
    const changed = await call(server, 'POST', '/v1/auth/password', { token: c, body: { currentPassword: u.password, newPassword: 'a brand new password 2' } });
    expect(changed.status).toBe(200);
    await sb.until('the end of the stream', () => !!sb.s.error, 5_000);
    expect(sb.s.error!.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    // The fresh session the change answered streams.
    const fresh = open(clientFor(server, changed.body.token as string));
    await fresh.until('the first message', () => fresh.s.messages.length === 1);
    fresh.s.unsubscribe();
  }, 30_000);

  it('the server stops promptly with streams open (SIGTERM ends them instead of waiting the grace period)', async () => {
    const u = await registerUser(server);
    const streams = [open(clientFor(server, u.session)), open(clientFor(server, u.session))];
    for (const x of streams) await x.until('the first message', () => x.s.messages.length === 1);
    const t0 = Date.now();
    await server.stop();
    const took = Date.now() - t0;
    const exit = await server.exited;
    // The grace period is 10 s (CAIRN_SHUTDOWN_GRACE_MS); the streams do not hold the process to it.
    expect(took).toBeLessThan(3_000);
    expect(exit.code).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
    for (const x of streams) await x.until('the end of the stream', () => x.s.completed || !!x.s.error);
    for (const x of streams) x.s.unsubscribe();
    console.log(`[live-sse] SIGTERM to exit with 2 streams open: ${took} ms`);
    // The rest of this file gets a fresh server on the same data.
    server = await startServerProcess(dataDir);
  }, 30_000);

  it('without an EventSource class the client refuses to subscribe, saying why', async () => {
    const u = await registerUser(server);
    const { s, until } = open(createCairnClient({ url: server.url, token: u.session }));
    await until('the error', () => !!s.error);
    expect(s.error!.message).toContain('Authorization header');
  });
});

describe.skipIf(noChromium('live-sse.app.test, browser part'))('the web app uses the stream (chromium, a real server process)', () => {
  let server: ServerProcess;
  let dataDir: string;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-live-app-'));
    server = await startServerProcess(dataDir);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a to-do created over /v1 appears without a reload, through the SSE stream and not polling', async () => {
    const u = await registerUser(server);
    const page = await (await browser.newContext()).newPage();
    const watch = watchPage(page);
    const requests: { at: number; req: PwRequest }[] = [];
    page.on('request', (req) => requests.push({ at: Date.now(), req }));
    const responses: PwResponse[] = [];
    page.on('response', (res) => responses.push(res));

    await page.goto(`${server.url}/app`);
    await page.getByLabel('Email').fill(u.email);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Today' }).click();
    await page.getByRole('heading', { level: 1, name: 'Today' }).waitFor();
    const token = (await page.evaluate<string | null>("localStorage.getItem('cairn.session')"))!;
    expect(token).toBeTruthy();

    // The stream: a GET to /trpc/live.events whose answer is an event stream.
    const isStream = (r: PwResponse) => new URL(r.url()).pathname === '/trpc/live.events' && r.status() === 200;
    await expect.poll(() => responses.some(isStream), { timeout: 10_000 }).toBe(true);
    const answered = responses.find(isStream)!;
    expect(answered.headers()['content-type']).toBe('text/event-stream');
    const sse = answered.request();
    expect(sse.method()).toBe('GET');
    expect((await sse.allHeaders()).authorization).toBe(`Bearer ${token}`);
    expect(sse.url()).not.toContain(token);
    expect(decodeURIComponent(sse.url())).not.toContain(token);
    // The stream's first message asks for the views again (what changed while they loaded): once
    // that refetch is seen, the stream is connected and the poll has stopped, so from the change on
    // no `todos.list` poll may be what brought the row.
    const sseAt = requests.find((x) => x.req === sse)!.at;
    await expect.poll(() => requests.some((x) => x.at >= sseAt && new URL(x.req.url()).pathname.includes('views.today')), { timeout: 5_000 }).toBe(true);
    const polls = () => requests.filter((r) => new URL(r.req.url()).pathname.includes('todos.list'));
    const before = polls().length;
    const created = Date.now();
    const r = await call(server, 'POST', '/v1/todos', { token: u.session, body: { title: 'Made over REST, live', whenDate: ymd(new Date()) } });
    expect(r.status).toBe(201);
    await page.getByRole('checkbox', { name: 'Made over REST, live' }).waitFor({ timeout: 5_000 });
    const shown = Date.now() - created;
    expect(polls().length).toBe(before);
    // The views were refetched after the change (the stream's message asked for it).
    expect(requests.some((x) => x.at >= created && new URL(x.req.url()).pathname.includes('views.today'))).toBe(true);
    // Still one stream; no token in any URL the page asked for.
    expect(requests.filter((x) => new URL(x.req.url()).pathname === '/trpc/live.events').length).toBe(1);
    for (const x of requests) expect(decodeURIComponent(x.req.url())).not.toContain(token);
    watch.assertClean();
    console.log(`[live-sse] /v1 create to the row in the page: ${shown} ms`);
    await page.close();
  }, 60_000);
});
