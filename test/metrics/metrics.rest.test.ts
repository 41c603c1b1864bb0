// Issue 33 item 4 (docs/operations.md "Metrics", server/metrics.ts): GET /metrics in Prometheus
// text, off unless CAIRN_METRICS=1, answered to loopback (the socket's address; a forwarding
// header means a proxy, so not local) or to the bearer of CAIRN_METRICS_TOKEN, and labelled only by
// route template, method and status: no user id, email, id or content ever appears in it.
import { statSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { createEveryResource, fullUser, type Owner } from '../helpers/resources.js';
import { ConfigError, loadConfig } from '../../core/config.js';
import { mayRead, routeLabel } from '../../server/metrics.js';
import { JOBS, runJob } from '../../server/jobs/scheduler.js';
import { createDispatcher } from '../../server/webhooks/dispatcher.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789abcdef';

/** One sample's value, by metric name and its exact label set as printed (`{a="x",b="y"}`), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const scrape = (app: TestApp, headers: Record<string, string> = {}) => call(app, 'GET', '/metrics', { headers });

describe('off unless CAIRN_METRICS=1', () => {
  let app: TestApp;
  afterEach(async () => app.close());

  it('answers 404 as any unknown path when off (the default)', async () => {
    app = await startApp();
    const res = await scrape(app);
    const problem = expectProblem(res, 404, 'not_found');
    const other = expectProblem(await call(app, 'GET', '/no-such-path'), 404, 'not_found');
    expect(problem.detail).toBe(other.detail);
  });

  it('answers Prometheus text to a loopback client when on', async () => {
    app = await startApp({ CAIRN_METRICS: '1' });
    await call(app, 'GET', '/healthz');
    const res = await scrape(app);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // prom-client's process defaults, and each of Cairn's families.
    for (const family of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'cairn_http_requests_total', 'cairn_http_request_duration_seconds', 'cairn_sqlite_file_bytes', 'cairn_webhook_queue_depth', 'cairn_webhook_deliveries_failed', 'cairn_webhook_subscriptions', 'cairn_webhook_attempts_total', 'cairn_job_runs_total', 'cairn_credentials_active']) {
      expect(res.text, family).toContain(`# TYPE ${family} `);
    }
    expect(sample(res.text, 'cairn_http_requests_total', '{route="healthz",method="GET",status="200"}')).toBe(1);
    expect(sample(res.text, 'cairn_http_request_duration_seconds_count', '{route="healthz",method="GET"}')).toBe(1);
  });

  it('refuses other methods with 405 and Allow', async () => {
    app = await startApp({ CAIRN_METRICS: '1' });
    const res = await call(app, 'POST', '/metrics');
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('who may read it', () => {
  let app: TestApp;
  afterEach(async () => app.close());

  it('a loopback request that came through a proxy (a forwarding header) is not local: 404 without a token', async () => {
    // CAIRN_TRUST_PROXY=loopback: X-Forwarded-For is believed for rate limits, and still never opens /metrics.
    app = await startApp({ CAIRN_METRICS: '1', CAIRN_TRUST_PROXY: 'loopback' });
    expectProblem(await scrape(app, { 'x-forwarded-for': '203.0.113.7' }), 404, 'not_found');
    expectProblem(await scrape(app, { 'x-forwarded-for': '127.0.0.1' }), 404, 'not_found');
    expectProblem(await scrape(app, { forwarded: 'for=127.0.0.1' }), 404, 'not_found');
    expectProblem(await scrape(app, { 'x-real-ip': '127.0.0.1' }), 404, 'not_found');
    // A bearer token when none is configured opens nothing.
    expectProblem(await scrape(app, { 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${TOKEN}` }), 404, 'not_found');
    expect((await scrape(app)).status).toBe(200);
  });

  it('with CAIRN_METRICS_TOKEN: the right bearer token is answered, a wrong or missing one gets 401', async () => {
    app = await startApp({ CAIRN_METRICS: '1', CAIRN_METRICS_TOKEN: TOKEN });
    const remote = { 'x-forwarded-for': '203.0.113.7' };
    expect((await scrape(app, { ...remote, authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await scrape(app, { ...remote, authorization: `bearer ${TOKEN}` })).status).toBe(200);
    const wrong = await scrape(app, { ...remote, authorization: `Bearer ${TOKEN.slice(0, -1)}x` });
    expectProblem(wrong, 401, 'unauthorized');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expectProblem(await scrape(app, { ...remote, authorization: `Bearer ${TOKEN}extra` }), 401, 'unauthorized');
    expectProblem(await scrape(app, { ...remote, authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }), 401, 'unauthorized');
    expectProblem(await scrape(app, remote), 401, 'unauthorized');
    // Loopback needs no token.
    expect((await scrape(app)).status).toBe(200);
  });

  it('reads the socket address: remote peers need the token, whatever they claim', () => {
    const req = (remoteAddress: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;
    for (const local of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(mayRead(req(local), undefined), local).toBe(true);
    for (const remote of ['203.0.113.9', '10.0.0.2', '::ffff:10.0.0.2', '2001:db8::1', '::']) {
      expect(mayRead(req(remote), undefined), remote).toBe(false);
      expect(mayRead(req(remote, { 'x-forwarded-for': '127.0.0.1' }), TOKEN), remote).toBe(false);
      expect(mayRead(req(remote, { authorization: `Bearer ${TOKEN}` }), TOKEN), remote).toBe(true);
    }
  });

  it('refuses a token shorter than 32 characters at start-up', () => {
    expect(() => loadConfig({ CAIRN_METRICS: '1', CAIRN_METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(loadConfig({ CAIRN_METRICS: '1', CAIRN_METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
    expect(loadConfig({}).metrics).toBe(false);
  });
});

describe('what it counts', () => {
  let app: TestApp;
  afterEach(async () => app.close());

  it('requests by procedure and status, SQLite sizes, job runs', async () => {
    app = await startApp({ CAIRN_METRICS: '1' });
    const u = await registerUser(app);
    const todo = await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'hello' } });
    expect(todo.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await call(app, 'GET', `/v1/todos/${todo.body.id}`, { token: u.session })).status).toBe(200);
    const gone = await call(app, 'POST', '/v1/todos', { token: u.session, body: { title: 'gone' } });
    expect((await call(app, 'DELETE', `/v1/todos/${gone.body.id}`, { token: u.session })).status).toBe(204);
    expect((await call(app, 'GET', `/v1/todos/${gone.body.id}`, { token: u.session })).status).toBe(404);
    // The same procedure through /trpc carries the same route label.
    const input = encodeURIComponent(JSON.stringify({ json: { id: todo.body.id } }));
    expect((await call(app, 'GET', `/trpc/todos.get?input=${input}`, { token: u.session })).status).toBe(200);
    for (const job of JOBS) runJob(app.deps, job);

    const text = (await scrape(app)).text;
    expect(sample(text, 'cairn_http_requests_total', '{route="todos.get",method="GET",status="200"}')).toBe(4);
    expect(sample(text, 'cairn_http_requests_total', '{route="todos.get",method="GET",status="404"}')).toBe(1);
    expect(sample(text, 'cairn_http_requests_total', '{route="todos.create",method="POST",status="201"}')).toBe(2);
    expect(sample(text, 'cairn_http_request_duration_seconds_count', '{route="todos.get",method="GET"}')).toBe(5);
    expect(sample(text, 'cairn_http_request_duration_seconds_bucket', '{le="+Inf",route="todos.get",method="GET"}')).toBe(5);
    expect(sample(text, 'cairn_sqlite_file_bytes', '{file="db"}')).toBe(statSync(app.deps.config.dbFile).size);
    expect(sample(text, 'cairn_sqlite_file_bytes', '{file="wal"}')).toBe(statSync(`${app.deps.config.dbFile}-wal`).size);
    for (const job of JOBS) expect(sample(text, 'cairn_job_runs_total', `{job="${job.name}",result="ok"}`), job.name).toBe(1);
  });

  it('a failing job counts as failed', async () => {
    app = await startApp({ CAIRN_METRICS: '1' });
    runJob(app.deps, {
      name: 'test-failing-job',
      everyMs: 1,
      run: () => {
        throw new Error('boom');
      },
    });
    runJob(app.deps, { name: 'test-rows-job', everyMs: 1, run: () => 7 });
    const text = (await scrape(app)).text;
    expect(sample(text, 'cairn_job_runs_total', '{job="test-failing-job",result="failed"}')).toBe(1);
    expect(sample(text, 'cairn_job_rows_total', '{job="test-rows-job"}')).toBe(7);
  });

  it('credentials active: sessions and tokens not revoked and not expired (the injected clock)', async () => {
    app = await startApp({ CAIRN_METRICS: '1' });
    const a = await registerUser(app);
    await registerUser(app);
    const pat = await createPat(app, a.session, ['todos:read']);
    let text = (await scrape(app)).text;
    expect(sample(text, 'cairn_credentials_active', '{kind="session",audience="rest"}')).toBe(2);
    expect(sample(text, 'cairn_credentials_active', '{kind="pat",audience="rest"}')).toBe(1);
    expect(sample(text, 'cairn_credentials_active', '{kind="pat",audience="dav"}')).toBe(0);
    expect((await call(app, 'DELETE', `/v1/keys/${pat.id}`, { token: a.session })).status).toBe(204);
    text = (await scrape(app)).text;
    expect(sample(text, 'cairn_credentials_active', '{kind="pat",audience="rest"}')).toBe(0);
    app.clock.advance(31 * 24 * 3600_000); // past the 30-day session life
    text = (await scrape(app)).text;
    expect(sample(text, 'cairn_credentials_active', '{kind="session",audience="rest"}')).toBe(0);
  });

  it('route labels are names from the code, never a piece of the path', () => {
    expect(routeLabel('/v1/todos/td_123', 'todos.get')).toBe('todos.get');
    expect(routeLabel('/trpc/todos.get,todos.list', 'todos.get,todos.list')).toBe('trpc.batch');
    expect(routeLabel('/v1/approvals/495220154', undefined)).toBe('v1.unmatched');
    expect(routeLabel('/v1/attachments/at_9/file?x=1', undefined)).toBe('attachments.downloadFile');
    expect(routeLabel('/dav/usr_1/cal/secret-title.ics', undefined)).toBe('dav');
    expect(routeLabel('/errors/not_found', undefined)).toBe('errors.page');
    expect(routeLabel('/someone@example.test', undefined)).toBe('other');
    expect(routeLabel('/x', 'not.a.procedure')).toBe('other');
  });
});

describe('no user id, email, id or content in the output', () => {
  let app: TestApp;
  let a: Owner;
  let b: Owner;
  const made: Record<string, string>[] = [];
  const MARKERS = ['zebramarkerA', 'quokkamarkerB'];

  beforeAll(async () => {
    app = await startApp({ CAIRN_METRICS: '1', CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
    a = await fullUser(app);
    b = await fullUser(app);
    made.push(await createEveryResource(app, a, MARKERS[0]!), await createEveryResource(app, b, MARKERS[1]!));
  }, 60_000);
  afterAll(async () => app.close());

  it('after activity from two users', async () => {
    const owners = [a, b];
    for (const [i, ids] of made.entries()) {
      const o = owners[i]!;
      // Every id through a path (read, and by the other user: 404s), and through /trpc.
      for (const [coll, id] of Object.entries(ids)) {
        await call(app, 'GET', `/v1/${coll}/${encodeURIComponent(id)}`, { token: o.pat });
        await call(app, 'GET', `/v1/${coll}/${encodeURIComponent(id)}`, { token: owners[1 - i]!.pat });
      }
      await call(app, 'GET', `/trpc/todos.get?input=${encodeURIComponent(JSON.stringify({ json: { id: ids.todos } }))}`, { token: o.session });
      await call(app, 'GET', `/v1/approvals/${ids.approvals}`, { token: o.session });
      // Paths no route matches, carrying an email, an id, a title.
      await call(app, 'GET', `/${encodeURIComponent(o.email)}`);
      await call(app, 'GET', `/v1/nothing/${ids.todos}/${MARKERS[i]}`, { token: o.pat });
      await call(app, 'GET', `/trpc/${MARKERS[i]}.${o.userId}`, { token: o.session });
      await call(app, 'PROPFIND', `/dav/${o.userId}/${ids.containers}/${MARKERS[i]}.ics`, { headers: { depth: '0' } });
      await call(app, 'GET', `/v1/todos?q=${MARKERS[i]}`, { token: o.pat });
    }
    // Webhook attempts (to the discard port: failures) and every job, so those families have samples.
    const before = (await scrape(app)).text;
    expect(sample(before, 'cairn_webhook_queue_depth', '{queue="deliveries"}')).toBeGreaterThanOrEqual(2); // each subscription's ping
    expect(sample(before, 'cairn_webhook_queue_depth', '{queue="outbox"}')).toBeGreaterThan(0);
    expect(sample(before, 'cairn_webhook_subscriptions', '{state="healthy"}')).toBe(2);
    const d = createDispatcher(app.deps);
    await d.settle();
    d.stop();
    for (const job of JOBS) runJob(app.deps, job);

    const res = await scrape(app);
    expect(res.status).toBe(200);
    const text = res.text;
    expect(Number(/^cairn_webhook_attempts_total\{outcome="[a-z_]+"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(sample(text, 'cairn_webhook_queue_depth', '{queue="outbox"}')).toBe(0);
    expect(sample(text, 'cairn_webhook_subscriptions', '{state="failing"}')).toBe(2); // port 9 answers nothing
    expect(sample(text, 'cairn_credentials_active', '{kind="pat",audience="rest"}')).toBeGreaterThanOrEqual(2);

    const secrets: string[] = [...MARKERS];
    for (const [i, o] of owners.entries()) {
      secrets.push(o.userId, o.email, o.email.split('@')[0]!, o.session, o.pat, o.webhook!.secret, o.oauth!.access, o.oauth!.userCode, o.oauth!.clientId);
      secrets.push(...Object.values(made[i]!));
    }
    for (const s of secrets) expect(text.includes(s), `"${s}" appears in /metrics`).toBe(false);
    // Every label value is one of a bounded vocabulary: a route name, a method, a status, a name.
    const values = new Set([...text.matchAll(/="([^"]*)"/g)].map((m) => m[1]!));
    for (const v of values) expect(v, v).toMatch(/^(?:[A-Za-z][A-Za-z0-9_.:-]*|\d{3}|\+Inf|[0-9.e+-]+|v\d+\.\d+\.\d+)$/);
  }, 60_000);
});
