// The load generator: autocannon (from npm) driven from the bench process, which is separate
// from every server. Latencies are taken from autocannon's per-response event (sub-millisecond
// resolution; its own histogram rounds to whole milliseconds), 2xx only; anything else is
// counted and reported, never silently averaged in.
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { Samples, summarize, type LatencySummary } from './stats.js';

// autocannon writes each request as raw bytes but refuses methods outside RFC 7231 + PATCH; the
// CalDAV scenarios (scripts/bench/doors.ts) need WebDAV's PROPFIND and REPORT, so they are added
// to its list (the array its request builder checks; autocannon 8 has no option for it).
const acMethods = createRequire(import.meta.url)('autocannon/lib/httpMethods.js') as string[];
for (const m of ['PROPFIND', 'REPORT']) if (!acMethods.includes(m)) acMethods.push(m);

export type LoadRequest = {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'PROPFIND' | 'REPORT';
  /** Called per request, so ids and bodies can rotate. */
  path: () => string;
  headers: Record<string, string>;
  body?: () => string;
};

export type LoadResult = {
  ok: number;
  non2xx: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
  rps: number;
  lat: LatencySummary;
};

export async function runLoad(baseUrl: string, req: LoadRequest, opts: { connections: number; seconds: number }): Promise<LoadResult> {
  const lat = new Samples();
  let ok = 0;
  let non2xx = 0;
  const statuses: Record<string, number> = {};
  const options: autocannon.Options = {
    url: baseUrl,
    connections: opts.connections,
    duration: opts.seconds,
    timeout: 60,
    // autocannon stops at the first sample tick after `duration`; a short tick keeps runs to
    // their length (the per-second request histogram it feeds is not used here).
    sampleInt: 100,
    requests: [
      {
        method: req.method,
        headers: req.headers,
        setupRequest: (r) => {
          const out = { ...r, path: req.path() };
          if (req.body) out.body = req.body();
          return out;
        },
      },
    ],
  };
  let instance!: autocannon.Instance;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(options, (err: unknown, result: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result)));
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) {
      ok++;
      lat.push(ms);
    } else {
      non2xx++;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  });
  const result = await done;
  const seconds = result.duration > 0 ? result.duration : opts.seconds;
  return {
    ok,
    non2xx,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds,
    rps: ok / seconds,
    lat: summarize(lat.values()),
  };
}
