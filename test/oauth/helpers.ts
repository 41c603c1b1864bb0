// OAuth test helpers: register a client, open the authorize page, approve over /v1, follow the wait.
import { createHash, randomBytes } from 'node:crypto';
import { call } from '../helpers/http.js';
import type { TestApp } from '../helpers/app.js';

export const REDIRECT = 'http://127.0.0.1:9/callback';

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(app: Pick<TestApp, 'url'>, body: Record<string, unknown> = {}) {
  const r = await call(app, 'POST', '/oauth/register', { body: { client_name: 'Test App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...body } });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
  return r.body as { client_id: string; client_secret?: string; redirect_uris: string[] };
}

export function authorizeUrl(app: Pick<TestApp, 'url' | 'deps'>, p: Record<string, string | undefined>): string {
  const u = new URL('/oauth/authorize', app.url);
  for (const [k, v] of Object.entries(p)) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

export type PageInfo = { status: number; html: string; headers: Headers; userCode?: string; handle?: string; location?: string | null };

export async function openAuthorize(url: string): Promise<PageInfo> {
  const res = await fetch(url, { redirect: 'manual' });
  const html = await res.text();
  const code = /id="user-code">(\d{3})-(\d{3})-(\d{3})</.exec(html);
  const handle = /data-wait="([A-Za-z0-9_-]+)"/.exec(html);
  return { status: res.status, html, headers: res.headers, userCode: code ? code.slice(1).join('') : undefined, handle: handle?.[1], location: res.headers.get('location') };
}

export async function waitPoll(app: Pick<TestApp, 'url'>, handle: string) {
  const r = await call(app, 'POST', '/oauth/authorize/wait', { rawBody: `handle=${handle}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  return r.body as { status: string; redirect?: string };
}

export async function token(app: Pick<TestApp, 'url'>, form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(app, 'POST', '/oauth/token', { rawBody: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
}

/** The whole dance without a library: returns the token response and what led to it. */
export async function authorizeAndApprove(app: TestApp, session: string, opts: { scopes?: string[]; grant?: string[]; client?: { client_id: string } } = {}) {
  const client = opts.client ?? (await register(app));
  const { verifier, challenge } = pkce();
  const scopes = opts.scopes ?? ['todos:read', 'todos:write'];
  const page = await openAuthorize(
    authorizeUrl(app, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: scopes.join(' '), resource: app.deps.config.publicUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'st8' }),
  );
  if (page.status !== 200 || !page.userCode || !page.handle) throw new Error(`authorize page: ${page.status} ${page.html.slice(0, 300)}`);
  const ok = await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: session, body: { scopes: opts.grant ?? scopes } });
  if (ok.status !== 200) throw new Error(`approve: ${ok.status} ${ok.text}`);
  const w = await waitPoll(app, page.handle);
  const code = new URL(w.redirect!).searchParams.get('code')!;
  return { client, verifier, code, page, redirect: w.redirect! };
}

export async function exchange(app: TestApp, a: { client: { client_id: string }; verifier: string; code: string }) {
  return token(app, { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, client_id: a.client.client_id, redirect_uri: REDIRECT, resource: app.deps.config.publicUrl });
}
