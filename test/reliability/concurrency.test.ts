// Issue 18.4: concurrency. Requests sent at once over real HTTP to one server: each write is one
// IMMEDIATE SQLite transaction (routers/middleware/atomic.ts), so interleaving cannot produce
// duplicate sort keys, double rolls or duplicate tags.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { createHash } from 'node:crypto';
import { fullUser, oauthFlow, type Owner } from '../helpers/resources.js';

let app: TestApp;
let u: Owner;
beforeAll(async () => {
  app = await startApp();
  u = await fullUser(app);
});
afterAll(() => app?.close());

function rows<T>(sql: string, ...args: unknown[]): T[] {
  const db = new Database(path.join(app.dataDir, 'cairn.db'), { readonly: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}

const PARALLEL = Number(process.env.CAIRN_SOAK ? 200 : 50);

describe('concurrency (issue 18.4)', () => {
  it(`${PARALLEL} parallel reorders in one band leave a strict total order with no duplicate sort keys`, async () => {
    const project = await call(app, 'POST', '/v1/containers', { token: u.pat, body: { kind: 'project', name: 'band' } });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await call(app, 'POST', '/v1/todos', { token: u.pat, body: { title: `t${i}`, parentId: project.body.id } })).body.id);
    // Seeded choices: each move puts one to-do right after or before another of the band.
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const moves = Array.from({ length: PARALLEL }, () => {
      const id = ids[rnd(ids.length)]!;
      let other = ids[rnd(ids.length)]!;
      if (other === id) other = ids[(ids.indexOf(id) + 1) % ids.length]!;
      return call(app, 'POST', `/v1/todos/${id}/move`, { token: u.pat, body: { parentId: project.body.id, [rnd(2) ? 'after' : 'before']: other } });
    });
    const answers = await Promise.all(moves);
    expect(answers.map((a) => a.status).filter((s) => s !== 200), answers.find((a) => a.status !== 200)?.text).toEqual([]);
    const keys = rows<{ id: string; sort_key: string }>('SELECT id, sort_key FROM todos WHERE user_id = ? AND parent_id = ? ORDER BY sort_key, id', u.userId, project.body.id);
    expect(keys).toHaveLength(ids.length);
    expect(new Set(keys.map((k) => k.sort_key)).size).toBe(ids.length); // no duplicates: a strict order
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]!.sort_key < keys[i]!.sort_key).toBe(true);
    // The API lists the same order.
    const listed = await call(app, 'GET', `/v1/todos?parent_id=${project.body.id}&limit=200`, { token: u.pat });
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual(keys.map((k) => k.id));
  });

  it('parallel completes of one recurring to-do roll it exactly once per successful request', async () => {
    const t = await call(app, 'POST', '/v1/todos', { token: u.pat, body: { title: 'daily', whenDate: '2026-11-22', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } } });
    const before = rows<{ n: number }>('SELECT count(*) AS n FROM todos WHERE user_id = ?', u.userId)[0]!.n;
    const n = 20;
    const answers = await Promise.all(Array.from({ length: n }, () => call(app, 'POST', `/v1/todos/${t.body.id}/complete?today=2026-11-22`, { token: u.pat, body: {} })));
    const ok = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200).map((a) => a.text)).toEqual([]);
    const now = await call(app, 'GET', `/v1/todos/${t.body.id}`, { token: u.pat });
    const expected = new Date(Date.UTC(2026, 10, 22 + ok)).toISOString().slice(0, 10);
    expect(now.body.whenDate).toBe(expected);
    expect(rows<{ n: number }>('SELECT count(*) AS n FROM todos WHERE user_id = ?', u.userId)[0]!.n).toBe(before + ok); // one logged copy each

    // The same request with one Idempotency-Key, sent 20 times at once: one roll.
    const k = await call(app, 'POST', '/v1/todos', { token: u.pat, body: { title: 'keyed daily', whenDate: '2026-11-22', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } } });
    const keyed = await Promise.all(
      Array.from({ length: n }, () => call(app, 'POST', `/v1/todos/${k.body.id}/complete?today=2026-11-22`, { token: u.pat, body: {}, headers: { 'Idempotency-Key': 'one-roll' } })),
    );
    expect(keyed.every((a) => a.status === 200 || a.status === 409), keyed.map((a) => a.status).join()).toBe(true);
    expect(keyed.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect((await call(app, 'GET', `/v1/todos/${k.body.id}`, { token: u.pat })).body.whenDate).toBe('2026-11-23');
  });

  it('parallel creates of one tag name give one tag', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call(app, 'POST', '/v1/tags', { token: i % 2 ? u.pat : u.session, body: { name: i % 3 ? 'Same Name' : '  Same Name ' } })));
    expect(answers.every((a) => a.status === 200 || a.status === 201), answers.map((a) => `${a.status} ${a.text}`).join('\n')).toBe(true);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    const list = await call(app, 'GET', '/v1/tags?limit=200', { token: u.pat });
    expect(list.body.data.filter((t: { name: string }) => t.name === 'Same Name')).toHaveLength(1);
  });

  // Spec §5.2: parallel uses of one refresh token mint exactly one successor. docs/oauth.md adds a
  // 30 s grace for a lost response: the immediate predecessor of the newest refresh token is
  // accepted again (a fresh pair; the chain continues from it, the pair it replaces is dropped).
  // So a parallel burst may legitimately answer 200 more than once. What both rules require, and
  // what is asserted: every answer is a 200 with a pair or a 400 invalid_grant (never a 5xx, never
  // a half answer); exactly one refresh token of the grant is live afterwards (the chain never
  // forks); and once the grace has passed (the manual clock moved 31 s), exactly one of the tokens
  // seen works and every other one is refused.
  it('parallel uses of one refresh token leave exactly one live successor (the chain never forks)', async () => {
    const N = 16;
    const f = await oauthFlow(app, u);
    const refresh = (rt: string) =>
      call(app, 'POST', '/oauth/token', {
        rawBody: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt, client_id: f.clientId, client_secret: f.clientSecret }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const answers = await Promise.all(Array.from({ length: N }, () => refresh(f.refresh)));
    for (const a of answers) {
      if (a.status === 200) {
        expect(a.body.refresh_token).toMatch(/^cairn_ort_/);
        expect(a.body.access_token).toMatch(/^cairn_oat_/);
      } else expect({ status: a.status, error: a.body?.error }).toEqual({ status: 400, error: 'invalid_grant' });
    }
    const minted = answers.filter((a) => a.status === 200).map((a) => a.body.refresh_token as string);
    expect(minted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(minted).size).toBe(minted.length);
    // Exactly one live refresh token in the grant, and it is one of those answered.
    const hash = (t: string) => createHash('sha256').update(Buffer.from(t.slice('cairn_ort_'.length), 'base64url')).digest();
    const grant = rows<{ g: string }>('SELECT grant_id AS g FROM oauth_tokens WHERE secret_hash = ?', hash(f.refresh))[0]!.g;
    const live = rows<{ h: Buffer }>("SELECT secret_hash AS h FROM oauth_tokens WHERE grant_id = ? AND kind = 'refresh' AND rotated_at IS NULL AND wrapped_key IS NOT NULL", grant);
    expect(live).toHaveLength(1);
    const liveTokens = minted.filter((t) => hash(t).equals(live[0]!.h));
    expect(liveTokens).toHaveLength(1);
    // Past the grace: the live one works once; every other token seen is refused.
    app.clock.advance(31_000);
    const next = await refresh(liveTokens[0]!);
    expect(next.status, next.text).toBe(200);
    for (const t of [f.refresh, ...minted.filter((x) => x !== liveTokens[0])]) expect((await refresh(t)).body.error, t).toBe('invalid_grant');
  });
});
