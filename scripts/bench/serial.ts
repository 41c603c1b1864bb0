// One connection, one request at a time, for the door scenarios (scripts/bench/doors.ts): the
// time of each request from its first byte sent to its answer's last byte read, the connection
// kept alive where the server allows it. autocannon is not used there because Radicale (Python's
// wsgiref server) answers HTTP/1.0 and closes the connection after every answer, which autocannon's
// per-response timing does not survive (it reported p50s of ~2 s at ~80 requests/s); here a
// server that closes pays its reconnect inside the request's time, as a client sees it.
import http from 'node:http';
import { Samples, summarize } from './stats.js';
import type { LoadRequest, LoadResult } from './load.js';

function once(agent: http.Agent, url: URL, req: LoadRequest): Promise<number> {
  const path = req.path(); // path before body: a request's body may depend on the item its path names
  const body = req.body ? Buffer.from(req.body()) : null;
  return new Promise((resolve, reject) => {
    const r = http.request(
      { host: url.hostname, port: url.port, method: req.method, path, agent, headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) } },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.setTimeout(60_000, () => r.destroy(new Error('timeout')));
    r.end(body ?? undefined);
  });
}

export async function runSerial(baseUrl: string, req: LoadRequest, seconds: number): Promise<LoadResult> {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = new Samples();
  const statuses: Record<string, number> = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  try {
    while (process.hrtime.bigint() < end) {
      const s = process.hrtime.bigint();
      try {
        const status = await once(agent, url, req);
        const ms = Number(process.hrtime.bigint() - s) / 1e6;
        if (status >= 200 && status < 300) {
          ok++;
          lat.push(ms);
        } else {
          non2xx++;
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      } catch {
        errors++;
      }
    }
  } finally {
    agent.destroy();
  }
  const took = Number(process.hrtime.bigint() - t0) / 1e9;
  return { ok, non2xx, statuses, errors, timeouts: 0, seconds: took, rps: ok / took, lat: summarize(lat.values()) };
}
