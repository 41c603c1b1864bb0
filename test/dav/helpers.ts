// Helpers for the CalDAV tests: an account with an app password, and DAV requests over real HTTP.
import type { TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';

export type DavUser = { session: string; userId: string; email: string; password: string; token: string; auth: string };

/** A fresh account and an app password (a personal token created for the dav door). */
export async function davUser(app: Pick<TestApp, 'url'>, email?: string, expiresInDays = 90): Promise<DavUser> {
  const u = await registerUser(app, email);
  const r = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: 'phone', expiresInDays, audience: 'dav' } });
  if (r.status !== 201) throw new Error(`dav key: ${r.status} ${r.text}`);
  const token = r.body.token as string;
  return { ...u, token, auth: basic(u.email, token) };
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

export type DavRes = { status: number; headers: Headers; text: string };

export async function dav(app: Pick<TestApp, 'url'>, method: string, path: string, opts: { auth?: string; body?: string; headers?: Record<string, string> } = {}): Promise<DavRes> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.auth) headers.authorization = opts.auth;
  if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = method === 'PUT' ? 'text/calendar; charset=utf-8' : 'application/xml; charset=utf-8';
  const res = await fetch(app.url + path, { method, headers, body: opts.body, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export const propfindBody = (...props: string[]) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:CS="http://calendarserver.org/ns/" xmlns:A="http://apple.com/ns/ical/"><D:prop>${props.map((p) => `<${p}/>`).join('')}</D:prop></D:propfind>`;

/** One VTODO in a VCALENDAR, CRLF lines. */
export function ics(lines: string[], extra: string[] = []): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...extra, 'BEGIN:VTODO', ...lines, 'END:VTODO', 'END:VCALENDAR', ''].join('\r\n');
}

/** The <D:response> blocks of a multistatus, as href → inner XML (a plain reading for assertions). */
export function responses(xml: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of xml.matchAll(/<D:response>([\s\S]*?)<\/D:response>/g)) {
    const href = /<D:href>([^<]*)<\/D:href>/.exec(m[1]!)![1]!;
    out.set(href, m[1]!);
  }
  return out;
}

export const etagIn = (block: string) => /<D:getetag>&quot;([^&]+)&quot;<\/D:getetag>/.exec(block)?.[1] ?? null;
