// Issue 16 (spec §2.12, §4.17, §6, §8.1; docs/webhooks.md): subscriptions over REST, deliveries
// through a real dispatcher to a loopback HTTPS receiver with a self-signed certificate, all time
// rules on the manual clock. Signatures are checked here by code written from spec §6.4.
import { createHmac } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { selfSignedCert, type Cert } from '../helpers/tls.js';
import { createDispatcher, type Dispatcher } from '../../server/webhooks/dispatcher.js';
import { recordEvent } from '../../routers/events.js';
import { purgeWebhookDeliveries } from '../../server/jobs/purge-webhooks.js';
import { SEND_DEADLINE_MS, SEND_MAX_READ_BYTES } from '../../routers/webhooks/constants.js';
import { webhooks } from '../../db/schema/index.js';
import { receiver, until, type Receiver } from './receiver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let cert: Cert;
let app: TestApp;
let d: Dispatcher;
const open: Receiver[] = [];

beforeAll(async () => {
  cert = selfSignedCert();
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { outbound: { ca: cert.cert } });
});
afterAll(async () => {
  d?.stop();
  for (const r of open) await r.close();
  await app.close();
});
beforeEach(() => {
  d?.stop();
  // The dispatcher serves every user: each test starts with no subscription left by another.
  app.deps.db.delete(webhooks).run();
  d = createDispatcher(app.deps);
});

async function rec(answer: Parameters<typeof receiver>[1] = 200) {
  const r = await receiver(cert, answer);
  open.push(r);
  return r;
}

async function user() {
  const u = await registerUser(app);
  return { ...u, token: u.session };
}

async function create(token: string, body: Record<string, unknown>) {
  const r = await call(app, 'POST', '/v1/webhooks', { token, body });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; secret: string; url: string; events: string[]; active: boolean };
}

/** Spec §6.4, written here from the text: `t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256(secret, `${t}.${raw body}`). */
function parseSig(header: string) {
  const parts = header.split(',').map((p) => p.split('=') as [string, string]);
  expect(parts[0]![0]).toBe('t');
  return { t: Number(parts[0]![1]), v1: parts.slice(1).map(([k, v]) => (expect(k).toBe('v1'), v)) };
}
function hmacHex(secret: string, t: number, body: string) {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

const deliveries = async (token: string, id: string) => {
  const r = await call(app, 'GET', `/v1/webhooks/${id}/deliveries?limit=200`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.data as { id: string; createdAt: string; eventId: string; eventType: string; status: string; attemptCount: number; nextAttemptAt: string | null; attempts: { at: string; status: number | null; latencyMs: number; errorClass: string | null }[] }[];
};

describe('subscriptions', () => {
  it('create shows the secret once (no-store), reads never show it; list, get, patch, delete', async () => {
    const u = await user();
    const r = await rec();
    const res = await call(app, 'POST', '/v1/webhooks', { token: u.token, body: { url: r.url(), events: ['todo.created', 'tag.created'], description: 'my hook' } });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ url: r.url(), events: ['todo.created', 'tag.created'], description: 'my hook', active: true, disabledAt: null });
    expect(res.body.id).toMatch(/^wh_[0-9a-f]{32}$/);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const id = res.body.id as string;

    const got = await call(app, 'GET', `/v1/webhooks/${id}`, { token: u.token });
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(got.text).not.toContain(res.body.secret);
    const list = await call(app, 'GET', '/v1/webhooks', { token: u.token });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([id]);
    expect(list.text).not.toContain(res.body.secret);
    // The secret is not in the database file as plaintext either (sealed under the master key).
    const raw = app.deps.db.$client.prepare('SELECT sealed_target FROM webhooks WHERE id = ?').get(id) as { sealed_target: Buffer };
    expect(raw.sealed_target.includes(Buffer.from(res.body.secret))).toBe(false);

    const p = await call(app, 'PATCH', `/v1/webhooks/${id}`, { token: u.token, body: { events: ['todo.deleted'], description: null } });
    expect(p.status, p.text).toBe(200);
    expect(p.body).toMatchObject({ events: ['todo.deleted'], description: null, url: r.url() });

    expect((await call(app, 'DELETE', `/v1/webhooks/${id}`, { token: u.token })).status).toBe(204);
    expectProblem(await call(app, 'GET', `/v1/webhooks/${id}`, { token: u.token }), 404, 'not_found');
  });

  it('validation problems carry pointers: https only, known events, non-empty, no unknown fields, private targets', async () => {
    const u = await user();
    const r = await rec();
    const bad = async (body: unknown, pointer: string) => {
      const p = expectProblem(await call(app, 'POST', '/v1/webhooks', { token: u.token, body }), 422, 'validation_failed');
      expect(p.errors?.map((e) => e.pointer)).toContain(pointer);
      return p;
    };
    await bad({ url: `http://127.0.0.1:${r.port}/`, events: ['todo.created'] }, '/url');
    await bad({ url: 'not a url', events: ['todo.created'] }, '/url');
    await bad({ events: ['todo.created'] }, '/url');
    await bad({ url: r.url(), events: [] }, '/events');
    await bad({ url: r.url(), events: ['todo.created', 'todo.completed'] }, '/events/1');
    await bad({ url: r.url(), events: ['todo.created', 'todo.created'] }, '/events/1');
    await bad({ url: r.url(), events: ['todo.created'], secret: 'whsec_mine' }, '/secret');
    await bad({ url: r.url(), events: ['todo.created'], description: 'x'.repeat(513) }, '/description');
    // The door's check at create: private and reserved addresses are refused (no connection is made).
    const p = await bad({ url: 'https://10.0.0.1/hook', events: ['todo.created'] }, '/url');
    expect(p.errors![0]!.message).toMatch(/public address/);
    await bad({ url: 'https://169.254.169.254/latest', events: ['todo.created'] }, '/url');
    await bad({ url: 'https://[fd00::1]/', events: ['todo.created'] }, '/url');
    const { id } = await create(u.token, { url: r.url(), events: ['todo.created'] });
    const pp = expectProblem(await call(app, 'PATCH', `/v1/webhooks/${id}`, { token: u.token, body: { url: 'https://192.168.1.1/' } }), 422, 'validation_failed');
    expect(pp.errors![0]!.pointer).toBe('/url');
    expectProblem(await call(app, 'GET', '/v1/webhooks/nope', { token: u.token }), 422, 'validation_failed');
  });

  it('loopback targets are refused without CAIRN_UNSAFE_ALLOW_LOOPBACK', async () => {
    const strict = await startApp({}, {}, { outbound: { ca: cert.cert } });
    try {
      const { session } = await registerUser(strict);
      const p = expectProblem(await call(strict, 'POST', '/v1/webhooks', { token: session, body: { url: 'https://127.0.0.1:9/', events: ['todo.created'] } }), 422, 'validation_failed');
      expect(p.errors![0]!.pointer).toBe('/url');
    } finally {
      await strict.close();
    }
  });

  it('needs webhooks:write for reads and writes; the tasks umbrellas never grant it', async () => {
    const u = await user();
    const r = await rec();
    const { id } = await create(u.token, { url: r.url(), events: ['todo.created'] });
    const umbrella = await createPat(app, u.session, ['tasks:read', 'tasks:write', 'sessions:write']);
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', `/v1/webhooks/${id}`],
      ['PATCH', `/v1/webhooks/${id}`],
      ['DELETE', `/v1/webhooks/${id}`],
      ['POST', `/v1/webhooks/${id}/rotate-secret`],
      ['POST', `/v1/webhooks/${id}/ping`],
      ['GET', `/v1/webhooks/${id}/deliveries`],
    ] as const) {
      const body = method === 'POST' && path === '/v1/webhooks' ? { url: r.url(), events: ['todo.created'] } : method === 'PATCH' ? { description: 'x' } : undefined;
      expectProblem(await call(app, method, path, { token: umbrella.token, ...(body ? { body } : {}) }), 403, 'forbidden_scope');
    }
    const scoped = await createPat(app, u.session, ['webhooks:write']);
    expect((await call(app, 'GET', `/v1/webhooks/${id}`, { token: scoped.token })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/webhooks', { token: scoped.token })).status).toBe(200);
    await create(scoped.token, { url: r.url(), events: ['todo.created'] });
  });

  it('isolation: user B never sees, changes or redelivers user A\'s webhooks and deliveries', async () => {
    const a = await user();
    const b = await user();
    const r = await rec();
    const { id } = await create(a.token, { url: r.url(), events: ['todo.created'] });
    await d.settle();
    const [ping] = await deliveries(a.token, id);
    expect(ping).toBeDefined();
    expect((await call(app, 'GET', '/v1/webhooks', { token: b.token })).body.data).toEqual([]);
    expectProblem(await call(app, 'GET', `/v1/webhooks/${id}`, { token: b.token }), 404, 'not_found');
    expectProblem(await call(app, 'PATCH', `/v1/webhooks/${id}`, { token: b.token, body: { active: true } }), 404, 'not_found');
    expectProblem(await call(app, 'POST', `/v1/webhooks/${id}/rotate-secret`, { token: b.token }), 404, 'not_found');
    expectProblem(await call(app, 'POST', `/v1/webhooks/${id}/ping`, { token: b.token }), 404, 'not_found');
    expectProblem(await call(app, 'GET', `/v1/webhooks/${id}/deliveries`, { token: b.token }), 404, 'not_found');
    expectProblem(await call(app, 'POST', `/v1/webhooks/${id}/deliveries/${ping!.id}/redeliver`, { token: b.token }), 404, 'not_found');
    // B's own subscription cannot reach A's delivery either.
    const own = await create(b.token, { url: r.url(), events: ['todo.created'] });
    expectProblem(await call(app, 'POST', `/v1/webhooks/${own.id}/deliveries/${ping!.id}/redeliver`, { token: b.token }), 404, 'not_found');
    expectProblem(await call(app, 'DELETE', `/v1/webhooks/${id}`, { token: b.token }), 404, 'not_found');
    // A's events never reach B's subscription.
    const before = (await deliveries(b.token, own.id)).length;
    recordEvent(app.deps, { userId: a.userId, type: 'todo.created', id: 'A-TODO', at: app.clock() });
    await d.settle();
    expect((await deliveries(b.token, own.id)).length).toBe(before);
    expect((await deliveries(a.token, id)).map((x) => x.eventType)).toContain('todo.created');
  });

  it('an Idempotency-Key retry of POST /v1/webhooks creates nothing more and never shows the secret again', async () => {
    const u = await user();
    const r = await rec();
    const body = { url: r.url(), events: ['todo.created'] };
    const first = await call(app, 'POST', '/v1/webhooks', { token: u.token, body, headers: { 'Idempotency-Key': 'wh-create-1' } });
    expect(first.status, first.text).toBe(201);
    const again = await call(app, 'POST', '/v1/webhooks', { token: u.token, body, headers: { 'Idempotency-Key': 'wh-create-1' } });
    const p = expectProblem(again, 409, 'conflict');
    expect(p.detail).toContain(first.body.id);
    expect(again.text).not.toContain(first.body.secret);
    expect((await call(app, 'GET', '/v1/webhooks', { token: u.token })).body.data).toHaveLength(1);
  });

  it('POST /v1/webhooks is limited to 20 per hour per user', async () => {
    const limited = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1', CAIRN_RATE_LIMIT_FACTOR: '1' }, {}, { outbound: { ca: cert.cert } });
    try {
      const r = await rec();
      const { session } = await registerUser(limited);
      for (let i = 0; i < 20; i++) {
        const res = await call(limited, 'POST', '/v1/webhooks', { token: session, body: { url: r.url(), events: ['todo.created'] } });
        expect(res.status, res.text).toBe(201);
      }
      const p = await call(limited, 'POST', '/v1/webhooks', { token: session, body: { url: r.url(), events: ['todo.created'] } });
      expectProblem(p, 429, 'rate_limited');
      expect(Number(p.headers.get('retry-after'))).toBeGreaterThan(0);
      limited.clock.advance(HOUR);
      expect((await call(limited, 'POST', '/v1/webhooks', { token: session, body: { url: r.url(), events: ['todo.created'] } })).status).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('deliveries', () => {
  it('a ping at create, then one delivery per matching subscription, exact envelope, headers and a signature checked from the spec', async () => {
    const u = await user();
    const r = await rec();
    const other = await rec();
    const w = await create(u.token, { url: r.url(), events: ['tag.created'] });
    const w2 = await create(u.token, { url: other.url(), events: ['todo.created'] });
    await d.settle();
    expect(r.got.map((g) => g.headers['x-service-event'])).toEqual(['webhook.ping']);
    const ping = JSON.parse(r.got[0]!.body);
    expect(ping).toEqual({ id: expect.stringMatching(/^evt_/), type: 'webhook.ping', occurredAt: new Date(app.clock()).toISOString(), data: { object: 'webhook', id: w.id, sub: u.userId } });

    app.clock.advance(1234);
    const tag = await call(app, 'POST', '/v1/tags', { token: u.token, body: { name: 'urgent-secret-name' } });
    expect(tag.status, tag.text).toBeLessThan(300);
    await d.settle();
    expect(r.got).toHaveLength(2);
    const g = r.got[1]!;
    const env = JSON.parse(g.body);
    expect(Object.keys(env)).toEqual(['id', 'type', 'occurredAt', 'data']);
    expect(env).toEqual({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), type: 'tag.created', occurredAt: new Date(app.clock()).toISOString(), data: { object: 'tag', id: tag.body.id, sub: u.userId } });
    expect(g.body).not.toContain('urgent-secret-name');
    expect(g.headers['x-service-event-id']).toBe(env.id);
    expect(g.headers['x-service-event']).toBe('tag.created');
    expect(g.headers['content-type']).toBe('application/json');
    const sig = parseSig(String(g.headers['x-service-signature']));
    expect(sig.t).toBe(Math.floor(app.clock() / 1000));
    expect(sig.v1).toEqual([hmacHex(w.secret, sig.t, g.body)]);
    // Not the other subscription (it wants todo.created only), and never twice.
    expect(other.got.map((x) => x.headers['x-service-event'])).toEqual(['webhook.ping']);
    await d.settle();
    expect(r.got).toHaveLength(2);
    const log = await deliveries(u.token, w.id);
    expect(log.map((x) => [x.eventType, x.status, x.attemptCount])).toEqual([
      ['tag.created', 'delivered', 1],
      ['webhook.ping', 'delivered', 1],
    ]);
    expect(log[0]!.attempts[0]).toMatchObject({ at: new Date(app.clock()).toISOString(), status: 200, errorClass: null });
    expect(JSON.stringify(log)).not.toContain('secret receiver body');
    // On-demand ping.
    const p = await call(app, 'POST', `/v1/webhooks/${w2.id}/ping`, { token: u.token });
    expect(p.status, p.text).toBe(201);
    await d.settle();
    expect(other.got.map((x) => x.headers['x-service-event'])).toEqual(['webhook.ping', 'webhook.ping']);
    expect(JSON.parse(other.got[1]!.body).id).toBe(p.body.eventId);
  });

  it('rotation: both secrets sign for 24 hours, then only the new one; each attempt signs afresh', async () => {
    const u = await user();
    const r = await rec();
    const w = await create(u.token, { url: r.url(), events: ['todo.created'] });
    await d.settle();
    const rot = await call(app, 'POST', `/v1/webhooks/${w.id}/rotate-secret`, { token: u.token });
    expect(rot.status, rot.text).toBe(200);
    expect(rot.headers.get('cache-control')).toBe('no-store');
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(w.secret);
    expect(rot.body.previousSecretExpiresAt).toBe(new Date(app.clock() + DAY).toISOString());

    app.clock.advance(DAY - 1000);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'T1', at: app.clock() });
    await d.settle();
    let g = r.got.at(-1)!;
    let sig = parseSig(String(g.headers['x-service-signature']));
    expect(sig.t).toBe(Math.floor(app.clock() / 1000));
    expect(sig.v1).toEqual([hmacHex(rot.body.secret, sig.t, g.body), hmacHex(w.secret, sig.t, g.body)]);

    app.clock.advance(1000);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'T2', at: app.clock() });
    await d.settle();
    g = r.got.at(-1)!;
    sig = parseSig(String(g.headers['x-service-signature']));
    expect(sig.v1).toEqual([hmacHex(rot.body.secret, sig.t, g.body)]);
  });

  it('retries at +1, +5, +30 min, +2 h, +8 h, then every 8 h, to the minute; disabled at three days with the webhook.disabled fan-out', async () => {
    const u = await user();
    const failing = await rec(500);
    const witness = await rec(200);
    const t0 = app.clock();
    const w = await create(u.token, { url: failing.url(), events: ['todo.created'] });
    const other = await create(u.token, { url: witness.url(), events: ['todo.created'] });
    await d.settle();
    expect(failing.got).toHaveLength(1);
    const expected = [0, 1, 6, 36, 156, 636, 1116, 1596, 2076, 2556, 3036, 3516, 3996, 4320];
    for (const at of expected.slice(1)) {
      const seen = failing.got.length;
      app.clock.set(t0 + at * MIN - MIN);
      await d.settle();
      expect(failing.got.length, `nothing before minute ${at}`).toBe(seen);
      app.clock.set(t0 + at * MIN);
      await d.settle();
      expect(failing.got.length, `an attempt at minute ${at}`).toBe(seen + 1);
    }
    const [ping] = await deliveries(u.token, w.id);
    expect(ping!.attempts.map((a) => (Date.parse(a.at) - t0) / MIN)).toEqual(expected);
    expect(ping!.attempts.every((a) => a.status === 500 && a.errorClass === 'http_status')).toBe(true);
    expect(ping!.status).toBe('failed');
    // Same event id on every attempt.
    expect(new Set(failing.got.map((g) => g.headers['x-service-event-id'])).size).toBe(1);
    const sub = (await call(app, 'GET', `/v1/webhooks/${w.id}`, { token: u.token })).body;
    expect(sub).toMatchObject({ active: false, disabledAt: new Date(t0 + 4320 * MIN).toISOString() });
    // The other subscription got webhook.disabled naming it; /v1/me is not flagged (someone was told).
    const notice = witness.got.find((g) => g.headers['x-service-event'] === 'webhook.disabled');
    expect(JSON.parse(notice!.body)).toMatchObject({ type: 'webhook.disabled', data: { object: 'webhook', id: w.id, sub: u.userId } });
    expect((await call(app, 'GET', '/v1/me', { token: u.token })).body.webhooks).toEqual({ disabled: false, disabledAt: null });
    // No more attempts once disabled, whatever the time.
    app.clock.advance(DAY);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'AFTER', at: app.clock() });
    await d.settle();
    expect(failing.got).toHaveLength(expected.length);

    // With no other active subscription, /v1/me reports it; PATCH active:true re-activates and clears it.
    expect((await call(app, 'DELETE', `/v1/webhooks/${other.id}`, { token: u.token })).status).toBe(204);
    const re = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, { token: u.token, body: { active: true } });
    expect(re.body).toMatchObject({ active: true, disabledAt: null });
    const t1 = app.clock();
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'AGAIN', at: t1 });
    await d.settle();
    for (let i = 0; i < 40 && (await call(app, 'GET', `/v1/webhooks/${w.id}`, { token: u.token })).body.active; i++) {
      const next = (await deliveries(u.token, w.id)).find((x) => x.status === 'pending')!.nextAttemptAt!;
      app.clock.set(Date.parse(next));
      await d.settle();
    }
    const me = (await call(app, 'GET', '/v1/me', { token: u.token })).body.webhooks;
    expect(me).toEqual({ disabled: true, disabledAt: new Date(t1 + 3 * DAY).toISOString() });
    await call(app, 'PATCH', `/v1/webhooks/${w.id}`, { token: u.token, body: { active: true } });
    expect((await call(app, 'GET', '/v1/me', { token: u.token })).body.webhooks).toEqual({ disabled: false, disabledAt: null });
  });

  it('a success ends the failure streak', async () => {
    const u = await user();
    const r = await rec(503);
    const t0 = app.clock();
    const w = await create(u.token, { url: r.url(), events: ['todo.created'] });
    await d.settle();
    app.clock.set(t0 + 2 * DAY);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'X', at: app.clock() });
    await d.settle();
    const streak = () => app.deps.db.select().from(webhooks).where(eq(webhooks.id, w.id)).get()!.failingSince;
    expect(streak()).toBe(t0);
    r.answer = 200;
    app.clock.set(t0 + 2 * DAY + MIN);
    await d.settle();
    expect(streak()).toBeNull();
    // The ping still in its series keeps going; a new failure later starts a new streak, so three
    // days after the first failure the subscription is still active.
    r.answer = 500;
    app.clock.set(t0 + 3 * DAY + HOUR);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'Y', at: app.clock() });
    await d.settle();
    expect(streak()).toBe(t0 + 3 * DAY + HOUR);
    expect((await call(app, 'GET', `/v1/webhooks/${w.id}`, { token: u.token })).body.active).toBe(true);
  });

  it('a 3xx is a failure and is never followed', async () => {
    const u = await user();
    const target = await rec(200);
    const r = await rec({ redirect: target.url('/elsewhere') });
    const w = await create(u.token, { url: r.url('/moved'), events: ['todo.created'] });
    await d.settle();
    expect(r.got.map((g) => g.path)).toEqual(['/moved']);
    expect(target.got).toEqual([]);
    const [ping] = await deliveries(u.token, w.id);
    expect(ping!.attempts).toEqual([expect.objectContaining({ status: 302, errorClass: 'redirect' })]);
    expect(ping!.status).toBe('pending');
  });

  it('a receiver that hangs does not delay another subscription', async () => {
    const u = await user();
    const hang = await rec('hang');
    const fine = await rec(200);
    try {
    const h = await create(u.token, { url: hang.url(), events: ['todo.created'] });
    d.tick(); // the hanging ping is in flight
    await until(() => hang.got.length === 1);
    for (let i = 0; i < 40; i++) recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: `H${i}`, at: app.clock() });
    d.tick();
    await until(() => hang.got.length === 2); // its second slot taken too; 39 more (longer than one query page of due rows) wait
    const f = await create(u.token, { url: fine.url(), events: ['todo.created'] });
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'F', at: app.clock() });
    d.tick();
    await until(() => fine.got.length === 2 && d.inFlight() === 2);
    expect(fine.got.map((g) => g.headers['x-service-event'])).toEqual(['webhook.ping', 'todo.created']);
    expect(hang.got).toHaveLength(2);
    expect(d.inFlight()).toBe(2);
    const log = await deliveries(u.token, f.id);
    expect(log.every((x) => x.status === 'delivered')).toBe(true);
    // Let the hung sends end (the receiver drops them) so nothing is left running.
    await hang.close();
    await d.settle();
    const hl = await deliveries(u.token, h.id);
    expect(hl.filter((x) => x.attempts.length).every((x) => x.attempts[0]!.errorClass === 'network')).toBe(true);
    } finally {
      await hang.close();
    }
  });

  it('keeps the last 100 deliveries per subscription and purges those older than 30 days', async () => {
    const u0 = await user();
    // A session lives 30 days; this test's clock goes past that.
    const u = { ...u0, token: (await createPat(app, u0.session, ['webhooks:write'], 365)).token };
    const r = await rec(200);
    const w = await create(u.token, { url: r.url(), events: ['todo.created'] });
    await d.settle();
    const t0 = app.clock();
    for (let i = 0; i < 105; i++) {
      app.clock.advance(1);
      recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: `C${i}`, at: app.clock() });
    }
    await d.settle();
    let log = await deliveries(u.token, w.id);
    expect(log).toHaveLength(100);
    expect(log.some((x) => x.eventType === 'webhook.ping')).toBe(false);
    expect(r.got).toHaveLength(106);
    // Paging over the log.
    const page = await call(app, 'GET', `/v1/webhooks/${w.id}/deliveries?limit=60`, { token: u.token });
    expect(page.body.data).toHaveLength(60);
    const rest = await call(app, 'GET', `/v1/webhooks/${w.id}/deliveries?limit=60&cursor=${encodeURIComponent(page.body.next_cursor)}`, { token: u.token });
    expect(rest.body.data).toHaveLength(40);
    expect(rest.body.next_cursor).toBeNull();

    app.clock.set(t0 + 10 * DAY);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'LATER', at: app.clock() });
    await d.settle();
    // The job is global (other tests' rows are older): this subscription's log is what is checked.
    app.clock.set(t0 + 30 * DAY + 105);
    purgeWebhookDeliveries(app.deps);
    expect(await deliveries(u.token, w.id)).toHaveLength(100); // the cap dropped one finished entry for LATER
    app.clock.set(t0 + 30 * DAY + 106);
    expect(purgeWebhookDeliveries(app.deps)).toBeGreaterThanOrEqual(99);
    log = await deliveries(u.token, w.id);
    expect(log.map((x) => x.eventType)).toEqual(['todo.created']);
    expect(log[0]!.createdAt).toBe(new Date(t0 + 10 * DAY).toISOString());
  });

  it('redeliver sends the same event id again now; a failed redelivery is one attempt, not a new series', async () => {
    const u = await user();
    const r = await rec(200);
    const w = await create(u.token, { url: r.url(), events: ['todo.created'] });
    await d.settle();
    const [ping] = await deliveries(u.token, w.id);
    app.clock.advance(5 * MIN);
    const rd = await call(app, 'POST', `/v1/webhooks/${w.id}/deliveries/${ping!.id}/redeliver`, { token: u.token });
    expect(rd.status, rd.text).toBe(200);
    expect(rd.body).toMatchObject({ id: ping!.id, eventId: ping!.eventId, status: 'pending', nextAttemptAt: new Date(app.clock()).toISOString() });
    await d.settle();
    expect(r.got).toHaveLength(2);
    expect(r.got[1]!.headers['x-service-event-id']).toBe(ping!.eventId);
    expect(r.got[1]!.body).toBe(r.got[0]!.body);
    expect(parseSig(String(r.got[1]!.headers['x-service-signature'])).t).toBe(Math.floor(app.clock() / 1000));
    let [again] = await deliveries(u.token, w.id);
    expect(again).toMatchObject({ status: 'delivered', attemptCount: 2 });

    r.answer = 500;
    await call(app, 'POST', `/v1/webhooks/${w.id}/deliveries/${ping!.id}/redeliver`, { token: u.token });
    await d.settle();
    [again] = await deliveries(u.token, w.id);
    expect(again).toMatchObject({ status: 'failed', attemptCount: 3, nextAttemptAt: null });
    app.clock.advance(DAY);
    await d.settle();
    expect(r.got).toHaveLength(3);
    expectProblem(await call(app, 'POST', `/v1/webhooks/${w.id}/deliveries/whd_${'0'.repeat(32)}/redeliver`, { token: u.token }), 404, 'not_found');
    expectProblem(await call(app, 'POST', `/v1/webhooks/${w.id}/deliveries/nope/redeliver`, { token: u.token }), 422, 'validation_failed');
  });
});

describe('sending limits', () => {
  it('the send deadline is 10 s; a receiver past it is a timeout (shortened here so the test does not wait 10 s)', async () => {
    expect(SEND_DEADLINE_MS).toBe(10_000);
    const u = await user();
    const hang = await rec('hang');
    try {
      d.stop();
      d = createDispatcher(app.deps, { sendDeadlineMs: 300 });
      const w = await create(u.token, { url: hang.url(), events: ['todo.created'] });
      await d.settle();
      const [ping] = await deliveries(u.token, w.id);
      expect(ping!.attempts).toEqual([expect.objectContaining({ status: null, errorClass: 'timeout' })]);
      expect(ping!.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(250);
      expect(ping!.status).toBe('pending');
    } finally {
      await hang.close();
    }
  });

  it('reads at most 64 KB of an answer and then closes it (an endless 200 body is delivered, not a timeout)', async () => {
    expect(SEND_MAX_READ_BYTES).toBe(64 * 1024);
    const u = await user();
    let written = 0;
    let closedByUs = false;
    const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pump = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      res.on('close', () => (closedByUs = !res.writableEnded));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      d.stop();
      d = createDispatcher(app.deps, { sendDeadlineMs: 5_000 });
      const w = await create(u.token, { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, events: ['todo.created'] });
      await d.settle();
      const [ping] = await deliveries(u.token, w.id);
      expect(ping).toMatchObject({ status: 'delivered' });
      expect(ping!.attempts[0]).toMatchObject({ status: 200, errorClass: null });
      expect(ping!.attempts[0]!.latencyMs).toBeLessThan(5_000);
      await until(() => closedByUs);
      expect(written).toBeGreaterThanOrEqual(64 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('PATCH active:false pauses: nothing is sent and events make no deliveries until active:true', async () => {
    const u = await user();
    const r = await rec(200);
    const w = await create(u.token, { url: r.url(), events: ['todo.created'] });
    const off = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, { token: u.token, body: { active: false } });
    expect(off.body.active).toBe(false);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'WHILE-PAUSED', at: app.clock() });
    await d.settle();
    expect(r.got).toEqual([]);
    expectProblem(await call(app, 'POST', `/v1/webhooks/${w.id}/ping`, { token: u.token }), 409, 'conflict');
    await call(app, 'PATCH', `/v1/webhooks/${w.id}`, { token: u.token, body: { active: true } });
    await d.settle();
    expect(r.got.map((g) => g.headers['x-service-event'])).toEqual(['webhook.ping']);
  });
});

describe('key rotation', () => {
  it('a data-key rotation re-seals the description; deliveries (master key) go on unchanged', async () => {
    const u = await user();
    const r = await rec(200);
    const w = await create(u.token, { url: r.url(), events: ['todo.created'], description: 'survives rotation' });
    await d.settle();
    const rot = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    expect(rot.status, rot.text).toBe(200);
    const got = await call(app, 'GET', `/v1/webhooks/${w.id}`, { token: rot.body.token });
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ description: 'survives rotation', url: r.url() });
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'AFTER-ROTATION', at: app.clock() });
    await d.settle();
    const last = r.got.at(-1)!;
    const sig = parseSig(String(last.headers['x-service-signature']));
    expect(sig.v1).toEqual([hmacHex(w.secret, sig.t, last.body)]);
  });
});
