// Prometheus metrics (issue 33 item 4; docs/operations.md "Metrics"): `GET /metrics` in the text
// exposition format, through prom-client. Off unless CAIRN_METRICS=1: then the path does not exist
// (404 as any unknown path, server/handler.ts never routes it here).
//
// Who may read it: a client on loopback (the socket's own address; X-Forwarded-For never grants
// anything, and a loopback request that carries a forwarding header came through a proxy, so it
// is not local), or one presenting `Authorization: Bearer <CAIRN_METRICS_TOKEN>` (compared in
// constant time). Anyone else gets 404 when no token is configured (for them there is no such
// path) and 401 when one is (they may have mistyped it).
//
// Labels: never a user id, an email, an id from a path or any content. A request is labelled by
// the procedure the door matched (a name from the router, never the raw path), or by a fixed name
// for the few routes outside the procedures; anything else is `other`. Methods outside a fixed
// list are `OTHER`; statuses are numbers. So the series are bounded by the code, not by clients.
//
// Cost on the hot path (test/metrics/hook-cost.bench.ts, docs/operations.md "Metrics"): the route
// label, one Map lookup and a few additions on plain numbers. Everything that reads the database or the file system (SQLite and WAL sizes,
// webhook queue, credentials) is computed when scraped, never per request.
//
// One registry per Deps (a WeakMap): the process has one; tests start many apps in one process
// and each gets its own counters. The handler, the webhook dispatcher and the job scheduler find
// it through metricsFor(deps).
import { createHash, timingSafeEqual } from 'node:crypto';
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { createRequire } from 'node:module';
import type { Metric, Registry } from 'prom-client';
import type { Deps } from '../routers/deps.js';
import { AppError } from '../core/errors.js';
import { PROCEDURES } from '../rest/procedures.js';
import { sendProblem } from '../rest/send.js';

export const METRICS_PATH = '/metrics';

/** Seconds; from a cached read (~0.1 ms) to a slow export or upload. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'PROPPATCH', 'REPORT', 'MKCALENDAR', 'MKCOL', 'MOVE', 'COPY']);

/** Routes outside the procedures, by exact path (their paths hold no id). */
const FIXED: ReadonlyMap<string, string> = new Map([
  ['/healthz', 'healthz'],
  ['/openapi.json', 'openapi'],
  ['/errors', 'errors'],
  [METRICS_PATH, 'metrics'],
  ['/oauth/register', 'oauth.register'],
  ['/oauth/token', 'oauth.token'],
  ['/oauth/authorize', 'oauth.authorize'],
  ['/v1/attachments/files', 'attachments.uploadFile'],
  ['/v1/inbox/files', 'inbox.captureFile'],
  ['/mcp', 'mcp'],
  ['/.well-known/oauth-protected-resource/mcp', 'mcp.metadata'],
]);

/** Then by prefix, first match wins: what follows the prefix (an id, a code, a name) is dropped. */
const PREFIXES: readonly (readonly [RegExp, string])[] = [
  [/^\/v1\/attachments\/[^/]+\/file$/, 'attachments.downloadFile'],
  [/^\/dav(?:\/|$)|^\/\.well-known\/caldav/, 'dav'],
  [/^\/\.well-known\//, 'well-known'],
  [/^\/oauth\//, 'oauth'],
  [/^\/docs(?:\/|$)/, 'docs'],
  [/^\/errors\//, 'errors.page'],
  [/^\/app(?:\/|$)/, 'app'],
  [/^\/trpc(?:\/|$)/, 'trpc.unmatched'],
  [/^\/v1(?:\/|$)/, 'v1.unmatched'],
];

/**
 * The route label of a request: the matched procedure (a key of the router; a tRPC batch of
 * several is `trpc.batch`), else a fixed name for the path, else `other`. Never a piece of the
 * raw path.
 */
export function routeLabel(url: string, procedure: string | undefined): string {
  if (procedure) {
    if (Object.prototype.hasOwnProperty.call(PROCEDURES, procedure)) return procedure;
    if (procedure.includes(',')) return 'trpc.batch';
  }
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const fixed = FIXED.get(path);
  if (fixed) return fixed;
  for (const [re, name] of PREFIXES) if (re.test(path)) return name;
  return 'other';
}

/** The error classes an attempt may end with (routers/webhooks/store.ts AttemptOutcome); others are `other`. */
const ATTEMPT_OUTCOMES = new Set(['delivered', 'http_status', 'redirect', 'timeout', 'refused_address', 'dns', 'tls', 'network', 'invalid_url', 'too_large', 'deadline']);

export type Metrics = {
  registry: Registry;
  /** Called once per finished request (server/handler.ts), with the route label already chosen. */
  observeRequest: (route: string, method: string | undefined, status: number, ms: number) => void;
  /** One webhook attempt's outcome (server/webhooks/dispatcher.ts): null error class = delivered. */
  observeAttempt: (errorClass: string | null) => void;
  /** One job run (server/jobs/scheduler.ts). */
  observeJob: (job: string, ok: boolean, rows: number) => void;
  /** Answers GET /metrics (server/handler.ts routes the path here only when metrics are on). */
  serve: (req: IncomingMessage, res: ServerResponse) => void;
};

type SampleValue = { metricName?: string; labels: Record<string, string | number>; value: number };

/**
 * A metric whose samples are computed when scraped, in the shape prom-client's registry prints
 * (its `get()` contract, what its own Counter and Histogram return).
 */
function scrapeTimeMetric(name: string, help: string, type: 'counter' | 'histogram', values: () => SampleValue[]): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset: () => {},
  };
  return metric as unknown as Metric;
}

const registries = new WeakMap<object, Metrics>();

/** The metrics of this process (one per Deps), or null when CAIRN_METRICS is off. */
export function metricsFor(deps: Deps): Metrics | null {
  if (!deps.config.metrics) return null;
  let m = registries.get(deps);
  if (!m) registries.set(deps, (m = createMetrics(deps)));
  return m;
}

function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  return addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.');
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The access rule. The socket's address only: a request that came through a proxy on the same
 * host arrives from loopback too, so one that carries any forwarding header is not local (a
 * proxy in front must not open /metrics to the world; docs/operations.md "Metrics").
 */
export function mayRead(req: IncomingMessage, token: string | undefined): boolean {
  const h = req.headers;
  if (isLoopback(req.socket.remoteAddress) && h['x-forwarded-for'] === undefined && h.forwarded === undefined && h['x-real-ip'] === undefined) return true;
  if (!token) return false;
  const auth = h.authorization;
  if (!auth || !/^bearer /i.test(auth)) return false;
  // Digests of both, so the comparison is constant-time whatever the lengths.
  return timingSafeEqual(digest(auth.slice(7).trim()), digest(token));
}

function createMetrics(deps: Deps): Metrics {
  // Loaded only when metrics are on: a process without CAIRN_METRICS never holds prom-client
  // (~3 MB; issue 29's peak RSS).
  const { Counter, Gauge, Registry, collectDefaultMetrics } = createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  // The hot path (the requests and their latency) does not go through prom-client's label hashing
  // (~1.2 µs a request for a counter and a histogram; docs/operations.md "Metrics"): each
  // (route, method, status) has its own plain counters, found with one Map lookup, and the two
  // families below turn them into samples when scraped.
  type Series = { route: string; method: string; status: string; n: number; timing: Timing };
  type Timing = { route: string; method: string; n: number; sum: number; buckets: Float64Array };
  const series = new Map<string, Series>();
  const timings = new Map<string, Timing>();
  const observeRequest: Metrics['observeRequest'] = (route, rawMethod, status, ms) => {
    const method = rawMethod !== undefined && METHODS.has(rawMethod) ? rawMethod : 'OTHER';
    const key = `${route} ${method} ${status}`;
    let s = series.get(key);
    if (!s) {
      const tk = `${route} ${method}`;
      let t = timings.get(tk);
      if (!t) timings.set(tk, (t = { route, method, n: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length + 1) }));
      series.set(key, (s = { route, method, status: String(status), n: 0, timing: t }));
    }
    s.n++;
    const t = s.timing;
    const sec = ms / 1000;
    t.n++;
    t.sum += sec;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && sec > LATENCY_BUCKETS[i]!) i++;
    t.buckets[i]!++;
  };
  registry.registerMetric(
    scrapeTimeMetric('cairn_http_requests_total', 'Requests answered, by route (the matched procedure or a fixed route name), method and status.', 'counter', () =>
      [...series.values()].map((s) => ({ labels: { route: s.route, method: s.method, status: s.status }, value: s.n })),
    ),
  );
  registry.registerMetric(
    scrapeTimeMetric('cairn_http_request_duration_seconds', 'Time from the request to its answer being handed to the socket, by route and method.', 'histogram', () => {
      const name = 'cairn_http_request_duration_seconds';
      const values: SampleValue[] = [];
      for (const t of timings.values()) {
        let acc = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          acc += t.buckets[i]!;
          values.push({ metricName: `${name}_bucket`, labels: { le, route: t.route, method: t.method }, value: acc });
        });
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', route: t.route, method: t.method }, value: t.n });
        values.push({ metricName: `${name}_sum`, labels: { route: t.route, method: t.method }, value: t.sum });
        values.push({ metricName: `${name}_count`, labels: { route: t.route, method: t.method }, value: t.n });
      }
      return values;
    }),
  );

  const attempts = new Counter({
    name: 'cairn_webhook_attempts_total',
    help: 'Webhook delivery attempts since start, by outcome (delivered, or the error class of a failure).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const jobRuns = new Counter({
    name: 'cairn_job_runs_total',
    help: 'Runs of the periodic jobs since start, by job and result (ok, failed).',
    labelNames: ['job', 'result'] as const,
    registers: [registry],
  });
  const jobRows = new Counter({
    name: 'cairn_job_rows_total',
    help: 'Rows the periodic jobs removed or swept since start, by job.',
    labelNames: ['job'] as const,
    registers: [registry],
  });

  const sqlite = deps.db.$client;
  new Gauge({
    name: 'cairn_sqlite_file_bytes',
    help: 'Size of the SQLite database file and of its write-ahead log (0 when absent).',
    labelNames: ['file'] as const,
    registers: [registry],
    collect() {
      const size = (p: string) => {
        try {
          return statSync(p).size;
        } catch {
          return 0;
        }
      };
      this.set({ file: 'db' }, size(deps.config.dbFile));
      this.set({ file: 'wal' }, size(`${deps.config.dbFile}-wal`));
    },
  });
  // Scrape-time reads, prepared at the first scrape: each uses an index or reads a small table
  // (docs/operations.md "Metrics").
  const prepared = <T>(make: () => T) => {
    let v: T | undefined;
    return () => (v ??= make());
  };
  const count = (sql: string) => {
    const st = prepared(() => sqlite.prepare(sql).pluck());
    return () => Number(st().get());
  };
  const pendingDeliveries = count("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'");
  const failedDeliveries = count("SELECT count(*) FROM webhook_deliveries WHERE status = 'failed'");
  const undispatched = count('SELECT count(*) FROM outbox WHERE dispatched_at IS NULL');
  const subscriptions = prepared(() =>
    sqlite.prepare<[], { healthy: number; failing: number; disabled: number }>(
      'SELECT coalesce(sum(active = 1 AND failing_since IS NULL), 0) AS healthy, coalesce(sum(active = 1 AND failing_since IS NOT NULL), 0) AS failing, coalesce(sum(active = 0), 0) AS disabled FROM webhooks',
    ),
  );
  const credentials = prepared(() =>
    sqlite.prepare<[number], { kind: string; audience: string; n: number }>('SELECT kind, audience, count(*) AS n FROM credentials WHERE revoked_at IS NULL AND expires_at > ? GROUP BY kind, audience'),
  );
  new Gauge({
    name: 'cairn_webhook_queue_depth',
    help: 'Webhook work waiting: deliveries pending (queued or retrying) and outbox events not yet fanned out.',
    labelNames: ['queue'] as const,
    registers: [registry],
    collect() {
      this.set({ queue: 'deliveries' }, pendingDeliveries());
      this.set({ queue: 'outbox' }, undispatched());
    },
  });
  new Gauge({
    name: 'cairn_webhook_deliveries_failed',
    help: 'Deliveries in the kept delivery log that ended failed (no attempt due).',
    registers: [registry],
    collect() {
      this.set(failedDeliveries());
    },
  });
  new Gauge({
    name: 'cairn_webhook_subscriptions',
    help: 'Webhook subscriptions by state: healthy, failing (active, last attempts failed), disabled.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const r = subscriptions().get()!;
      this.set({ state: 'healthy' }, r.healthy);
      this.set({ state: 'failing' }, r.failing);
      this.set({ state: 'disabled' }, r.disabled);
    },
  });
  new Gauge({
    name: 'cairn_credentials_active',
    help: 'Credentials neither revoked nor expired (sessions, personal tokens), by kind and door.',
    labelNames: ['kind', 'audience'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const k of ['session', 'pat']) for (const a of ['rest', 'dav', 'mcp']) this.set({ kind: k, audience: a }, 0);
      for (const r of credentials().all(deps.clock())) this.set({ kind: r.kind, audience: r.audience }, r.n);
    },
  });

  return {
    registry,
    observeRequest,
    observeAttempt(errorClass) {
      const outcome = errorClass === null ? 'delivered' : ATTEMPT_OUTCOMES.has(errorClass) ? errorClass : 'other';
      attempts.inc({ outcome });
    },
    observeJob(job, ok, rows) {
      jobRuns.inc({ job, result: ok ? 'ok' : 'failed' });
      if (rows > 0) jobRows.inc({ job }, rows);
    },
    serve(req, res) {
      const fail = (e: unknown) => sendProblem(deps, req as Request, res as Response, e);
      if (!mayRead(req, deps.config.metricsToken)) {
        return fail(
          deps.config.metricsToken
            ? new AppError('unauthorized', 'Metrics are answered to loopback clients and to the bearer of CAIRN_METRICS_TOKEN.', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } })
            : new AppError('not_found', 'No route matches this path.'),
        );
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return fail(new AppError('method_not_allowed', `${req.method} is not allowed here.`, { headers: { Allow: 'GET, HEAD' } }));
      registry.metrics().then(
        (text) => {
          res.statusCode = 200;
          res.setHeader('Content-Type', registry.contentType);
          res.setHeader('Cache-Control', 'no-store');
          res.end(text);
        },
        // A collector that threw (the database closed under it): a logged internal problem.
        (err: unknown) => fail(err),
      );
    },
  };
}
