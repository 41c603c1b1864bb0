// Spec §4.2 (issue 3): Idempotency-Key on Idempotent routes and creating POSTs. A retry replays
// the first answer without running the procedure again; another body is 422; a retry while the
// first runs replays it; 5xx answers are not kept, 4xx are; answers are sealed and live 24 hours.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser, type Res } from '../helpers/http.js';
import { restartApp, stopKeepingData } from '../helpers/restart.js';
import { authedProcedure, createCallerFactory, createContextInner, router } from '../../routers/trpc.js';
import { purgeIdempotencyKeys } from '../../server/jobs/purge.js';
import { runJob, JOBS } from '../../server/jobs/scheduler.js';
import { AppError } from '../../core/errors.js';
import { REST_ROUTES } from '../../rest/routes.js';
import { atomic } from '../../routers/middleware/atomic.js';
import { unatomicIdempotentProcedures } from '../../routers/index.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const extra: TestApp[] = [];
afterEach(async () => {
  while (extra.length) await extra.pop()!.close();
});

let n = 0;
const newKey = () => `key-${++n}-${Math.random().toString(36).slice(2)}`;

async function user(a: TestApp = app) {
  const u = await registerUser(a);
  const pat = (await createPat(a, u.session, ['tags:write', 'sessions:read'])).token;
  return { ...u, pat };
}

function post(a: TestApp, path: string, token: string, body: unknown, key?: string): Promise<Res> {
  return call(a, 'POST', path, { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
}

const rows = (a: TestApp, sql: string, ...args: unknown[]) => (a.deps.db.$client.prepare(sql).get(...args) as { n: number }).n;
const tagCount = (a: TestApp, userId: string) => rows(a, 'SELECT count(*) AS n FROM tags WHERE user_id = ?', userId);

describe('replay (spec §4.2)', () => {
  it('a retry replays status, body and headers, marked Idempotent-Replayed, without writing again', async () => {
    const u = await user();
    const key = newKey();
    const first = await post(app, '/v1/tags', u.pat, { name: 'Groceries', colorHex: '#00ff00' }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const events = rows(app, 'SELECT count(*) AS n FROM outbox WHERE user_id = ?', u.userId);

    const again = await post(app, '/v1/tags', u.pat, { colorHex: '#00ff00', name: 'Groceries' }, key); // property order does not matter
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);

    // The procedure did not run: delete the tag, and the retry still replays instead of creating.
    expect((await call(app, 'DELETE', `/v1/tags/${first.body.id}`, { token: u.pat })).status).toBe(204);
    const third = await post(app, '/v1/tags', u.pat, { name: 'Groceries', colorHex: '#00ff00' }, key);
    expect(third.status).toBe(201);
    expect(third.body.id).toBe(first.body.id);
    expect(tagCount(app, u.userId)).toBe(0);
    expectProblem(await call(app, 'GET', `/v1/tags/${first.body.id}`, { token: u.pat }), 404, 'not_found');
    // No event was emitted by the replays (only the delete added one, if deletes emit).
    const after = rows(app, "SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type <> 'tag.deleted'", u.userId);
    expect(after).toBe(events);
  });

  it('a 200 answer (the tag already existed) is replayed as 200', async () => {
    const u = await user();
    await post(app, '/v1/tags', u.pat, { name: 'Home' });
    const key = newKey();
    const first = await post(app, '/v1/tags', u.pat, { name: 'home' }, key);
    expect(first.status).toBe(200);
    const again = await post(app, '/v1/tags', u.pat, { name: 'home' }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keys belong to the user and the route: another credential of the same user replays; another user does not', async () => {
    const u = await user();
    const key = newKey();
    const first = await post(app, '/v1/tags', u.pat, { name: 'Shared' }, key);
    const second = (await createPat(app, u.session, ['tags:write'])).token;
    const viaOther = await post(app, '/v1/tags', second, { name: 'Shared' }, key);
    expect(viaOther.headers.get('idempotent-replayed')).toBe('true');
    expect(viaOther.body.id).toBe(first.body.id);

    const stranger = await user();
    const theirs = await post(app, '/v1/tags', stranger.pat, { name: 'Shared' }, key);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it('the same key with another body is 422 at the header, and writes nothing', async () => {
    const u = await user();
    const key = newKey();
    expect((await post(app, '/v1/tags', u.pat, { name: 'One' }, key)).status).toBe(201);
    const r = await post(app, '/v1/tags', u.pat, { name: 'Two' }, key);
    const p = expectProblem(r, 422, 'validation_failed');
    expect(p.detail).toMatch(/Idempotency-Key/);
    expect(p.detail).toMatch(/different request body/);
    expect(tagCount(app, u.userId)).toBe(1);
  });

  it('the header must be 1..255 printable characters; routes that are not idempotent ignore it', async () => {
    const u = await user();
    expectProblem(await post(app, '/v1/tags', u.pat, { name: 'Long' }, 'k'.repeat(256)), 422, 'validation_failed');
    expectProblem(await post(app, '/v1/tags', u.pat, { name: 'Tab' }, 'a\tb'), 422, 'validation_failed');
    expectProblem(await post(app, '/v1/tags', u.pat, { name: 'Latin1' }, 'caf\u00e9'), 422, 'validation_failed');
    expect(tagCount(app, u.userId)).toBe(0);
    expect((await post(app, '/v1/tags', u.pat, { name: 'Max' }, 'k'.repeat(255))).status).toBe(201);
    expect((await post(app, '/v1/tags', u.pat, { name: 'Spaces' }, 'a key with spaces ~!')).status).toBe(201);
    // PATCH is not marked idempotent: the header is ignored and each call runs.
    const tag = (await post(app, '/v1/tags', u.pat, { name: 'Colour' })).body;
    const key = newKey();
    for (const colorHex of ['111111', '222222']) {
      const r = await call(app, 'PATCH', `/v1/tags/${tag.id}`, { token: u.pat, body: { colorHex }, headers: { 'Idempotency-Key': key } });
      expect(r.body.colorHex).toBe(colorHex);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
    }
  });

  it('4xx answers are replayed; 5xx answers are not kept, so the retry runs again', async () => {
    const u = await user();
    // 409 duplicate_id, replayed even after the clash is gone.
    const id = 'A1B2C3D4-E5F6-4A1B-8C9D-0E1F2A3B4C5D';
    await post(app, '/v1/tags', u.pat, { name: 'Holder', id });
    const key = newKey();
    expectProblem(await post(app, '/v1/tags', u.pat, { name: 'Clash', id }, key), 409, 'duplicate_id');
    await call(app, 'DELETE', `/v1/tags/${id}`, { token: u.pat });
    const replayed = await post(app, '/v1/tags', u.pat, { name: 'Clash', id }, key);
    expectProblem(replayed, 409, 'duplicate_id');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(tagCount(app, u.userId)).toBe(0);

    // A 422 from input validation is replayed too.
    const badKey = newKey();
    const bad = await post(app, '/v1/tags', u.pat, { name: '' }, badKey);
    expect(expectProblem(bad, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/name');
    const badAgain = await post(app, '/v1/tags', u.pat, { name: '' }, badKey);
    expect(expectProblem(badAgain, 422, 'validation_failed').errors).toEqual(bad.body.errors);
    expect(badAgain.headers.get('idempotent-replayed')).toBe('true');

    // A 500: an existing tag whose sealed row no longer opens makes create fail.
    const boom = await post(app, '/v1/tags', u.pat, { name: 'Boom' });
    const sqlite = app.deps.db.$client;
    const good = (sqlite.prepare('SELECT sealed FROM tags WHERE id = ?').get(boom.body.id) as { sealed: Buffer }).sealed;
    sqlite.prepare('UPDATE tags SET sealed = ? WHERE id = ?').run(Buffer.from('broken'), boom.body.id);
    const k500 = newKey();
    expectProblem(await post(app, '/v1/tags', u.pat, { name: 'boom' }, k500), 500, 'internal');
    sqlite.prepare('UPDATE tags SET sealed = ? WHERE id = ?').run(good, boom.body.id);
    const retried = await post(app, '/v1/tags', u.pat, { name: 'boom' }, k500);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.id).toBe(boom.body.id);
  });

  it('works over /trpc too, with the same marker header', async () => {
    const u = await user();
    const key = newKey();
    const send = () => call(app, 'POST', '/trpc/tags.create', { token: u.pat, body: { json: { name: 'Via tRPC' } }, headers: { 'Idempotency-Key': key } });
    const a = await send();
    const b = await send();
    expect(b.status).toBe(200);
    expect(b.body.result.data.json).toEqual(a.body.result.data.json);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    // The key is per procedure, not per transport: REST replays the tRPC answer.
    const rest = await post(app, '/v1/tags', u.pat, { name: 'Via tRPC' }, key);
    expect(rest.headers.get('idempotent-replayed')).toBe('true');
    expect(rest.body.id).toBe(a.body.result.data.json.id);
  });
});

describe('in flight and concurrency', () => {
  it('concurrent duplicate POST /v1/keys with one key create exactly one token', async () => {
    const u = await user();
    const key = newKey();
    const before = rows(app, "SELECT count(*) AS n FROM credentials WHERE user_id = ? AND kind = 'pat'", u.userId);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => post(app, '/v1/keys', u.session, { name: 'ci', scopes: ['tags:read'], expiresInDays: 30 }, key)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    expect(rows(app, "SELECT count(*) AS n FROM credentials WHERE user_id = ? AND kind = 'pat'", u.userId)).toBe(before + 1);
  });

  it('concurrent duplicate POST /v1/tags with one key create one row and never fail', async () => {
    const u = await user();
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 8 }, () => post(app, '/v1/tags', u.pat, { name: 'Race' }, key)));
    for (const r of results) {
      if (r.status === 409) expectProblem(r, 409, 'conflict');
      else expect(r.status).toBe(201);
    }
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(tagCount(app, u.userId)).toBe(1);
  });

  it('a twin that arrives while the first is on its way replays the first answer (no pending state, no 409)', async () => {
    const u = await user();
    const key = newKey();
    // Both requests are in flight at once; whichever transaction commits first answers the other.
    const [a, b] = await Promise.all([post(app, '/v1/tags', u.pat, { name: 'Twins' }, key), post(app, '/v1/tags', u.pat, { name: 'Twins' }, key)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body).toEqual(b.body);
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].filter((h) => h === 'true')).toHaveLength(1);
    expect(tagCount(app, u.userId)).toBe(1);
    expect(rows(app, "SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ? AND state = 'pending'", u.userId)).toBe(0);
  });

  it('an idempotent route must run its model inside atomic(): every one of the app does, and an async model is refused', async () => {
    expect(unatomicIdempotentProcedures()).toEqual([]);
    const probe = router({
      make: authedProcedure
        .meta({ idempotent: true })
        .input(z.object({}))
        .mutation(atomic(() => Promise.resolve({ ok: true }) as unknown as { ok: boolean })),
    });
    const u = await user();
    const c = createCallerFactory(probe)(createContextInner({ deps: app.deps, requestId: 't', authorization: `Bearer ${u.pat}`, idempotencyKey: newKey() }));
    await expect(c.make({})).rejects.toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect(rows(app, 'SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?', u.userId)).toBe(0);
  });

  it('an exception escaping the procedure frees the key', async () => {
    let fail = true;
    const probe = router({
      make: authedProcedure
        .meta({ idempotent: true })
        .input(z.object({}))
        .mutation(
          atomic(() => {
            if (fail) throw new Error('disk on fire');
            return { ok: true };
          }),
        ),
      rateLimited: authedProcedure
        .meta({ idempotent: true })
        .input(z.object({}))
        .mutation(
          atomic(() => {
            if (fail) throw new AppError('rate_limited', 'slow down', { headers: { 'Retry-After': '1' } });
            return { ok: true };
          }),
        ),
    });
    const u = await user();
    const factory = createCallerFactory(probe);
    const c = factory(createContextInner({ deps: app.deps, requestId: 't', authorization: `Bearer ${u.pat}`, idempotencyKey: newKey() }));
    await expect(c.make({})).rejects.toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    await expect(c.rateLimited({})).rejects.toMatchObject({ problemCode: 'rate_limited' });
    fail = false;
    expect(await c.make({})).toEqual({ ok: true });
    expect(await c.rateLimited({})).toEqual({ ok: true });
  });
});

describe('POST /v1/keys: the token is shown once, so it is never replayed', () => {
  it('a retry with the key is 409 conflict naming the created key, without the token', async () => {
    const u = await user();
    const key = newKey();
    const body = { name: 'once', scopes: ['tags:read'], expiresInDays: 30 };
    const first = await post(app, '/v1/keys', u.session, body, key);
    expect(first.status).toBe(201);
    const again = await post(app, '/v1/keys', u.session, body, key);
    const p = expectProblem(again, 409, 'conflict');
    expect(p.detail).toContain(first.body.id);
    expect(again.text).not.toContain(first.body.token);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await call(app, 'GET', '/v1/keys', { token: u.session });
    expect(list.body.data.filter((k: { name: string }) => k.name === 'once')).toHaveLength(1);
    // Nor is the token stored: no row of the table holds it, sealed or not (checked via the DB file elsewhere).
  });
});

describe('durability and expiry', () => {
  it('a stored answer replays after a process restart', async () => {
    const a = await startApp();
    const u = await user(a);
    const key = newKey();
    const first = await post(a, '/v1/tags', u.pat, { name: 'Survives' }, key);
    stopKeepingData(a);
    const b = await restartApp(a);
    extra.push(b, a);
    const again = await post(b, '/v1/tags', u.pat, { name: 'Survives' }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(tagCount(b, u.userId)).toBe(1);
  });

  // A crash between the change and its stored answer cannot happen: they commit together
  // (test/reliability/exactly-once.test.ts kills a real server right after the commit).

  it('answers expire after 24 hours and the purge job deletes them', async () => {
    const u = await user();
    const key = newKey();
    const first = await post(app, '/v1/tags', u.pat, { name: 'Ephemeral' }, key);
    await call(app, 'DELETE', `/v1/tags/${first.body.id}`, { token: u.pat });
    const stored = () => rows(app, 'SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?', u.userId);
    expect(stored()).toBe(1);
    app.clock.advance(24 * 3_600_000 - 1);
    expect(purgeIdempotencyKeys(app.deps)).toBe(0);
    expect((await post(app, '/v1/tags', u.pat, { name: 'Ephemeral' }, key)).headers.get('idempotent-replayed')).toBe('true');
    app.clock.advance(1);
    // Expired: ignored even before the purge runs; the request runs again.
    const fresh = await post(app, '/v1/tags', u.pat, { name: 'Ephemeral' }, key);
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    // The purge removes what has expired, through the scheduler's job list too.
    app.clock.advance(24 * 3_600_000);
    const job = JOBS.find((j) => j.name === 'purge-idempotency-keys')!;
    runJob(app.deps, job);
    expect(stored()).toBe(0);
  });

  it('stored answers are sealed, and a key rotation re-seals them (a retry still replays)', async () => {
    const u = await user();
    const key = newKey();
    const first = await post(app, '/v1/tags', u.session, { name: 'SealedAnswerMarker' }, key);
    const raw = app.deps.db.$client.prepare('SELECT * FROM idempotency_keys WHERE user_id = ?').get(u.userId) as Record<string, unknown>;
    expect(JSON.stringify(raw)).not.toContain('SealedAnswerMarker');
    expect(Buffer.from(raw.sealed as Buffer).includes(Buffer.from('SealedAnswerMarker'))).toBe(false);
    expect(Buffer.from(raw.key_index as Buffer).includes(Buffer.from(key))).toBe(false);

    const rotated = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    expect(rotated.status).toBe(200);
    const again = await post(app, '/v1/tags', rotated.body.token, { name: 'SealedAnswerMarker' }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('budget: a replay costs no write budget (docs/api.md)', () => {
  it('replays are served without counting as writes, even when the write budget is spent', async () => {
    const a = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
    extra.push(a);
    const u = await user(a);
    const key = newKey();
    const W = 5 * 60_000;
    a.clock.set(Math.floor(a.clock() / W) * W + W);
    const paced = (fn: () => Promise<Res>) => {
      a.clock.advance(50);
      return fn();
    };
    expect((await paced(() => post(a, '/v1/tags', u.pat, { name: 'w0' }, key))).status).toBe(201);
    for (let i = 1; i < 119; i++) expect((await paced(() => post(a, '/v1/tags', u.pat, { name: `w${i}` }))).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await paced(() => post(a, '/v1/tags', u.pat, { name: 'w0' }, key))).headers.get('idempotent-replayed')).toBe('true');
    // 119 writes so far: the 120th passes, the 121st is refused.
    expect((await paced(() => post(a, '/v1/tags', u.pat, { name: 'w119' }))).status).toBe(201);
    expectProblem(await paced(() => post(a, '/v1/tags', u.pat, { name: 'w120' })), 429, 'rate_limited');
    // With the write budget spent, a replay is still served.
    const replay = await paced(() => post(a, '/v1/tags', u.pat, { name: 'w0' }, key));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // A new key on a spent budget is refused, and the refusal is not stored: it runs once the window turns.
    const late = newKey();
    expectProblem(await paced(() => post(a, '/v1/tags', u.pat, { name: 'late' }, late)), 429, 'rate_limited');
    a.clock.advance(W);
    const ran = await paced(() => post(a, '/v1/tags', u.pat, { name: 'late' }, late));
    expect(ran.status).toBe(201);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('OpenAPI', () => {
  it('documents Idempotency-Key on idempotent routes and the replay marker', async () => {
    const doc = (await call(app, 'GET', '/openapi.json')).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', schema: { maxLength: 255 } });
    const create = doc.paths['/v1/tags'].post;
    expect(create.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(create['x-idempotent']).toBe(true);
    expect(create.responses['201'].headers['Idempotent-Replayed']).toBeTruthy();
    const keys = doc.paths['/v1/keys'].post;
    expect(keys.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(keys.responses['201'].headers['Idempotent-Replayed']).toBeUndefined();
    expect(doc.paths['/v1/tags/{id}'].patch['x-idempotent']).toBeUndefined();
  });
});

describe('which routes take Idempotency-Key', () => {
  it('every route the spec marks Idempotent, and every collection POST that creates, is marked', () => {
    const marked = new Set(REST_ROUTES.filter((r) => r.meta.idempotent).map((r) => `${r.method} ${r.path.replace(/\{[^}]+\}/g, '{}')}`));
    // Spec §4.5, §4.6, §4.7 "Idempotent", DECISIONS §5 (POST /v1/todos): checked once the route exists.
    const spec = ['POST /v1/headings', 'POST /v1/headings/{}/convert', 'POST /v1/headings/{}/complete', 'POST /v1/notes', 'POST /v1/note-folders', 'POST /v1/todos'];
    const present = new Set(REST_ROUTES.map((r) => `${r.method} ${r.path.replace(/\{[^}]+\}/g, '{}')}`));
    for (const route of spec) if (present.has(route)) expect(marked, route).toContain(route);
    // A POST to a collection creates something (spec §4), except these, which create nothing.
    const createsNothing = new Set(['/v1/link-title']);
    for (const r of REST_ROUTES) {
      if (r.method !== 'POST' || !/^\/v1\/[a-z-]+$/.test(r.path) || r.meta.public || createsNothing.has(r.path)) continue;
      expect(r.meta.idempotent, `POST ${r.path}`).toBeTruthy();
    }
  });
});
