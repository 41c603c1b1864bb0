// The sealed index's third tier (issue 29 item 4, routers/todo-index/storage.ts TIER): on a grown
// bucket a full delta is folded into the bucket's middle chunk ('~N', 't~N'), and the middle
// chunk into the base once past TIER.midMax entries. Every write path (create, patch, complete,
// delete, restamp by a tag delete and a heading delete) is taken through a bucket whose entries
// sit in all three tiers, and after each the chunks as kept up must equal the chunks rebuilt
// from the rows (no entry lost, none twice, none stale), the readers must answer the same from
// both, and reading must not have rebuilt anything (readers take the middle chunk into account).
// The tier's thresholds are lowered here so a test-sized bucket counts as grown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../helpers/app.js';
import { userClient } from '../helpers/user-client.js';
import { bucketOf, chunkFromPlain, DELTA_MAX, FORMAT, INDEX_TABLE, TIER } from '../../routers/todo-index/index.js';
import { open, rowAad } from '../../core/crypto/seal.js';
import { authenticate } from '../../routers/auth/credentials.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let app: TestApp;
const saved = { ...TIER };

beforeAll(async () => {
  app = await startApp();
  // Every bucket counts as grown; a middle chunk is folded into the base past 1.5 deltas.
  TIER.fromBytes = 0;
  TIER.midMax = DELTA_MAX + DELTA_MAX / 2;
});
afterAll(() => {
  Object.assign(TIER, saved);
  return app.close();
});

type Row = { id: string; sealed: Buffer };
const rowsOf = (userId: string) => app.deps.db.$client.prepare(`SELECT id, sealed FROM ${INDEX_TABLE} WHERE user_id = ? ORDER BY id`).all(userId) as Row[];

/** Tier of a chunk id: 0 base, 1 middle, 2 delta. */
const tier = (id: string) => (id.includes('+') ? 2 : id.includes('~') ? 1 : 0);

function entryAt(c: Any, k: number): Any {
  if (c.t) return { u: c.u[k], t: c.t[k], b: c.b[k] };
  return { u: c.u[k], s: c.s[k], f: c.f[k], p: c.p[k], w: c.w[k] ?? null, d: c.d[k] ?? null, c: c.c[k], r: c.r[k] ?? null, x: c.x[k] ?? null, parent: c.q[k] < 0 ? null : c.P[c.q[k]] };
}

/**
 * What the index holds, bucket by bucket, as readers see it: base entries, the middle chunk's
 * over them, the delta's over both. Also checks that no chunk holds an id twice.
 */
function logical(userId: string, dek: Buffer): Record<string, Record<string, Any>> {
  const out: Record<string, Record<string, Any>> = {};
  const rows = rowsOf(userId).sort((a, b) => tier(a.id) - tier(b.id));
  for (const r of rows) {
    const c = chunkFromPlain(r.id, open(dek, rowAad(userId, INDEX_TABLE, r.id), r.sealed)) as Any;
    expect(c.v).toBe(FORMAT);
    const ids: string[] = c.i === '' ? [] : c.i.split('\n');
    expect(new Set(ids).size).toBe(ids.length);
    const key = r.id.replace(/[+~]/, '');
    out[key] ??= {};
    ids.forEach((id, k) => (out[key]![id] = entryAt(c, k)));
  }
  for (const key of Object.keys(out)) if (!Object.keys(out[key]!).length) delete out[key];
  return out;
}

describe('the sealed index with a middle tier', () => {
  it('every write path through base, middle chunk and delta keeps the index equal to a rebuild from the rows', async () => {
    const u = await userClient(app);
    const dek = (await authenticate(app.deps, `Bearer ${u.session}`)).dek;
    const B = 11;
    const inB: string[] = [];
    while (inB.length < 4 * DELTA_MAX) {
      const id = randomUUID().toUpperCase();
      if (bucketOf(id) === B) inB.push(id);
    }
    const names = (r: Row[]) => r.map((x) => x.id);
    const answers = async () => ({
      open: (await u.req('GET', '/v1/todos?status=open&limit=200')).data.map((t: Any) => t.id).sort(),
      completed: (await u.req('GET', '/v1/todos?status=completed&limit=200')).data.map((t: Any) => t.id).sort(),
      search: (await u.req('GET', '/v1/search?q=tiered&limit=200')).data.map((h: Any) => h.id).sort(),
      overview: (await u.req('GET', '/v1/views/overview')).containers,
      anytime: (await u.req('GET', '/v1/views/anytime')).groups.flatMap((g: Any) => g.todos.map((t: Any) => t.id)).sort(),
    });
    // Every step below runs at a later time, so an entry a write failed to restamp is stale.
    /**
     * The index as kept up equals the index rebuilt from the rows, and the readers answer the
     * same from both; reading the kept-up index rebuilt nothing. The kept-up chunks are put back
     * afterwards, so the next step starts from the tiers the writes left.
     */
    const check = async (step: string, expectTiers: number[]) => {
      const kept = rowsOf(u.userId);
      expect([...new Set(kept.map((r) => tier(r.id)))].sort(), step).toEqual(expect.arrayContaining(expectTiers));
      const before = await answers();
      expect(rowsOf(u.userId), `${step}: a read rebuilt a chunk`).toEqual(kept);
      const want = logical(u.userId, dek);
      const sql = app.deps.db.$client;
      sql.prepare(`DELETE FROM ${INDEX_TABLE} WHERE user_id = ?`).run(u.userId);
      const after = await answers();
      expect(names(rowsOf(u.userId)).every((id) => tier(id) === 0), step).toBe(true);
      expect(logical(u.userId, dek), step).toEqual(want);
      expect(after, step).toEqual(before);
      sql.prepare(`DELETE FROM ${INDEX_TABLE} WHERE user_id = ?`).run(u.userId);
      const put = sql.prepare(`INSERT INTO ${INDEX_TABLE} (user_id, id, sealed) VALUES (?, ?, ?)`);
      for (const r of kept) put.run(u.userId, r.id, r.sealed);
    };
    const p = await u.req('POST', '/v1/containers', { kind: 'project', name: 'P' });
    const h = await u.req('POST', '/v1/headings', { projectId: p.id, name: 'H' });
    let heading: string | null = h.id;
    let n = 0;
    const create = async (id: string) => {
      const i = n++;
      await u.req('POST', '/v1/todos', {
        id,
        title: `tiered ${i}`,
        ...(i % 3 === 0 ? { whenDate: '2026-11-2' + (i % 10) } : {}),
        ...(i % 4 === 0 ? { deadline: '2026-12-0' + (1 + (i % 9)) } : {}),
        ...(i % 5 === 0 ? { someday: true } : {}),
        ...(i % 6 === 0 ? { priority: 'high', notes: `Notes ${i}` } : {}),
        ...(i % 7 === 0 ? { tags: ['t'] } : {}),
      });
      if (i % 8 === 0) await u.req('POST', `/v1/todos/${id}/move`, { parentId: p.id, ...(heading ? { headingId: heading } : {}) });
    };
    // Creates: the first DELTA_MAX + 1 fold the delta into the (new) middle chunk; the base holds
    // the bucket's first to-do only.
    for (let k = 0; k <= DELTA_MAX; k++) await create(inB[k]!);
    expect(names(rowsOf(u.userId))).toEqual(expect.arrayContaining([String(B), `~${B}`, `t${B}`, `t~${B}`]));
    for (let k = DELTA_MAX + 1; k < DELTA_MAX + 8; k++) await create(inB[k]!);
    await check('creates', [0, 1, 2]);
    app.clock.advance(1000);
    // Patches of entries in the middle chunk (and of the base's one entry): into the delta.
    for (const k of [0, 1, 2, 5, 9, DELTA_MAX + 2]) await u.req('PATCH', `/v1/todos/${inB[k]}`, { title: `tiered patched ${k}`, whenDate: null, evening: k % 2 === 0 });
    await check('patches', [0, 1, 2]);
    app.clock.advance(1000);
    // Completes (and a cancel) of entries in each tier.
    for (const k of [3, 4, 0, DELTA_MAX + 3]) await u.req('POST', `/v1/todos/${inB[k]}/complete`);
    await u.req('POST', `/v1/todos/${inB[6]}/cancel`);
    await check('completes', [0, 1, 2]);
    app.clock.advance(1000);
    // Deletes: an entry only in the middle chunk, one in the middle chunk and the delta, one only
    // in the delta.
    for (const k of [7, 1, DELTA_MAX + 4]) await u.req('DELETE', `/v1/todos/${inB[k]}`);
    await check('deletes', [0, 1, 2]);
    app.clock.advance(1000);
    // Restamps: a tag delete and a heading delete restamp (and move) their to-dos.
    const tag = (await u.req('GET', '/v1/tags')).data.find((x: Any) => x.name === 't');
    await u.req('DELETE', `/v1/tags/${tag.id}`);
    await check('tag delete', [0, 1, 2]);
    app.clock.advance(1000);
    await u.req('DELETE', `/v1/headings/${h.id}`);
    heading = null;
    await check('heading delete', [0, 1, 2]);
    app.clock.advance(1000);
    // More writes until middle chunk and delta pass TIER.midMax: both are folded into the base.
    let k = DELTA_MAX + 8;
    while (rowsOf(u.userId).some((r) => r.id === `~${B}`) && k < inB.length) await create(inB[k++]!);
    expect(names(rowsOf(u.userId))).not.toContain(`~${B}`);
    expect(names(rowsOf(u.userId))).not.toContain(`t~${B}`);
    await check('middle folded into the base', [0]);
    // And the next full delta starts a middle chunk again.
    for (let j = 0; j <= DELTA_MAX && k < inB.length; j++) await create(inB[k++]!);
    expect(names(rowsOf(u.userId))).toContain(`~${B}`);
    await check('a new middle chunk', [0, 1]);
  });

  it('small buckets keep two tiers: below TIER.fromBytes a full delta is folded into the base', async () => {
    TIER.fromBytes = 1 << 30;
    try {
      const u = await userClient(app);
      const B = 12;
      for (let made = 0; made <= DELTA_MAX; ) {
        const id = randomUUID().toUpperCase();
        if (bucketOf(id) !== B) continue;
        await u.req('POST', '/v1/todos', { id, title: `small ${made++}` });
      }
      const ids = rowsOf(u.userId).map((r) => r.id);
      expect(ids.some((id) => id.includes('~'))).toBe(false);
      expect(ids).not.toContain(`+${B}`);
    } finally {
      TIER.fromBytes = 0;
    }
  });
});
