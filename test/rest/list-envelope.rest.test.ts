// Issue 28 item 10 (spec §4.1, docs/api.md "Wire conventions"): every list answers
// `{data, next_cursor}` and takes `limit` and `cursor`. The lists are found in /openapi.json, not
// named by hand: a GET whose 200 answer is not one resource (it has no `id` of its own) and holds
// an array of objects. The views (tag `views`) group to-dos by day or container in answers of
// their own shape (docs/api.md "Views") and are the one exception. Each list found is then called
// over HTTP with real ids in its path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { createEveryResource, fullUser, oauthFlow, paramCollections, type Owner } from '../helpers/resources.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let app: TestApp;
let doc: Json;
let owner: Owner;
let ids: Record<string, string>;

beforeAll(async () => {
  // Webhook subscriptions point at a loopback address (nothing is sent: no dispatcher runs here).
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
  doc = (await call(app, 'GET', '/openapi.json')).body;
  owner = await fullUser(app);
  ids = await createEveryResource(app, owner, 'envelope');
}, 60_000);
afterAll(() => app.close());

function resolve(schema: Json): Json {
  let s = schema;
  for (let i = 0; i < 10 && s?.$ref; i++) s = s.$ref.split('/').slice(1).reduce((o: Json, k: string) => o?.[k], doc);
  return s;
}

const isObjectSchema = (s: Json) => {
  const r = resolve(s);
  return r?.type === 'object' || !!r?.properties || (r?.anyOf ?? []).some((b: Json) => isObjectSchema(b));
};

/** The GET operations whose 200 answer is a list (see the header). */
function listOperations(): { path: string; op: Json; schema: Json }[] {
  const out: { path: string; op: Json; schema: Json }[] = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
    const op = ops.get;
    const schema = resolve(op?.responses?.['200']?.content?.['application/json']?.schema);
    if (!schema || op.tags?.includes('views')) continue;
    const props: Record<string, Json> = schema.properties ?? {};
    const arrayOfObjects = (s: Json) => resolve(s)?.type === 'array' && isObjectSchema(resolve(s).items);
    const isList = arrayOfObjects(schema) || (!('id' in props) && Object.values(props).some(arrayOfObjects));
    if (isList) out.push({ path, op, schema });
  }
  return out;
}

describe('every list in /openapi.json has the {data, next_cursor} envelope (issue 28 item 10)', () => {
  it('finds the lists, /v1/grants among them', () => {
    const paths = listOperations().map((l) => l.path);
    // The derivation is not vacuous: the lists every release has, and the one this issue fixed.
    expect(paths).toEqual(expect.arrayContaining(['/v1/todos', '/v1/tags', '/v1/keys', '/v1/grants', '/v1/notes/{id}/versions', '/v1/webhooks/{id}/deliveries']));
    expect(paths.length).toBeGreaterThanOrEqual(15);
  });

  it('each answers exactly {data: [...], next_cursor: string | null} and takes limit and cursor', () => {
    const wrong: string[] = [];
    for (const { path, op, schema } of listOperations()) {
      const props = schema.properties ?? {};
      const next = resolve(props.next_cursor);
      const nextTypes = new Set([next?.type, ...(next?.anyOf ?? []).map((b: Json) => b.type)].flat().filter(Boolean));
      const params = new Set((op.parameters ?? []).map((p: Json) => resolve(p)).filter((p: Json) => p.in === 'query').map((p: Json) => p.name));
      const shape = {
        keys: Object.keys(props).sort().join(','),
        required: [...(schema.required ?? [])].sort().join(','),
        data: resolve(props.data)?.type,
        nextCursor: [...nextTypes].sort().join('|'),
        limit: params.has('limit'),
        cursor: params.has('cursor'),
      };
      const want = { keys: 'data,next_cursor', required: 'data,next_cursor', data: 'array', nextCursor: 'null|string', limit: true, cursor: true };
      if (JSON.stringify(shape) !== JSON.stringify(want)) wrong.push(`GET ${path}: ${JSON.stringify(shape)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('each answers the envelope over HTTP, with a real id in its path', async () => {
    const seen: string[] = [];
    for (const { path, op } of listOperations()) {
      let url = path;
      for (const [param, collection] of Object.entries(paramCollections(path))) {
        const id = ids[collection];
        if (!id) throw new Error(`no ${collection} id for ${path}`);
        url = url.replace(`{${param}}`, id);
      }
      // Required query parameters (search's `q`) get their example, else a word.
      const required = (op.parameters ?? []).map((p: Json) => resolve(p)).filter((p: Json) => p.in === 'query' && p.required);
      const query = new URLSearchParams(required.map((p: Json) => [p.name, String(p.schema?.examples?.[0] ?? 'envelope')]));
      const res = await call(app, 'GET', `${url}${required.length ? `?${query}` : ''}`, { token: owner.pat });
      seen.push(`GET ${path} ${res.status} ${Object.keys(res.body ?? {}).sort().join(',')} ${Array.isArray(res.body?.data)}`);
    }
    expect(seen.filter((s) => !s.endsWith(' 200 data,next_cursor true'))).toEqual([]);
  });
});

describe('GET /v1/grants pages like every list', () => {
  it('limit=1 gives the oldest grant and a cursor to the next; the cursor is bound to the user', async () => {
    const u = await fullUser(app);
    const first = await oauthFlow(app, u);
    app.clock.advance(1000); // oldest first: the second grant is a second younger
    const second = await oauthFlow(app, u);
    const p1 = await call(app, 'GET', '/v1/grants?limit=1', { token: u.session });
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((g: Json) => g.client.id)).toEqual([first.clientId]);
    expect(p1.body.next_cursor).toEqual(expect.any(String));
    const p2 = await call(app, 'GET', `/v1/grants?limit=1&cursor=${encodeURIComponent(p1.body.next_cursor)}`, { token: u.session });
    expect(p2.body).toEqual({ data: [expect.objectContaining({ client: { id: second.clientId, name: 'Reliability App', verified: false } })], next_cursor: null });
    // The whole list in one page, with no query at all (the console's call).
    expect((await call(app, 'GET', '/v1/grants', { token: u.session })).body.data).toHaveLength(2);
    // Another user's cursor is refused; the old name `items` is gone.
    const other = await call(app, 'GET', `/v1/grants?cursor=${encodeURIComponent(p1.body.next_cursor)}`, { token: owner.session });
    expect(other.status).toBe(422);
    expect(other.body.errors[0].pointer).toBe('/cursor');
    expect(p1.body.items).toBeUndefined();
  });
});
