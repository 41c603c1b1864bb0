// Issue 11.1: one request must not buy unbounded work. /trpc batches are capped and every call
// counts against the buckets it would hit alone; password checks have their own per-IP and
// per-account buckets and run a bounded number at once, so other requests are never starved.
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { passwordHashingStats, resetPasswordHashingPeak } from '../../core/crypto/password.js';
import { LIMITS, RATE_BUCKETS } from '../../core/config.js';
import { callsIn } from '../../rest/rate-limit.js';
import { restartApp, stopKeepingData } from '../helpers/restart.js';
import { decoyLogN } from '../../routers/auth/model.js';

const apps: TestApp[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});
async function app(factor = '1'): Promise<TestApp> {
  const a = await startApp({ CAIRN_RATE_LIMIT_FACTOR: factor });
  apps.push(a);
  return a;
}

/** POST /trpc/auth.login,auth.login,…?batch=1 with one input per call. */
function loginBatch(a: TestApp, inputs: { email: string; password: string }[]): Promise<Res> {
  const path = `/trpc/${inputs.map(() => 'auth.login').join(',')}?batch=1`;
  const body = Object.fromEntries(inputs.map((input, i) => [String(i), { json: input }]));
  return call(a, 'POST', path, { body });
}

const wrong = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ email: `nobody-${tag}-${i}@example.test`, password: 'not the password' }));

describe('/trpc batches', () => {
  it(`hold at most ${LIMITS.trpcBatchMax} calls; a larger batch runs none of them`, async () => {
    const a = await app('1000');
    resetPasswordHashingPeak();
    const before = passwordHashingStats();
    const r = await loginBatch(a, wrong(LIMITS.trpcBatchMax + 1, 'big'));
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('/errors/validation_failed');
    expect(passwordHashingStats()).toEqual(before);
    const ok = await loginBatch(a, wrong(LIMITS.trpcBatchMax, 'max'));
    expect(ok.status).toBe(401); // every call answered (all wrong)
    expect(ok.body).toHaveLength(LIMITS.trpcBatchMax);
  });

  it('every call of a batch counts against the per-IP password bucket, as it would alone', async () => {
    const a = await app('1');
    const limit = RATE_BUCKETS.passwordIp.limit;
    const first = await loginBatch(a, wrong(LIMITS.trpcBatchMax, 'a'));
    const statusOf = (x: { error: { json: { data: { httpStatus: number } } } }) => x.error.json.data.httpStatus;
    expect(first.body.map(statusOf)).toEqual(Array(LIMITS.trpcBatchMax).fill(401));
    const second = await loginBatch(a, wrong(LIMITS.trpcBatchMax, 'b'));
    const statuses = second.body.map(statusOf);
    expect(statuses.filter((s: number) => s === 401)).toHaveLength(limit - LIMITS.trpcBatchMax);
    expect(statuses.filter((s: number) => s === 429)).toHaveLength(2 * LIMITS.trpcBatchMax - limit);
    // The edge bucket is charged one token per call of a batch too.
    expect(callsIn('/trpc/auth.login,auth.login,me.get?batch=1')).toBe(3);
    expect(callsIn('/trpc/auth.login,auth.login?input=x')).toBe(1);
    expect(callsIn(`/trpc/${Array(40).fill('me.get').join(',')}?batch=1`)).toBe(LIMITS.trpcBatchMax + 1);
  });
});

describe('password buckets', () => {
  it('wrong passwords count per account: the 11th attempt is refused before any hashing, even with the right password', async () => {
    const a = await app('1');
    const u = await registerUser(a, 'victim@example.test', 'the right password 1');
    for (let i = 0; i < RATE_BUCKETS.passwordFailures.limit; i++) {
      expectProblem(await call(a, 'POST', '/v1/auth/login', { body: { email: 'VICTIM@example.test', password: `guess ${i} xxxxxx` } }), 401, 'unauthorized');
    }
    resetPasswordHashingPeak();
    const refused = await call(a, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'the right password 1' } });
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(passwordHashingStats().peak).toBe(0);
    // Another account is not affected; the window's end frees the victim.
    await registerUser(a, 'other@example.test', 'another password 1');
    expect((await call(a, 'POST', '/v1/auth/login', { body: { email: 'other@example.test', password: 'another password 1' } })).status).toBe(200);
    a.clock.advance(RATE_BUCKETS.passwordFailures.windowMs);
    expect((await call(a, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'the right password 1' } })).status).toBe(200);
  });

  it('a wrong current password on password change and rotate-key counts too', async () => {
    const a = await app('1');
    const u = await registerUser(a, 'changer@example.test', 'the right password 1');
    for (let i = 0; i < RATE_BUCKETS.passwordFailures.limit; i++) {
      const path = i % 2 ? '/v1/auth/rotate-key' : '/v1/auth/password';
      const body = i % 2 ? { password: 'wrong password 12' } : { currentPassword: 'wrong password 12', newPassword: 'new password 123' };
      expectProblem(await call(a, 'POST', path, { token: u.session, body }), 422, 'validation_failed');
    }
    expectProblem(await call(a, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'the right password 1' } }), 429, 'rate_limited');
  });

  it('every password check counts per IP (register, login, password, rotate-key)', async () => {
    const a = await app('1');
    const limit = RATE_BUCKETS.passwordIp.limit;
    for (let i = 0; i < limit; i++) await registerUser(a, `ip${i}@example.test`, 'some password 12');
    expectProblem(await call(a, 'POST', '/v1/auth/register', { body: { email: 'one-more@example.test', password: 'some password 12' } }), 429, 'rate_limited');
    expectProblem(await call(a, 'POST', '/v1/auth/login', { body: { email: 'ip0@example.test', password: 'some password 12' } }), 429, 'rate_limited');
  });
});

describe('bounded password hashing', () => {
  it(`runs at most ${LIMITS.passwordConcurrency} hashes at once, and a session request is answered while logins queue`, async () => {
    const a = await app('1000');
    const u = await registerUser(a, 'busy@example.test', 'busy password 12');
    resetPasswordHashingPeak();
    const order: string[] = [];
    const logins = Array.from({ length: 8 }, (_, i) =>
      call(a, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'busy password 12' } }).then((r) => {
        order.push(`login${i}`);
        return r;
      }),
    );
    // The session request goes once every login has reached the hashing (both slots taken, the
    // rest waiting for one; polled: their arrival is I/O). Sent earlier, it could be answered
    // before the logins had reached the queue, or overtake some of them, and would show nothing;
    // counted from the start, logins answered before it was even sent would count against it.
    const reached = () => passwordHashingStats().running + passwordHashingStats().waiting + order.length;
    for (const end = Date.now() + 10_000; reached() < logins.length; ) {
      if (Date.now() > end) throw new Error(`only ${reached()} of the logins reached the hashing`);
      await new Promise((r) => setTimeout(r, 1));
    }
    const answeredBefore = order.length;
    let atAnswer: ReturnType<typeof passwordHashingStats> | undefined;
    const me = call(a, 'GET', '/v1/me', { token: u.session }).then((r) => {
      order.push('me');
      atAnswer = passwordHashingStats();
      return r;
    });
    const [meRes, ...loginRes] = await Promise.all([me, ...logins]);
    expect(meRes.status).toBe(200);
    for (const r of loginRes) expect(r.status).toBe(200);
    expect(passwordHashingStats().peak).toBe(LIMITS.passwordConcurrency);
    // The session check did not wait behind the queue of hashes: when it was answered, logins were
    // still hashing or waiting to…
    expect(atAnswer!.running + atAnswer!.waiting, JSON.stringify({ order, answeredBefore, atAnswer })).toBeGreaterThan(0);
    expect(order.indexOf('me')).toBeLessThan(order.length - 1);
    // …and while it was out, at most the hashes already running when it was sent ended: it waited
    // for none of the queued ones.
    expect(order.indexOf('me') - answeredBefore, JSON.stringify({ order, answeredBefore })).toBeLessThanOrEqual(LIMITS.passwordConcurrency);
  });
});

describe('a changed CAIRN_SCRYPT_LOG_N (issue 11.7)', () => {
  it('rehashes an account at the current cost on its next login; the unknown-email decoy costs what most accounts cost', async () => {
    const a = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1000', CAIRN_SCRYPT_LOG_N: '15' });
    const u = await registerUser(a, 'old-cost@example.test', 'old cost password');
    const t = await call(a, 'POST', '/v1/tags', { token: u.session, body: { name: 'Before rehash' } });
    stopKeepingData(a);
    const b = await restartApp(a, { CAIRN_SCRYPT_LOG_N: '14' });
    apps.push(b, a);
    const params = () => JSON.parse((b.deps.db.$client.prepare('SELECT pw_params AS p FROM users WHERE id = ?').get(u.userId) as { p: string }).p);
    expect(params().logN).toBe(15);
    // Every account still costs 15: so does the decoy, whatever the new setting says.
    expect(decoyLogN(b.deps)).toBe(15);
    const login = await call(b, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'old cost password' } });
    expect(login.status).toBe(200);
    expect(params().logN).toBe(14);
    expect(decoyLogN(b.deps)).toBe(14);
    // The re-wrapped key opens the account's content, and the password still works.
    expect((await call(b, 'GET', `/v1/tags/${t.body.id}`, { token: login.body.token })).body.name).toBe('Before rehash');
    expect((await call(b, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'old cost password' } })).status).toBe(200);
  });
});
