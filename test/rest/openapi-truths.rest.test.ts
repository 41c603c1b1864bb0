// Issue 28 items 11 and 12: what /openapi.json and /errors tell a user is true and readable.
// - POST /v1/auth/login documents the 401 it answers for a wrong email or password;
// - every date-only field and parameter has `format: date` and an example the server accepts
//   (Swagger UI made `0679-14-03` up from the bare pattern, and "Try it out" failed);
// - any method but POST at the raw upload paths is 405 with `Allow: POST` (not 422 at `/id`);
// - no served page or description cites documents users do not have ("spec §", "DECISIONS").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { ERROR_TABLE } from '../../core/errors.js';
import { isCalendarDate } from '../../core/calendar.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let app: TestApp;
let doc: Json;
beforeAll(async () => {
  app = await startApp();
  doc = (await call(app, 'GET', '/openapi.json')).body;
});
afterAll(() => app.close());

describe('POST /v1/auth/login: the 401 is answered and documented', () => {
  it('a wrong password and an unknown email answer 401 unauthorized, and the operation lists 401 as a problem', async () => {
    const u = await registerUser(app);
    expectProblem(await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'not the password' } }), 401, 'unauthorized');
    expectProblem(await call(app, 'POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password: 'not the password' } }), 401, 'unauthorized');
    const r401 = doc.paths['/v1/auth/login'].post.responses['401'];
    expect(r401?.content?.['application/problem+json']).toBeTruthy();
    expect(r401.description).toMatch(/email or password is wrong/);
  });
});

const DATE_NAMES = new Set(['whenDate', 'deadline', 'date', 'today', 'from', 'to', 'occursOn']);
const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';

/** Every date-only schema of the document: by its name (a property or parameter) or its pattern. */
function dateSchemas(): { where: string; schema: Json }[] {
  const out: { where: string; schema: Json }[] = [];
  const strings = (s: Json): Json[] => (s?.anyOf ? s.anyOf.flatMap(strings) : s && (s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'))) ? [s] : []);
  const walk = (node: Json, where: string, name?: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
    if (!node || typeof node !== 'object') return;
    if (name !== undefined && DATE_NAMES.has(name)) for (const s of strings(node)) out.push({ where, schema: s });
    else if (node.pattern === DATE_PATTERN || node.format === 'date') out.push({ where, schema: node });
    if (node.in && node.name && node.schema) walk(node.schema, `${where}/schema`, node.name); // a parameter
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties') for (const [p, ps] of Object.entries(v as Json)) walk(ps, `${where}/properties/${p}`, p);
      else if (k !== 'schema' || !node.in) walk(v, `${where}/${k}`);
    }
  };
  walk(doc.paths, '#/paths');
  walk(doc.components, '#/components');
  return out;
}

describe('date-only fields (issue 28 item 11)', () => {
  it('every one has format: date and an example that is a real YYYY-MM-DD date', () => {
    const found = dateSchemas();
    // The walk reaches inputs, outputs and query parameters alike.
    for (const w of ['/v1/todos/post/requestBody', '/v1/todos/{id}/get/responses', '/v1/views/upcoming/get/responses', '/v1/views/logbook/get/parameters', '/v1/todos/{id}/complete/post/parameters', '/v1/inbox/files/post/parameters']) {
      expect(found.some((f) => f.where.replace(/~1/g, '/').includes(w)), w).toBe(true);
    }
    const bad = found
      .filter(({ schema }) => !(schema.format === 'date' && typeof schema.examples?.[0] === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(schema.examples[0]) && isCalendarDate(schema.examples[0])))
      .map(({ where, schema }) => `${where}: ${JSON.stringify(schema)}`);
    expect(bad).toEqual([]);
  });

  it("the documented examples are accepted: a to-do made from the create body's examples is 201", async () => {
    const { session } = await registerUser(app);
    const props = doc.paths['/v1/todos'].post.requestBody.content['application/json'].schema.properties;
    const example = (p: Json) => (p.anyOf ?? [p]).find((b: Json) => b.examples)?.examples[0];
    const body = { title: 'from the examples', whenDate: example(props.whenDate), deadline: example(props.deadline) };
    expect(body.whenDate).toBe('2026-12-01');
    const r = await call(app, 'POST', '/v1/todos', { token: session, body });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ whenDate: body.whenDate, deadline: body.deadline });
    const today = doc.paths['/v1/views/today'].get.parameters.find((p: Json) => p.name === 'today').schema.examples[0];
    expect((await call(app, 'GET', `/v1/views/today?today=${today}`, { token: session })).status).toBe(200);
  });
});

describe('the raw upload paths take POST only (issue 28 item 11)', () => {
  it('GET, PATCH, PUT, DELETE at /v1/attachments/files and /v1/inbox/files are 405 with Allow: POST, credential or not', async () => {
    const { session } = await registerUser(app);
    const pat = (await createPat(app, session, ['attachments:read', 'attachments:write', 'inbox:read', 'inbox:write'])).token;
    for (const path of ['/v1/attachments/files', '/v1/inbox/files', '/v1/Attachments/FILES', '/v1/inbox/files/']) {
      for (const method of ['GET', 'PATCH', 'PUT', 'DELETE']) {
        for (const token of [pat, undefined]) {
          const r = await call(app, method, path, { token, ...(method === 'PATCH' || method === 'PUT' ? { body: {} } : {}) });
          expectProblem(r, 405, 'method_not_allowed');
          expect(`${method} ${path} ${r.headers.get('allow')}`).toBe(`${method} ${path} POST`);
        }
      }
    }
    // POST still uploads, and a real id at the `{id}` routes beside them still answers there.
    const up = await call(app, 'POST', '/v1/inbox/files?title=scan', { token: pat, rawBody: 'bytes', headers: { 'content-type': 'text/plain' } });
    expect(up.status, up.text).toBe(201);
    expect((await call(app, 'GET', `/v1/inbox/${up.body.id}`, { token: pat })).status).toBe(200);
    expect((await call(app, 'GET', `/v1/attachments/${up.body.attachmentId}`, { token: pat })).status).toBe(200);
  });
});

describe('user-facing text cites docs/, not documents users do not have (issue 28 item 12)', () => {
  const INTERNAL = /spec §|DECISIONS|API-SPEC|REST-FACADE|ARCHITECTURE\.md/;
  const hits = (where: string, text: string) => (text.match(new RegExp(`.{0,60}(${INTERNAL.source}).{0,40}`, 'g')) ?? []).map((m) => `${where}: ${m}`);

  it('no /errors page says "spec §" or "DECISIONS"', async () => {
    const found: string[] = [];
    const index = await fetch(`${app.url}/errors`);
    expect(index.status).toBe(200);
    found.push(...hits('/errors', await index.text()));
    for (const code of Object.keys(ERROR_TABLE)) {
      const r = await fetch(`${app.url}/errors/${code}`);
      expect(r.status).toBe(200);
      found.push(...hits(`/errors/${code}`, await r.text()));
    }
    expect(found).toEqual([]);
  });

  it('no string of /openapi.json (summaries, descriptions, problem texts) does either', () => {
    const found: string[] = [];
    const walk = (v: unknown, where: string) => {
      if (typeof v === 'string') found.push(...hits(where, v));
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}/${i}`));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${where}/${k}`);
    };
    walk(doc, '#');
    expect(found).toEqual([]);
    // The citations that replaced them point into docs/.
    expect(doc.components.responses.unauthorized.description).toContain('docs/security.md "Everything ends at once"');
  });
});
