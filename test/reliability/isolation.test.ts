// Issue 18.3: isolation between users, driven by /openapi.json and the resource table
// (test/helpers/resources.ts). User A creates one of every resource with a content marker; user B,
// holding every scope (a PAT with all of them, and a session), calls every id-bearing operation
// with A's ids and gets 404 every time, and none of B's lists, views, search, filters or trash
// shows A's ids or marker. A new operation is covered without edits; one whose id names no known
// resource fails the first test until the table says how to make one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, type Res } from '../helpers/http.js';
import { loadOpenApi, operations, type Operation } from '../helpers/openapi.js';
import { sampleOf } from '../helpers/schema-arb.js';
import { createEveryResource, fullUser, hookPath, oauthFlow, NOT_ID_BEARING, paramCollections, RESOURCES, WEBHOOK_TARGET, type Owner } from '../helpers/resources.js';
import { selfSignedCert } from '../helpers/tls.js';
import { receiver, type Receiver } from '../webhooks/receiver.js';
import { createDispatcher } from '../../server/webhooks/dispatcher.js';
import { verifyWebhook } from '../../client/webhooks.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let app: TestApp;
let ops: Operation[];
let a: Owner;
let b: Owner;
let aIds: Record<string, string>;
let hooks: Receiver;
let bIds: Record<string, string>;
const MARKER = 'zqxA7marker';

beforeAll(async () => {
  // Webhook subscriptions of A and B point at one loopback HTTPS receiver (paths tell them apart).
  const cert = selfSignedCert();
  hooks = await receiver(cert, 200);
  WEBHOOK_TARGET.base = `https://127.0.0.1:${hooks.port}`;
  app = await startApp(
    { CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' },
    {},
    { outbound: { ca: cert.cert, resolver: async () => Promise.reject(Object.assign(new Error('no DNS in tests'), { code: 'ENOTFOUND' })) } },
  );
  ops = operations(await loadOpenApi(app.url));
  a = await fullUser(app);
  b = await fullUser(app);
  aIds = await createEveryResource(app, a, MARKER);
  // B owns things too, so its lists are not trivially empty.
  bIds = await createEveryResource(app, b, 'bmarker');
}, 60_000);
afterAll(async () => {
  await app?.close();
  await hooks?.close();
  WEBHOOK_TARGET.base = 'https://127.0.0.1:9';
});

/** A's ids for a collection: its own entry and sub-kinds (`attachments/files`). */
function idsOf(collection: string): string[] {
  return Object.entries(aIds)
    .filter(([k]) => k === collection || k.startsWith(collection + '/'))
    .map(([, v]) => v);
}

/**
 * An id nobody has, of the same shape as `id`: a fresh UUID for a UUID, else the part after the
 * last `_` with its digits and hex letters redrawn (`wh_<hex>`, `whd_<hex>`, a nine-digit code).
 */
function lookalike(id: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return randomUUID().toUpperCase();
  const cut = id.lastIndexOf('_') + 1;
  const pick = (set: string) => set[Math.floor(Math.random() * set.length)]!;
  return id.slice(0, cut) + id.slice(cut).replace(/[0-9]/g, () => pick('0123456789')).replace(/[a-f]/g, () => pick('abcdef'));
}

/** A body valid against the schema with only its required properties (seeded, reproducible). */
function minimalBody(op: Operation): unknown {
  if (!op.jsonBody) return undefined;
  const required: string[] = op.jsonBody.required ?? [];
  const props = Object.fromEntries(Object.entries(op.jsonBody.properties ?? {}).filter(([k]) => required.includes(k)));
  return sampleOf({ ...op.jsonBody, properties: props }, 7);
}

function leaks(r: Res): string[] {
  const all = Object.values(aIds);
  // A problem's `instance` echoes the request path (which holds the id B sent): not a leak.
  const text = r.body && typeof r.body === 'object' && 'instance' in r.body ? JSON.stringify({ ...r.body, instance: undefined }) : r.text;
  return [...all.filter((id) => text.includes(id)), ...(text.includes(MARKER) ? [MARKER] : [])];
}

describe('isolation (issue 18.3)', () => {
  it('every operation with a path id names a known resource (extend test/helpers/resources.ts when this fails)', () => {
    const missing: string[] = [];
    for (const op of ops) {
      for (const [param, coll] of Object.entries(paramCollections(op.path))) {
        if (!(coll in RESOURCES) && !(coll in NOT_ID_BEARING)) missing.push(`${op.method} ${op.path} {${param}} (collection "${coll}")`);
      }
    }
    expect(missing, 'operations whose id has no RESOURCES / NOT_ID_BEARING entry').toEqual([]);
    // The table made one of everything.
    for (const k of Object.keys(RESOURCES)) expect(aIds[k], k).toBeTruthy();
  });

  it("B, with every scope, gets 404 from every id-bearing operation given A's ids", async () => {
    const failures: string[] = [];
    const answers = new Map<string, { path: string; status: number; type: string }[]>();
    let tried = 0;
    let notFound = 0;
    for (const op of ops) {
      const params = paramCollections(op.path);
      const names = Object.keys(params);
      if (!names.length || names.some((n) => params[n]! in NOT_ID_BEARING)) continue;
      // Every combination of A's ids for the parameters (one or two parameters: small).
      let paths = [op.path];
      for (const n of names) paths = paths.flatMap((p) => idsOf(params[n]!).map((id) => p.replace(`{${n}}`, id)));
      // The same request with ids nobody has: B's answer for A's ids must be the same (a 404, or
      // the same validation refusal when the minimal body is refused before any lookup).
      let nobody = op.path;
      for (const n of names) nobody = nobody.replace(`{${n}}`, lookalike(idsOf(params[n]!)[0]!));
      for (const p of [...paths, nobody]) {
        for (const token of [b.pat, b.session]) {
          const query = op.params.filter((x) => x.in === 'query' && x.required).map((x) => `${x.name}=${x.schema?.enum?.[0] ?? 'x'}`);
          const body = minimalBody(op);
          const r = await call(app, op.method, p + (query.length ? `?${query.join('&')}` : ''), {
            token,
            ...(op.rawBody ? { rawBody: 'x', headers: { 'content-type': 'text/plain' } } : body !== undefined ? { body } : {}),
          });
          if (p === nobody) {
            const seen = answers.get(`${op.method} ${op.path} ${token}`) ?? [];
            for (const s of seen) if (s.status !== r.status || s.type !== r.body?.type) failures.push(`${op.method} ${s.path}: ${s.status} ${s.type}, but ${r.status} ${r.body?.type} for ids nobody has`);
            continue;
          }
          tried++;
          if (r.status === 404) notFound++;
          // 403 forbidden_scope: a first-party-only route (approvals) refuses B's PAT before any
          // lookup; the comparison with ids nobody has (above) proves it says nothing about A's.
          const firstPartyRefusal = r.status === 403 && token === b.pat && String(r.body?.type).endsWith('/forbidden_scope');
          if (r.status !== 404 && r.status !== 422 && !firstPartyRefusal) failures.push(`${op.method} ${p}: ${r.status} ${r.text.slice(0, 200)}`);
          if (leaks(r).length) failures.push(`${op.method} ${p}: leaks ${leaks(r).join(',')}`);
          answers.set(`${op.method} ${op.path} ${token}`, [...(answers.get(`${op.method} ${op.path} ${token}`) ?? []), { path: p, status: r.status, type: r.body?.type }]);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(tried).toBeGreaterThan(100);
    expect(notFound / tried).toBeGreaterThan(0.9);
  });

  it("A's ids given as references in B's bodies and queries are refused or ignored, never followed", async () => {
    const failures: string[] = [];
    const allA = Object.values(aIds);
    for (const op of ops) {
      if (Object.keys(paramCollections(op.path)).length || !op.secured) continue;
      // Query parameters that name ids (parent_id, heading_id, parentId, ...).
      const idQuery = op.params.filter((p) => p.in === 'query' && /(^id$|_id$|Id$)/.test(p.name));
      for (const q of idQuery) {
        for (const id of allA) {
          const other = op.params.filter((p) => p.in === 'query' && p.required && p !== q).map((p) => `${p.name}=${p.schema?.enum?.[0] ?? 'x'}`);
          const r = await call(app, op.method, `${op.path}?${[...other, `${q.name}=${id}`].join('&')}`, {
            token: b.pat,
            ...(op.rawBody ? { rawBody: 'x', headers: { 'content-type': 'text/plain' } } : op.jsonBody ? { body: minimalBody(op) } : {}),
          });
          if (r.status >= 500 || (op.method !== 'GET' && r.status < 300) || leaks(r).length) failures.push(`${op.method} ${op.path}?${q.name}=A: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
      // Body fields that name ids: a write referring to A's things must not succeed.
      const props = Object.keys(op.jsonBody?.properties ?? {}).filter((k) => /Id$|^after$|^before$/.test(k));
      for (const f of props) {
        for (const id of allA) {
          const r = await call(app, op.method, op.path, { token: b.pat, body: { ...(minimalBody(op) as object), [f]: id } });
          if (r.status < 400 || r.status >= 500 || leaks(r).length) failures.push(`${op.method} ${op.path} {${f}: A}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("no list, view, search, filter or trash of B shows A's ids or content", async () => {
    // Put A's things in the trash and logbook too, so trash and logbook have something to leak.
    await call(app, 'POST', `/v1/todos/${aIds.todos}/complete?today=2026-11-22`, { token: a.pat, body: {} });
    await call(app, 'POST', `/v1/notes/${aIds.notes}/trash`, { token: a.pat });
    const failures: string[] = [];
    let reads = 0;
    for (const op of ops) {
      if (op.method !== 'GET' || Object.keys(paramCollections(op.path)).length || !op.secured) continue;
      const variants: string[] = [''];
      const names = op.params.filter((p) => p.in === 'query').map((p) => p.name);
      if (names.includes('q')) variants.splice(0, 1, `q=${MARKER}`, 'q=todo', 'q=note', 'q=capture');
      if (names.includes('include_trashed')) variants.push(...variants.map((v) => (v ? `${v}&` : '') + 'include_trashed=true'));
      // Every documented value of an enum filter (status=completed, archived, ...).
      for (const p of op.params.filter((x) => x.in === 'query' && x.schema?.enum)) variants.push(...(p.schema.enum as string[]).map((e) => (names.includes('q') ? 'q=todo&' : '') + `${p.name}=${e}`));
      for (const v of variants) {
        let r = await call(app, 'GET', op.path + (v ? `?${v}` : ''), { token: b.pat });
        // A first-party-only read (GET /v1/export: B's whole account) is read with B's session.
        if (r.status === 403 && String(r.body?.type).endsWith('/forbidden_scope') && /first-party/.test(String(r.body?.detail))) {
          r = await call(app, 'GET', op.path + (v ? `?${v}` : ''), { token: b.session });
        }
        reads++;
        if (r.status !== 200 || leaks(r).length) failures.push(`GET ${op.path}?${v}: ${r.status} leaks ${leaks(r).join(',')} ${r.status !== 200 ? r.text.slice(0, 200) : ''}`);
      }
    }
    // B's saved filter over A's tag name.
    const f = await call(app, 'POST', '/v1/filters', { token: b.pat, body: { name: 'probe', criteria: `#"tag ${MARKER}"` } });
    expect(f.status).toBe(201);
    const todos = await call(app, 'GET', `/v1/filters/${f.body.id}/todos`, { token: b.pat });
    if (todos.status !== 200 || leaks(todos).length) failures.push(`filter todos: ${todos.status} ${todos.text.slice(0, 200)}`);
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(15);
    // And A does see its own things (the probe can find what it looks for).
    const own = await call<Any>(app, 'GET', `/v1/search?q=${MARKER}`, { token: a.pat });
    expect(own.text).toContain(aIds.todos);
  });

  it("no webhook delivery of B ever shows A's data (the dispatcher run as test/webhooks does)", async () => {
    // Events after both subscriptions exist, besides the ones made before (fanned out now too).
    expect((await call(app, 'POST', '/v1/tags', { token: a.pat, body: { name: `late ${MARKER}` } })).status).toBe(201);
    expect((await call(app, 'POST', '/v1/tags', { token: b.pat, body: { name: 'late b' } })).status).toBe(201);
    const d = createDispatcher(app.deps);
    try {
      await d.settle();
    } finally {
      d.stop();
    }
    const failures: string[] = [];
    const aAll = new Set(Object.values(aIds));
    // An event's user: the outbox row it came from, or, for a `webhook.ping` (queued straight to
    // its subscription, not through the outbox), the user owning the subscription it names.
    const ownerOfEvent = (id: string) =>
      (app.deps.db.$client.prepare('SELECT user_id AS u FROM outbox WHERE id = ?').get(id) as { u: string } | undefined)?.u ??
      (app.deps.db.$client.prepare("SELECT w.user_id AS u FROM webhook_deliveries d JOIN webhooks w ON w.id = d.object_id WHERE d.event_id = ? AND d.event_type = 'webhook.ping'").get(id) as { u: string } | undefined)?.u;
    const toA = hooks.got.filter((g) => g.path === hookPath(MARKER));
    const toB = hooks.got.filter((g) => g.path === hookPath('bmarker'));
    expect(toA.length + toB.length).toBe(hooks.got.length); // nothing went elsewhere
    for (const [who, got, owner, other] of [
      ['B', toB, b, a],
      ['A', toA, a, b],
    ] as const) {
      for (const g of got) {
        const env = JSON.parse(g.body);
        const t = Number(/t=(\d+)/.exec(String(g.headers['x-service-signature']))?.[1]) * 1000;
        if (!verifyWebhook(owner.webhook!.secret, g.headers, g.body, t).valid) failures.push(`${who}: delivery ${env.id} not signed with ${who}'s secret`);
        if (verifyWebhook(other.webhook!.secret, g.headers, g.body, t).valid) failures.push(`${who}: delivery ${env.id} verifies with the other user's secret`);
        if (env.data?.sub !== owner.userId) failures.push(`${who}: delivery ${env.id} is about user ${env.data?.sub}`);
        if (ownerOfEvent(env.id) !== owner.userId) failures.push(`${who}: event ${env.id} belongs to ${ownerOfEvent(env.id)}`);
      }
    }
    for (const g of toB) {
      if (g.body.includes(MARKER) || [...aAll].some((id) => g.body.includes(id))) failures.push(`B's delivery leaks A: ${g.body}`);
    }
    // B's delivery log lists only B's events, never one of A's, and no id of A.
    const log = await call(app, 'GET', `/v1/webhooks/${bIds.webhooks}/deliveries?limit=100`, { token: b.pat });
    expect(log.status).toBe(200);
    for (const x of log.body.data as { eventId: string }[]) if (ownerOfEvent(x.eventId) !== b.userId) failures.push(`B's delivery log lists event ${x.eventId} of ${ownerOfEvent(x.eventId)}`);
    if (leaks(log).length) failures.push(`B's delivery log leaks ${leaks(log).join(',')}`);
    expect(failures).toEqual([]);
    // The probe sees what it looks for: both got their own events, A's late tag included.
    expect(toB.length).toBeGreaterThan(5);
    expect(toA.length).toBeGreaterThan(5);
    expect(toA.some((g) => JSON.parse(g.body).type === 'tag.created')).toBe(true);
    expect(log.body.data.length).toBeGreaterThan(5);
  });

  it('a pending approval code is a bearer secret: whoever decides it owns the grant, and its tokens see only that user', async () => {
    // B (who holds the code shown on a page B opened) approves it: the grant and its tokens are
    // B's. A cannot look the decided code up, see the grant or revoke it; the token sees none of A.
    const f = await oauthFlow(app, b);
    expect((await call(app, 'GET', '/v1/me', { token: f.access })).body.sub).toBe(b.userId);
    const todos = await call(app, 'GET', '/v1/todos?limit=200', { token: f.access });
    expect(todos.status).toBe(200);
    expect(leaks(todos)).toEqual([]);
    expect((await call(app, 'GET', `/v1/approvals/${f.userCode}`, { token: a.session })).status).toBe(404);
    const grants = await call(app, 'GET', '/v1/grants', { token: a.session });
    expect(grants.text).not.toContain(f.clientId);
    const bGrant = (await call(app, 'GET', '/v1/grants', { token: b.session })).body.data.find((g: { client: { id: string } }) => g.client.id === f.clientId);
    expect((await call(app, 'DELETE', `/v1/grants/${bGrant.id}`, { token: a.session })).status).toBe(404);
    expect((await call(app, 'GET', '/v1/me', { token: f.access })).status).toBe(200);
  });
});

