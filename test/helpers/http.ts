// Small HTTP helpers over real fetch to the test server.
import type { TestApp } from './app.js';
import { connect } from 'node:net';

export type Res<T = any> = { status: number; headers: Headers; body: T; text: string }; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function call<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  app: Pick<TestApp, 'url'>,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(app.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

let counter = 0;

/** Registers a fresh user over HTTP; returns its session token and id. */
export async function registerUser(app: Pick<TestApp, 'url'>, email?: string, password = 'correct horse battery staple') {
  const res = await call(app, 'POST', '/v1/auth/register', {
    body: { email: email ?? `user${++counter}-${Date.now()}@example.test`, password },
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { session: res.body.token as string, userId: res.body.user.id as string, email: res.body.user.email as string, password };
}

/** Creates a personal access token with the given scopes over HTTP. */
export async function createPat(app: Pick<TestApp, 'url'>, session: string, scopes: string[], expiresInDays = 30, name = 'test') {
  const res = await call(app, 'POST', '/v1/keys', { token: session, body: { name, scopes, expiresInDays } });
  if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${res.text}`);
  return res.body as { id: string; token: string; scopes: string[] };
}

/** Asserts the shape of a problem answer and returns it. */
export function expectProblem(res: Res, status: number, code: string) {
  if (res.status !== status || !res.headers.get('content-type')?.startsWith('application/problem+json')) {
    throw new Error(`expected ${status} ${code} problem, got ${res.status} ${res.headers.get('content-type')} ${res.text}`);
  }
  if (!String(res.body.type).endsWith(`/errors/${code}`)) throw new Error(`expected ${code}, got ${res.body.type}`);
  return res.body as { type: string; title: string; status: number; detail?: string; errors?: { pointer: string; message: string }[]; request_id: string };
}

/**
 * Sends bytes exactly as given over a socket (no URL normalisation, any bytes in the path) and
 * reads the answer until the server closes. For what fetch would rewrite or refuse to send.
 */
export function rawHttp(app: TestApp, head: string | Buffer, body: Buffer | string = ''): Promise<Res> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(Buffer.concat([Buffer.from(head as string), Buffer.from(body as string)]));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = all.slice(0, split).split('\r\n');
      const headers = new Headers();
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers.append(l.slice(0, i).trim(), l.slice(i + 1).trim());
      }
      let text = all.slice(split + 4);
      if (headers.get('transfer-encoding') === 'chunked') {
        let out = '';
        for (let rest = text; ; ) {
          const nl = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, nl), 16);
          if (!size) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 4 + size);
        }
        text = out;
      }
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: parsed, text });
    });
  });
}

/** A GET (or other body-less request) with the target sent verbatim. */
export function rawGet(app: TestApp, target: string, token?: string, method = 'GET'): Promise<Res> {
  const auth = token ? `Authorization: Bearer ${token}\r\n` : '';
  return rawHttp(app, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`);
}
