// The web app's serving (app/serve.ts, docs/app.md "Serving"): the shell with the strict CSP and
// no cache, assets under hashed names cached for good, brotli and gzip as Accept-Encoding asks,
// and the public /.well-known/cairn that says whether sign-up is on.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** A raw GET (fetch would decode the body and hide Content-Encoding). */
function get(app: TestApp, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/app serving', () => {
  let app: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    app = await startApp();
    off = await startApp({ CAIRN_ALLOW_SIGNUP: 'false' });
  });
  afterAll(async () => {
    await app?.close();
    await off?.close();
  });

  it('serves the shell with the strict CSP, no inline script or style, never cached', async () => {
    const r = await get(app, '/app');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-frame-options']).toBe('DENY');
    const html = r.body.toString('utf8');
    expect(html).toMatch(/<script src="\/app\/assets\/app\.[0-9a-f]{12}\.js" defer><\/script>/);
    expect(html).not.toMatch(/<script>|<style>|style=/);
  });

  it('serves assets under hashed names, immutable, brotli or gzip as asked', async () => {
    const html = (await get(app, '/app')).body.toString('utf8');
    const js = /\/app\/assets\/app\.[0-9a-f]{12}\.js/.exec(html)![0];
    const css = /\/app\/assets\/app\.[0-9a-f]{12}\.css/.exec(html)![0];
    const plain = await get(app, js);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toMatch(/^application\/javascript/);
    const br = await get(app, js, { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    const gz = await get(app, js, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(gz.headers.vary).toBe('Accept-Encoding');
    // Issue 32 "Performance": the first view's JavaScript ≤ 150 KB gzipped.
    expect(gz.body.length).toBeLessThanOrEqual(150 * 1024);
    expect((await get(app, css)).headers['content-type']).toMatch(/^text\/css/);
    expect((await get(app, '/app/assets/app.000000000000.js')).status).toBe(404);
  });

  it('says whether sign-up is on at /.well-known/cairn (public)', async () => {
    expect(JSON.parse((await get(app, '/.well-known/cairn')).body.toString())).toMatchObject({ signup: true, app: `${app.url}/app` });
    expect(JSON.parse((await get(off, '/.well-known/cairn')).body.toString())).toMatchObject({ signup: false });
  });

  it('no longer serves the old console script', async () => {
    expect((await get(app, '/app/app.js')).status).toBe(404);
  });
});
