// Issue 11.8: answers holding a token or secret are never stored by caches (on /v1 and /trpc),
// and HTML pages refuse sniffing, framing and anything not from this origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { REST_ROUTES } from '../../rest/routes.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const pw = 'correct horse battery staple';

async function trpcPost(proc: string, input: unknown, token?: string) {
  const res = await fetch(`${app.url}/trpc/${proc}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ json: input }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { result?: { data: { json: Record<string, unknown> } } } };
}

describe('Cache-Control: no-store on answers carrying a secret (issue 11.8)', () => {
  it('the routes marked secretInAnswer are the ones that hand out tokens', () => {
    expect(REST_ROUTES.filter((r) => r.meta.secretInAnswer).map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'POST /v1/auth/login',
      'POST /v1/auth/password',
      'POST /v1/auth/register',
      'POST /v1/auth/rotate-key',
      'POST /v1/keys',
      'POST /v1/webhooks',
      'POST /v1/webhooks/{id}/rotate-secret',
    ]);
  });

  it('over /v1: register, login, password change, rotate-key and key creation; not an ordinary read', async () => {
    const email = 'nostore-v1@example.test';
    const reg = await call(app, 'POST', '/v1/auth/register', { body: { email, password: pw } });
    expect(reg.status).toBe(201);
    const login = await call(app, 'POST', '/v1/auth/login', { body: { email, password: pw } });
    const key = await call(app, 'POST', '/v1/keys', { token: login.body.token, body: { name: 'k', scopes: ['tags:read'], expiresInDays: 30 } });
    const changed = await call(app, 'POST', '/v1/auth/password', { token: login.body.token, body: { currentPassword: pw, newPassword: pw + ' 2' } });
    const rotated = await call(app, 'POST', '/v1/auth/rotate-key', { token: changed.body.token, body: { password: pw + ' 2' } });
    for (const [name, r, status] of [['register', reg, 201], ['login', login, 200], ['keys', key, 201], ['password', changed, 200], ['rotate-key', rotated, 200]] as const) {
      expect({ name, status: r.status, cacheControl: r.headers.get('cache-control') }).toEqual({ name, status, cacheControl: 'no-store' });
    }
    const read = await call(app, 'GET', '/v1/tags', { token: rotated.body.token });
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBeNull();
  });

  it('over /trpc: the same procedures', async () => {
    const email = 'nostore-trpc@example.test';
    const reg = await trpcPost('auth.register', { email, password: pw });
    const login = await trpcPost('auth.login', { email, password: pw });
    const token = login.body.result!.data.json.token as string;
    const key = await trpcPost('keys.create', { name: 'k', scopes: ['tags:read'], expiresInDays: 30 }, token);
    const changed = await trpcPost('auth.changePassword', { currentPassword: pw, newPassword: pw + ' 2' }, token);
    const t2 = changed.body.result?.data.json.token as string;
    const rotated = await trpcPost('auth.rotateKey', { password: pw + ' 2' }, t2);
    for (const [name, r] of [['register', reg], ['login', login], ['keys', key], ['password', changed], ['rotate-key', rotated]] as const) {
      expect({ name, status: r.status, cacheControl: r.headers.get('cache-control') }).toEqual({ name, status: 200, cacheControl: 'no-store' });
    }
    const read = await fetch(`${app.url}/trpc/tags.list?input=${encodeURIComponent('{"json":{}}')}`, { headers: { authorization: `Bearer ${rotated.body.result!.data.json.token}` } });
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBeNull();
  });
});

describe('HTML pages (issue 11.8)', () => {
  it('/docs, its assets, /errors and /errors/<code> send nosniff, a same-origin CSP and refuse framing', async () => {
    const docs = await fetch(`${app.url}/docs/`);
    const html = await docs.text();
    expect(docs.headers.get('content-type')).toContain('text/html');
    const assets = [...html.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(3);
    // Everything the page loads is relative, so 'self' covers it; no inline script to allow.
    for (const a of assets) expect(a).toMatch(/^\.\/|^#/);
    expect(html).not.toMatch(/<script>(?!\s*<\/script>)/);
    const init = await (await fetch(`${app.url}/docs/swagger-ui-init.js`)).text();
    expect(init).toContain('"validatorUrl": null');
    const pages = ['/docs/', '/docs/swagger-ui-init.js', '/errors', '/errors/not_found'];
    for (const p of pages) {
      const r = await fetch(app.url + p);
      expect({ p, status: r.status }).toEqual({ p, status: 200 });
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'/);
      expect(csp.match(/script-src[^;]*/)![0]).not.toContain('unsafe-inline');
    }
  });
});
