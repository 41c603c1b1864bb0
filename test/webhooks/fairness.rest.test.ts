// Issue 28 item 2 (docs/webhooks.md "Concurrency and fairness", "Receivers that hang", "Backlog",
// "Rate limits"): one account's receivers that accept and never answer must not delay another
// account's deliveries; ping and redeliver have route buckets; a failing subscription's backlog is
// capped; a subscription whose attempts time out is held, then probed one send at a time.
// Real dispatchers send to loopback HTTPS receivers; time rules move the manual clock. Where a
// send must hang, the receiver holds it open and the test reads the dispatcher's own state (what
// is in flight, which attempts are recorded), never a wall-clock duration.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { count, eq, isNull, and } from 'drizzle-orm';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { selfSignedCert, type Cert } from '../helpers/tls.js';
import { createDispatcher, fanOut, type Dispatcher } from '../../server/webhooks/dispatcher.js';
import { recordEvent } from '../../routers/events.js';
import { outbox, webhookAttempts, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import { CONCURRENCY_OVERALL, CONCURRENCY_PER_USER, MAX_PENDING_WHILE_FAILING, SEND_DEADLINE_MS } from '../../routers/webhooks/constants.js';
import { receiver, until, type Answer, type Receiver } from './receiver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/**
 * The shortened send deadline (real time) of the timeout tests: a hanging send must have reached
 * the receiver (connect, TLS handshake, the request sent and read to its end) before it passes,
 * or the receiver records nothing and the counts below are short. 150-200 ms left a loaded 2-core
 * runner little margin for that; 1 s leaves plenty. Each timed-out send costs this much real
 * time (the three-day test waits out 14 of them, one after another).
 */
const TIMEOUT_DEADLINE_MS = 1_000;

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
  // The dispatcher serves every user: each test starts with no subscription (nor backlog) of another.
  app.deps.db.delete(webhooks).run();
  app.deps.db.update(outbox).set({ dispatchedAt: app.clock() }).where(isNull(outbox.dispatchedAt)).run();
});

async function rec(answer: Answer = 200) {
  const r = await receiver(cert, answer);
  open.push(r);
  return r;
}

async function user(a: TestApp = app) {
  const u = await registerUser(a);
  return { ...u, token: u.session };
}

async function create(token: string, url: string, a: TestApp = app) {
  const r = await call(a, 'POST', '/v1/webhooks', { token, body: { url, events: ['todo.created'] } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string };
}

type DeliveryOut = { id: string; eventId: string; eventType: string; status: string; attemptCount: number; nextAttemptAt: string | null; dropped: boolean; createdAt: string; attempts: { at: string; status: number | null; errorClass: string | null }[] };
async function deliveries(token: string, id: string): Promise<DeliveryOut[]> {
  const r = await call(app, 'GET', `/v1/webhooks/${id}/deliveries?limit=200`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

/** Attempts recorded (ended sends) of a user's deliveries. */
const attemptsOf = (userId: string) =>
  app.deps.db.select({ n: count() }).from(webhookAttempts).innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId)).where(eq(webhookDeliveries.userId, userId)).get()!.n;

const subRow = (id: string) => app.deps.db.select().from(webhooks).where(eq(webhooks.id, id)).get()!;

const todoEvents = (userId: string, n: number, prefix: string) => {
  app.deps.db.$client.transaction(() => {
    for (let i = 0; i < n; i++) recordEvent(app.deps, { userId, type: 'todo.created', id: `${prefix}${i}`, at: app.clock() });
  })();
};

describe('the attack of issue 28: another account\'s receivers accept and never answer', () => {
  /**
   * A points `subs` subscriptions at a receiver that never answers and has a backlog of 40 events
   * on each; B has one subscription at a receiver that answers at once. B's ping, then B's event,
   * are each delivered in one dispatcher tick while every send of A is still hanging (none of A's
   * attempts has ended: A's 10-second deadline has not passed), so B waits for none of A's sends.
   */
  async function attack(dispatcher: Dispatcher, subs: number) {
    d = dispatcher;
    const a = await user();
    const b = await user();
    const hang = await rec('hang');
    const fine = await rec(200);
    try {
      for (let i = 0; i < subs; i++) await create(a.token, hang.url(`/a${i}`));
      todoEvents(a.userId, 40, 'A');
      app.clock.advance(1); // B's deliveries are younger than all of A's
      const bw = await create(b.token, fine.url('/b'));

      d.tick();
      await until(() => fine.got.length === 1 && d.inFlightOf(b.userId) === 0);
      const aOut = d.inFlightOf(a.userId);
      expect(aOut).toBe(Math.min(CONCURRENCY_PER_USER, 2 * subs));
      await until(() => hang.got.length === aOut); // they did reach A's receiver, and hang there

      recordEvent(app.deps, { userId: b.userId, type: 'todo.created', id: 'B-TODO', at: app.clock() });
      d.tick(); // one tick: B's event is fanned out and sent
      await until(() => fine.got.length === 2 && d.inFlightOf(b.userId) === 0);

      expect(fine.got.map((g) => g.headers['x-service-event'])).toEqual(['webhook.ping', 'todo.created']);
      const log = await deliveries(b.token, bw.id);
      expect(log.map((x) => [x.eventType, x.status, x.attemptCount])).toEqual(
        expect.arrayContaining([
          ['webhook.ping', 'delivered', 1],
          ['todo.created', 'delivered', 1],
        ]),
      );
      // Made at the same dispatcher time A's sends started, with all of them still out: not one of
      // A's attempts has ended (each would end only at its 10 s deadline, or when the receiver drops it).
      expect(log.every((x) => Date.parse(x.attempts[0]!.at) === app.clock())).toBe(true);
      expect(attemptsOf(a.userId)).toBe(0);
      expect(hang.got).toHaveLength(aOut);
      expect(d.inFlightOf(a.userId)).toBe(aOut);
      expect(d.inFlight()).toBe(aOut);
    } finally {
      app.deps.db.delete(webhooks).where(eq(webhooks.userId, a.userId)).run();
      await hang.close();
    }
  }

  it('with the slots of the issue (8 overall): A\'s four subscriptions hold 4, B is delivered while they hang', async () => {
    expect(SEND_DEADLINE_MS).toBe(10_000);
    await attack(createDispatcher(app.deps, { overall: 8 }), 4);
  });

  it('with the shipped bounds and A at the 25-subscription maximum: A holds 4 of 16, B is delivered while they hang', async () => {
    expect([CONCURRENCY_OVERALL, CONCURRENCY_PER_USER]).toEqual([16, 4]);
    await attack(createDispatcher(app.deps), 25);
  });

  it('round-robin: a free slot goes to the user with fewer sends out, not to the oldest backlog', async () => {
    // Two slots, either user allowed both: only the turn-taking keeps B from waiting behind A.
    d = createDispatcher(app.deps, { overall: 2, perUser: 2 });
    const a = await user();
    const b = await user();
    const hang = await rec('hang');
    const fine = await rec(200);
    try {
      await create(a.token, hang.url());
      todoEvents(a.userId, 10, 'A');
      app.clock.advance(1);
      await create(b.token, fine.url());
      d.tick();
      await until(() => fine.got.length === 1 && d.inFlightOf(b.userId) === 0);
      expect(d.inFlightOf(a.userId)).toBe(1);
      recordEvent(app.deps, { userId: b.userId, type: 'todo.created', id: 'B1', at: app.clock() });
      d.tick(); // one slot is free: B (nothing out) gets it before A (one out, eleven due)
      await until(() => fine.got.length === 2 && d.inFlightOf(b.userId) === 0);
      expect(attemptsOf(a.userId)).toBe(0);
      expect(hang.got).toHaveLength(1);
    } finally {
      app.deps.db.delete(webhooks).where(eq(webhooks.userId, a.userId)).run();
      await hang.close();
    }
  });

  it('a flood of one account\'s events does not hold back another\'s fan-out', async () => {
    d = createDispatcher(app.deps);
    const a = await user();
    const b = await user();
    const hang = await rec('hang');
    const fine = await rec(200);
    try {
      await create(a.token, hang.url());
      await create(b.token, fine.url());
      // More of A's events than one tick's fan-out moves (20 batches of 500), all before B's.
      todoEvents(a.userId, 10_001, 'A');
      recordEvent(app.deps, { userId: b.userId, type: 'todo.created', id: 'B-AFTER-FLOOD', at: app.clock() });
      d.tick();
      await until(() => fine.got.length === 2 && d.inFlightOf(b.userId) === 0);
      expect(fine.got.map((g) => g.headers['x-service-event']).sort()).toEqual(['todo.created', 'webhook.ping']);
      // A's flood is still being moved, a share per tick.
      const left = app.deps.db.select({ n: count() }).from(outbox).where(and(eq(outbox.userId, a.userId), isNull(outbox.dispatchedAt))).get()!.n;
      expect(left).toBeGreaterThan(0);
    } finally {
      app.deps.db.delete(webhooks).where(eq(webhooks.userId, a.userId)).run();
      app.deps.db.update(outbox).set({ dispatchedAt: app.clock() }).where(isNull(outbox.dispatchedAt)).run();
      await hang.close();
    }
  });
});

describe('a subscription whose attempts time out is held, then probed one send at a time', () => {
  it('holds it 1 min, 5 min, … after consecutive timeouts; a ping lifts the hold; a 2xx ends it and sends the backlog at once', async () => {
    d = createDispatcher(app.deps, { sendDeadlineMs: TIMEOUT_DEADLINE_MS });
    const u = await user();
    const r = await rec('hang');
    const t0 = app.clock();
    const w = await create(u.token, r.url());
    await d.settle();
    expect(r.got).toHaveLength(1); // the ping, timed out
    expect(subRow(w.id)).toMatchObject({ timeouts: 1, heldUntil: t0 + MIN });

    // Held: five new events make deliveries, but nothing is sent, and the log says when it will be.
    todoEvents(u.userId, 5, 'T');
    await d.settle();
    expect(r.got).toHaveLength(1);
    let log = await deliveries(u.token, w.id);
    expect(log).toHaveLength(6);
    expect(log.every((x) => x.status === 'pending' && x.nextAttemptAt === new Date(t0 + MIN).toISOString())).toBe(true);

    // At the end of the hold, one probe (not the per-subscription two, not all six); it times out
    // again and the hold is longer.
    app.clock.set(t0 + MIN - 1);
    await d.settle();
    expect(r.got).toHaveLength(1);
    app.clock.set(t0 + MIN);
    await d.settle();
    expect(r.got).toHaveLength(2);
    expect(subRow(w.id)).toMatchObject({ timeouts: 2, heldUntil: t0 + 6 * MIN });
    app.clock.set(t0 + 6 * MIN);
    await d.settle();
    expect(r.got).toHaveLength(3);
    expect(subRow(w.id)).toMatchObject({ timeouts: 3, heldUntil: t0 + 36 * MIN });

    // The receiver is fixed. A ping lifts the hold at once; the probe gets a 2xx, the hold ends,
    // and everything held back is sent now, not at its own retry time.
    r.answer = 200;
    app.clock.advance(MIN);
    const ping = await call(app, 'POST', `/v1/webhooks/${w.id}/ping`, { token: u.token });
    expect(ping.status, ping.text).toBe(201);
    expect(ping.body.nextAttemptAt).toBe(new Date(app.clock()).toISOString());
    await d.settle();
    log = await deliveries(u.token, w.id);
    expect(log).toHaveLength(7);
    expect(log.map((x) => x.status)).toEqual(Array(7).fill('delivered'));
    expect(r.got).toHaveLength(3 + 7);
    expect(subRow(w.id)).toMatchObject({ timeouts: 0, heldUntil: null, failingSince: null });
  });

  it('a receiver that always hangs gets one probe per hold, and is still disabled at three days to the minute', async () => {
    d = createDispatcher(app.deps, { sendDeadlineMs: TIMEOUT_DEADLINE_MS });
    const u = await user();
    const r = await rec('hang');
    const t0 = app.clock();
    const w = await create(u.token, r.url());
    todoEvents(u.userId, 3, 'H'); // four deliveries pending: each alone would keep its own retry series
    await d.settle();
    // Two sends went at once (the per-subscription bound); both timed out: one hold, not two.
    expect(r.got).toHaveLength(2);
    expect(subRow(w.id)).toMatchObject({ timeouts: 1, heldUntil: t0 + MIN });
    const expected = [0, 1, 6, 36, 156, 636, 1116, 1596, 2076, 2556, 3036, 3516, 3996, 4320];
    for (const at of expected.slice(1)) {
      const seen = r.got.length;
      app.clock.set(t0 + at * MIN - 1);
      await d.settle();
      expect(r.got.length, `nothing before minute ${at}`).toBe(seen);
      app.clock.set(t0 + at * MIN);
      await d.settle();
      expect(r.got.length, `one probe at minute ${at}`).toBe(seen + 1);
    }
    const sub = (await call(app, 'GET', `/v1/webhooks/${w.id}`, { token: u.token })).body;
    expect(sub).toMatchObject({ active: false, disabledAt: new Date(t0 + 3 * DAY).toISOString() });
    const log = await deliveries(u.token, w.id);
    expect(log.every((x) => x.status === 'failed')).toBe(true);
    expect(log.flatMap((x) => x.attempts).every((a) => a.errorClass === 'timeout')).toBe(true);
    expect(r.got).toHaveLength(expected.length + 1);
  }, 30_000 + 14 * TIMEOUT_DEADLINE_MS); // 14 sends wait out the deadline, one after another

  it('PATCH url starts without a hold', async () => {
    d = createDispatcher(app.deps, { sendDeadlineMs: TIMEOUT_DEADLINE_MS });
    const u = await user();
    const r = await rec('hang');
    const other = await rec(200);
    const w = await create(u.token, r.url());
    await d.settle();
    expect(subRow(w.id).heldUntil).not.toBeNull();
    expect((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, { token: u.token, body: { url: other.url() } })).status).toBe(200);
    expect(subRow(w.id)).toMatchObject({ timeouts: 0, heldUntil: null });
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'NEW-URL', at: app.clock() });
    await d.settle();
    // Sent at once to the new address; its 2xx then sends the ping waiting for its retry.
    expect(other.got.map((g) => g.headers['x-service-event'])).toEqual(['todo.created', 'webhook.ping']);
  });
});

describe('the backlog of a failing subscription', () => {
  it(`keeps at most ${MAX_PENDING_WHILE_FAILING} pending once failing for a minute: the oldest are dropped (marked, redeliverable), the newest kept`, async () => {
    d = createDispatcher(app.deps);
    const u = await user();
    const r = await rec(500);
    const t0 = app.clock();
    const w = await create(u.token, r.url());
    await d.settle(); // the ping fails: the streak starts at t0
    expect(subRow(w.id).failingSince).toBe(t0);

    // 30 s into the streak (a hiccup, as far as anyone knows): nothing is cut.
    app.clock.set(t0 + 30_000);
    for (let i = 0; i < 70; i++) {
      app.clock.advance(1);
      recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: `E${i}`, at: app.clock() });
      fanOut(app.deps); // one delivery per millisecond: the log's order is the order they were made
    }
    await d.settle();
    let log = await deliveries(u.token, w.id);
    expect(log.filter((x) => x.status === 'pending')).toHaveLength(71);

    // A minute in: the next event cuts the backlog to the newest 50.
    app.clock.set(t0 + MIN + 1_000);
    recordEvent(app.deps, { userId: u.userId, type: 'todo.created', id: 'LAST', at: app.clock() });
    d.tick(); // the fan-out
    log = await deliveries(u.token, w.id); // newest first
    expect(log).toHaveLength(72);
    const pending = log.filter((x) => x.status === 'pending');
    const dropped = log.filter((x) => x.dropped);
    expect(pending).toHaveLength(MAX_PENDING_WHILE_FAILING);
    expect(dropped).toHaveLength(72 - MAX_PENDING_WHILE_FAILING);
    expect(log.slice(0, MAX_PENDING_WHILE_FAILING).every((x) => x.status === 'pending' && !x.dropped)).toBe(true);
    expect(log.slice(MAX_PENDING_WHILE_FAILING).every((x) => x.status === 'failed' && x.dropped && x.nextAttemptAt === null)).toBe(true);
    expect(dropped.at(-1)!.eventType).toBe('webhook.ping'); // the oldest went first
    await d.settle();

    // Later events keep it at 50 (each drops the oldest pending one).
    app.clock.advance(1);
    todoEvents(u.userId, 5, 'MORE');
    await d.settle();
    log = await deliveries(u.token, w.id);
    expect(log.filter((x) => x.status === 'pending')).toHaveLength(MAX_PENDING_WHILE_FAILING);

    // The receiver is back. Redelivering a dropped one works; its 2xx ends the streak, and the 50
    // pending go at once, not at their retry times.
    r.answer = 200;
    const sent = r.got.length;
    const target = dropped[0]!;
    const rd = await call(app, 'POST', `/v1/webhooks/${w.id}/deliveries/${target.id}/redeliver`, { token: u.token });
    expect(rd.status, rd.text).toBe(200);
    expect(rd.body).toMatchObject({ status: 'pending', dropped: false });
    await d.settle();
    log = await deliveries(u.token, w.id);
    expect(log.find((x) => x.id === target.id)).toMatchObject({ status: 'delivered', dropped: false });
    expect(log.filter((x) => x.status === 'delivered')).toHaveLength(MAX_PENDING_WHILE_FAILING + 1);
    expect(log.filter((x) => x.status === 'pending')).toEqual([]);
    expect(r.got.length - sent).toBe(MAX_PENDING_WHILE_FAILING + 1);
    expect(subRow(w.id).failingSince).toBeNull();
  });

  it('a healthy receiver\'s burst is never cut', async () => {
    d = createDispatcher(app.deps);
    const u = await user();
    const r = await rec(200);
    const w = await create(u.token, r.url());
    todoEvents(u.userId, 120, 'BURST');
    await d.settle();
    expect(r.got).toHaveLength(121);
    const log = await deliveries(u.token, w.id);
    expect(log.every((x) => x.status === 'delivered' && !x.dropped)).toBe(true);
  });
});

describe('route buckets for ping and redeliver (factor 1)', () => {
  /** One request after 50 ms: the edge bucket (20/s) regains the token it spends. */
  async function paced(a: TestApp, method: string, path: string, token: string): Promise<Res> {
    a.clock.advance(50);
    return call(a, method, path, { token });
  }

  it('ping: 30 per hour per user, then 429 with Retry-After; redeliver: 100 per hour per user', async () => {
    const limited = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1', CAIRN_RATE_LIMIT_FACTOR: '1' }, {}, { outbound: { ca: cert.cert } });
    try {
      const r = await rec(200);
      limited.clock.set(Math.ceil(limited.clock() / HOUR) * HOUR); // the start of an hour window
      const u = await user(limited);
      const other = await user(limited);
      const w = await create(u.token, r.url(), limited);
      const ow = await create(other.token, r.url(), limited);
      for (let i = 1; i <= 30; i++) expect((await paced(limited, 'POST', `/v1/webhooks/${w.id}/ping`, u.token)).status, `ping ${i}`).toBe(201);
      const refused = await paced(limited, 'POST', `/v1/webhooks/${w.id}/ping`, u.token);
      expect(expectProblem(refused, 429, 'rate_limited').detail).toMatch(/webhookPing/);
      const hourLeft = Math.ceil((Math.ceil(limited.clock() / HOUR) * HOUR - limited.clock()) / 1000);
      expect(refused.headers.get('retry-after')).toBe(String(hourLeft));
      // Per user: another account's pings are not counted with these.
      expect((await paced(limited, 'POST', `/v1/webhooks/${ow.id}/ping`, other.token)).status).toBe(201);
      // Nothing was queued by the refusal: 1 ping at create + 30.
      expect(limited.deps.db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, w.id)).get()!.n).toBe(31);

      // Redeliver in its own bucket (a fresh 5-minute write window, the same hour).
      limited.clock.advance(5 * MIN);
      const [first] = (await call(limited, 'GET', `/v1/webhooks/${w.id}/deliveries?limit=1`, { token: u.token })).body.data as { id: string }[];
      const path = `/v1/webhooks/${w.id}/deliveries/${first!.id}/redeliver`;
      for (let i = 1; i <= 100; i++) expect((await paced(limited, 'POST', path, u.token)).status, `redeliver ${i}`).toBe(200);
      const no = await paced(limited, 'POST', path, u.token);
      expect(expectProblem(no, 429, 'rate_limited').detail).toMatch(/webhookRedeliver/);
      expect(Number(no.headers.get('retry-after'))).toBeGreaterThan(0);

      // The next hour frees both.
      limited.clock.set(Math.ceil(limited.clock() / HOUR) * HOUR);
      expect((await paced(limited, 'POST', `/v1/webhooks/${w.id}/ping`, u.token)).status).toBe(201);
      expect((await paced(limited, 'POST', path, u.token)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
