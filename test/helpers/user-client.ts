// A freshly registered user with request helpers bound to its session (views, filters, search
// and index tests): `raw` answers the response, `req` the body and throws on an error status.
import type { TestApp } from './app.js';
import { call, registerUser, type Res } from './http.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function userClient(app: Pick<TestApp, 'url'>) {
  const u = await registerUser(app);
  const raw = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Res> =>
    call(app, method, path, { token: u.session, body, ...(headers ? { headers } : {}) });
  const req = async (method: string, path: string, body?: unknown): Promise<Any> => {
    const r = await raw(method, path, body);
    if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  return { ...u, raw, req };
}
