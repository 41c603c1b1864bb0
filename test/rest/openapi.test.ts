// Issue 2 item 10: /openapi.json is a valid OpenAPI 3.1 document of every /v1 route, with real
// success codes, the Problem schema under application/problem+json and bearer security.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { REST_ROUTES } from '../../rest/routes.js';

let app: TestApp;
let doc: any; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  app = await startApp();
  doc = (await call(app, 'GET', '/openapi.json')).body;
});
afterAll(() => app.close());

describe('OpenAPI document', () => {
  it('validates against the OpenAPI 3.1 schema', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const v = new Validator();
    const res = await v.validate(structuredClone(doc));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
  });

  it('documents every registered route with its real success code and problems', () => {
    expect(REST_ROUTES.length).toBeGreaterThan(10);
    for (const r of REST_ROUTES) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path} missing`).toBeTruthy();
      const success = String(r.meta.successStatus ?? 200);
      expect(Object.keys(op.responses), `${r.method} ${r.path}`).toContain(success);
      if (success !== '200' && !(r.procedurePath === 'tags.create')) expect(op.responses['200']).toBeUndefined();
      if (success === '204') expect(op.responses['204'].content).toBeUndefined();
      expect(op.responses['422'].$ref).toBe('#/components/responses/validation_failed');
      if (!r.meta.public) {
        expect(op.security).toEqual([{ bearer: [] }]);
        expect(op.responses['401'].$ref).toBe('#/components/responses/unauthorized');
      } else {
        expect(op.security).toEqual([]);
      }
      expect(op['x-scopes']).toEqual(r.meta.scopes ?? []);
    }
  });

  it('describes problems as application/problem+json with the spec §2.13 fields', () => {
    const p = doc.components.schemas.Problem;
    expect(p.required).toEqual(['type', 'title', 'status']);
    expect(Object.keys(p.properties)).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'instance', 'request_id', 'errors']));
    expect(doc.components.responses.not_found.content['application/problem+json'].schema.$ref).toBe('#/components/schemas/Problem');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents no route the server does not serve', () => {
    const served = new Set(REST_ROUTES.map((r) => `${r.method.toLowerCase()} ${r.path}`));
    const plain = new Set(['get /healthz', 'get /.well-known/oauth-protected-resource', 'get /.well-known/oauth-authorization-server', 'get /errors/{code}', 'get /errors', 'get /openapi.json', 'post /v1/attachments/files', 'post /v1/inbox/files', 'get /v1/attachments/{id}/file', 'get /v1/export', 'post /v1/imports']);
    for (const [path, ops] of Object.entries(doc.paths as Record<string, object>)) {
      for (const m of Object.keys(ops)) {
        const key = `${m} ${path}`;
        expect(served.has(key) || plain.has(key), key).toBe(true);
      }
    }
  });

  it('renders docs at /docs', async () => {
    const r = await fetch(`${app.url}/docs/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('swagger-ui');
  });
});
