// rest/trpc.ts shapes a failed call's error without entering problemScope (an AsyncLocalStorage
// whose first run() turns on async hooks for every promise of the process; docs/performance.md
// "Read path, 2026-11-23"). Its shape must be exactly what tRPC's getErrorShape gives through the
// router's error formatter inside that scope, for every kind of error a procedure throws; and a
// fast-path request, failed or not, must leave the scope unused.
import { executionAsyncId } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { getErrorShape, getTRPCErrorFromUnknown } from '@trpc/server/unstable-core-do-not-import';
import { appRouter } from '../../routers/index.js';
import { problemScope, type ProblemScope } from '../../routers/middleware/problems.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { fastErrorShape } from '../../rest/trpc.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';

const scope: ProblemScope = { publicUrl: 'https://cairn.example', requestId: 'req_shape', instance: '/trpc/todos.get' };

function viaFormatter(cause: unknown, path: string): unknown {
  const error = getTRPCErrorFromUnknown(cause);
  return problemScope.run(scope, () => getErrorShape({ config: appRouter._def._config, error, type: 'query', path, input: undefined, ctx: undefined }));
}

const zodError = (() => {
  try {
    z.object({ id: z.string().uuid() }).parse({ id: 'nope' });
  } catch (e) {
    return e;
  }
  throw new Error('unreachable');
})();

const causes: [string, unknown][] = [
  ['not found', notFound('To-do')],
  ['invalid with a pointer', invalid('/title', 'too long')],
  ['an app error with headers', new AppError('rate_limited', 'Slow down.', { headers: { 'Retry-After': '3' } })],
  ['a tRPC BAD_REQUEST from zod', new TRPCError({ code: 'BAD_REQUEST', cause: zodError as Error })],
  ['a tRPC UNAUTHORIZED', new TRPCError({ code: 'UNAUTHORIZED', message: 'who?' })],
  ['an unexpected error (500)', new Error('boom with a secret')],
];

// With promise hooks on (an AsyncLocalStorage that has run and is still enabled), a promise
// continuation runs under an async id; with them off, under 0.
const continuationId = () => new Promise<number>((resolve) => void Promise.resolve().then(() => resolve(executionAsyncId())));

/** Whether this Node's AsyncLocalStorage runs on async hooks (Node 20, 22), with its `enabled` field. */
const HOOK_BASED = typeof (problemScope as unknown as { enabled?: unknown }).enabled === 'boolean';

// First: the requests (the shape comparisons below enter the scope on purpose).
describe('fast-path requests leave problemScope unused', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.close());

  it('answers (a success, a 404, a batch with an error) without entering the AsyncLocalStorage', async () => {
    // Node 20's and 22's AsyncLocalStorage (on async hooks) says whether it was ever entered
    // (`enabled`). Node 24 runs it on AsyncContextFrame: no async hooks and no such field, so an
    // unused scope costs nothing there and this check has nothing to read.
    const entered = () => (problemScope as unknown as { enabled?: boolean }).enabled;
    if (HOOK_BASED) expect(typeof entered()).toBe('boolean');
    const u = await registerUser(app);
    const t = await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'scope' } });
    const input = (v: unknown) => encodeURIComponent(JSON.stringify({ json: v }));
    expect((await call(app, 'GET', `/trpc/todos.get?input=${input({ id: t.body.id })}`, { token: u.session })).status).toBe(200);
    const missing = await call(app, 'GET', `/trpc/todos.get?input=${input({ id: '00000000-0000-4000-8000-0000000000FF' })}`, { token: u.session });
    expect(missing.status).toBe(404);
    expect(missing.body.error.json.data.problem.instance).toBe('/trpc/todos.get');
    const batch = encodeURIComponent(JSON.stringify({ 0: { json: { id: t.body.id } }, 1: { json: { id: 'lower-case' } } }));
    expect((await call(app, 'GET', `/trpc/todos.get,todos.get?batch=1&input=${batch}`, { token: u.session })).status).toBe(207);
    if (HOOK_BASED) expect(entered()).toBe(false);
    else expect(await continuationId()).toBe(0);
  });
});

describe("tRPC's own adapter (the fallback) switches the scope off again", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.close());


  it('after an odd /trpc request (a path that names no procedure) has ended, promises run without async hooks', async () => {
    expect(await continuationId()).toBe(0);
    const u = await registerUser(app);
    const odd = await call(app, 'GET', '/trpc/no.such.procedure', { token: u.session });
    expect(odd.status).toBe(404);
    // The fallback still finishes its problems inside the scope.
    expect(odd.body.error.json.data.problem.instance).toBe('/trpc/no.such.procedure');
    expect(odd.body.error.json.data.problem.request_id).toBe(odd.headers.get('x-request-id'));
    // 'close' fires just after the answer: wait for it without sleeping on time.
    if (HOOK_BASED) {
      for (let i = 0; i < 100 && (problemScope as unknown as { enabled: boolean }).enabled; i++) await new Promise((r) => setImmediate(r));
      expect((problemScope as unknown as { enabled: boolean }).enabled).toBe(false);
    }
    // On every Node: after the request, promises run without async hooks.
    expect(await continuationId()).toBe(0);
  });
});

describe('fast-path error shapes', () => {
  it.each(causes)('%s: the same shape as the formatter inside problemScope', (_name, cause) => {
    const expected = viaFormatter(cause, 'todos.get');
    expect(fastErrorShape(getTRPCErrorFromUnknown(cause), 'todos.get', scope)).toEqual(expected);
    expect(JSON.stringify(fastErrorShape(getTRPCErrorFromUnknown(cause), 'todos.get', scope))).toBe(JSON.stringify(expected));
  });
});
