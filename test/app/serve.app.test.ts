// The web app's serving (app/serve.ts, docs/app.md "Serving"): the shell with the strict CSP and
// no cache, assets under hashed names cached for good, brotli and gzip as Accept-Encoding asks,
// and the public /.well-known/cairn that says whether sign-up is on; the manifest, its icons and the
// service worker's script (docs/app.md "Installable and offline").
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
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

/** Static (`import … from "./x.js"`, `import "./x.js"`) and dynamic (`import("./x.js")`) imports of an ES module chunk. */
function importsOf(js: string): { statics: string[]; dynamics: string[] } {
  const statics = [...js.matchAll(/\bimport\s*(?:[^"'();]*?\bfrom\s*)?["']\.\/([^"']+)["']/g)].map((m) => m[1]!);
  const dynamics = [...js.matchAll(/\bimport\(\s*["']\.\/([^"']+)["']\s*\)/g)].map((m) => m[1]!);
  return { statics, dynamics };
}

/**
 * The chunks reachable from the entry, each once with its gzipped size as served: `first` is the
 * entry and what it imports statically, transitively (what the first view loads); `all` adds what
 * `import()` loads later.
 */
async function chunksFrom(app: TestApp, entry: string): Promise<{ first: Map<string, number>; all: Set<string> }> {
  const first = new Map<string, number>();
  const all = new Set<string>();
  const walk = async (name: string, initial: boolean) => {
    if (initial ? first.has(name) : all.has(name)) return;
    const gz = await get(app, `/app/assets/${name}`, { 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const { statics, dynamics } = importsOf(gunzipSync(gz.body).toString('utf8'));
    if (initial) first.set(name, gz.body.length);
    all.add(name);
    for (const s of statics) await walk(s, initial);
    for (const d of dynamics) await walk(d, false);
  };
  await walk(entry, true);
  return { first, all };
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
    // The entry as a module script (ES modules, split; script-src 'self' covers it and its imports).
    expect(html).toMatch(/<script type="module" src="\/app\/assets\/app\.[0-9A-Z]{8}\.js"><\/script>/);
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html).not.toMatch(/<script>|<style>|style=/);
  });

  it('serves assets under hashed names, immutable, brotli or gzip as asked', async () => {
    const html = (await get(app, '/app')).body.toString('utf8');
    const js = /\/app\/assets\/app\.[0-9A-Z]{8}\.js/.exec(html)![0];
    const css = /\/app\/assets\/app\.[0-9A-Z]{8}\.css/.exec(html)![0];
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
    expect((await get(app, css)).headers['content-type']).toMatch(/^text\/css/);
    expect((await get(app, '/app/assets/app.AAAAAAAA.js')).status).toBe(404);
    expect((await get(app, '/app/assets/..%2Fserve.js')).status).toBe(404);
  });

  it('splits the script: the first view loads the entry and its static imports (≤ 150 KB gzipped), the rest is loaded by import() when used', async () => {
    const html = (await get(app, '/app')).body.toString('utf8');
    const entry = /<script type="module" src="\/app\/assets\/([^"]+)">/.exec(html)![1]!;
    const { first, all } = await chunksFrom(app, entry);
    // Issue 32 "Performance": the first view's JavaScript ≤ 150 KB gzipped, every file it loads before it runs.
    const total = [...first.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(150 * 1024);
    // The shell preloads exactly the entry's static imports (they download beside it).
    const preloads = [...html.matchAll(/<link rel="modulepreload" href="\/app\/assets\/([^"]+)">/g)].map((m) => m[1]!);
    expect(preloads.sort()).toEqual([...first.keys()].filter((n) => n !== entry).sort());
    // Some chunks are left for later (the Markdown renderer, Settings, the quick-entry parser).
    const later = [...all].filter((n) => !first.has(n));
    expect(later.length).toBeGreaterThanOrEqual(3);
    const text = async (n: string) => gunzipSync((await get(app, `/app/assets/${n}`, { 'accept-encoding': 'gzip' })).body).toString('utf8');
    const firstText = (await Promise.all([...first.keys()].map(text))).join('\n');
    const laterText = (await Promise.all(later.map(text))).join('\n');
    // marked and DOMPurify (their own words) are not in the first view, but in a later chunk.
    for (const word of ['marked(): input parameter is undefined or null', 'DOMPurify']) {
      expect(firstText).not.toContain(word);
      expect(laterText).toContain(word);
    }
  });

  it('says whether sign-up is on at /.well-known/cairn (public)', async () => {
    expect(JSON.parse((await get(app, '/.well-known/cairn')).body.toString())).toMatchObject({ signup: true, app: `${app.url}/app` });
    expect(JSON.parse((await get(off, '/.well-known/cairn')).body.toString())).toMatchObject({ signup: false });
  });

  it('links the manifest, the icon and a theme colour for light and dark; the CSP lets the manifest and worker come from this origin only', async () => {
    const r = await get(app, '/app');
    const html = r.body.toString('utf8');
    expect(html).toContain('<link rel="manifest" href="/app/manifest.webmanifest">');
    expect(html).toMatch(/<link rel="icon" type="image\/png" href="\/app\/assets\/icon-192\.[0-9a-f]{12}\.png">/);
    expect(html).toContain('<meta name="theme-color" media="(prefers-color-scheme: light)" content="#ffffff">');
    expect(html).toContain('<meta name="theme-color" media="(prefers-color-scheme: dark)" content="#17191c">');
    const csp = String(r.headers['content-security-policy']).split('; ');
    expect(csp).toContain("manifest-src 'self'");
    expect(csp).toContain("worker-src 'self'");
  });

  it('serves the manifest (Cairn, /app, standalone) and its two PNG icons under hashed names', async () => {
    const r = await get(app, '/app/manifest.webmanifest', { 'accept-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/manifest\+json/);
    expect(r.headers['cache-control']).toBe('no-cache');
    const m = JSON.parse(gunzipSync(r.body).toString('utf8'));
    expect(m).toMatchObject({ name: 'Cairn', short_name: 'Cairn', id: '/app', start_url: '/app', scope: '/app', display: 'standalone', theme_color: '#ffffff', background_color: '#ffffff' });
    const icons = m.icons as { src: string; sizes: string; type: string; purpose: string }[];
    expect(icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual(['192x192 any', '192x192 maskable', '512x512 any', '512x512 maskable']);
    for (const i of icons) {
      expect(i.src).toMatch(new RegExp(`^/app/assets/icon-${i.sizes.split('x')[0]}\\.[0-9a-f]{12}\\.png$`));
      const png = await get(app, i.src, { 'accept-encoding': 'gzip, br' });
      expect(png.status).toBe(200);
      expect(png.headers['content-type']).toBe('image/png');
      expect(png.headers['content-encoding']).toBeUndefined(); // already deflated
      expect(png.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      // A real PNG of the size it claims: signature, IHDR (RGBA, 8 bits), and rows that inflate to size × (1 + 4 × size) bytes.
      const b = png.body;
      expect(b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
      expect(b.toString('latin1', 12, 16)).toBe('IHDR');
      const side = Number(i.sizes.split('x')[0]);
      expect([b.readUInt32BE(16), b.readUInt32BE(20), b[24], b[25]]).toEqual([side, side, 8, 6]);
      const idat = b.indexOf('IDAT', 0, 'latin1');
      expect(inflateSync(b.subarray(idat + 4, idat + 4 + b.readUInt32BE(idat - 4))).length).toBe(side * (1 + 4 * side));
    }
  });

  it('serves the service worker at /app/sw.js for scope /app, never cached by HTTP, listing only the shell and the current hashed files', async () => {
    const r = await get(app, '/app/sw.js');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/javascript/);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['service-worker-allowed']).toBe('/app');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(String(r.headers['content-security-policy'])).toContain("connect-src 'self'");
    const text = r.body.toString('utf8');
    const list = JSON.parse(/^var CAIRN_SHELL=(\{.*?\});\n/.exec(text)![1]!) as { cache: string; network: string[]; hashed: string[] };
    expect(list.cache).toMatch(/^cairn-shell-[0-9a-f]{12}$/);
    expect(list.network).toEqual(['/app', '/app/manifest.webmanifest']);
    // Exactly the names the shell and the manifest use now.
    const html = (await get(app, '/app')).body.toString('utf8');
    const m = JSON.parse((await get(app, '/app/manifest.webmanifest')).body.toString('utf8')) as { icons: { src: string }[] };
    const current = [...html.matchAll(/"(\/app\/assets\/app\.[0-9A-Z]{8}\.(?:js|css))"/g)].map((x) => x[1]!);
    expect(current).toHaveLength(2);
    // Every chunk the entry can reach, the ones import() loads later too: offline after the first load.
    const { all } = await chunksFrom(app, current.find((c) => c.endsWith('.js'))!.slice('/app/assets/'.length));
    expect(all.size).toBeGreaterThan(3);
    expect([...list.hashed].sort()).toEqual([...new Set([...current, ...[...all].map((n) => `/app/assets/${n}`), ...m.icons.map((i) => i.src)])].sort());
    // Nothing of the API: not by name, not by prefix.
    for (const p of [...list.network, ...list.hashed]) {
      expect(p).toMatch(/^\/app(\/|$)/);
      expect((await get(app, p)).status).toBe(200); // the worker's install (cache.addAll) needs every one
    }
    expect(text).toMatch(/trpc\|v1\|\\\.well-known/); // the worker's own refusal of those paths
    // The same process serves the same worker (the browser compares bytes to notice a deploy).
    expect((await get(app, '/app/sw.js')).body.equals(r.body)).toBe(true);
    const br = await get(app, '/app/sw.js', { 'accept-encoding': 'br' });
    expect(brotliDecompressSync(br.body).equals(r.body)).toBe(true);
  });

  it('no longer serves the old console script', async () => {
    expect((await get(app, '/app/app.js')).status).toBe(404);
  });
});
