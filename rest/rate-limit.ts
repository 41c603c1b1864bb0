// The HTTP shell's rate limits (spec §8.1): the per-IP edge bucket in front of everything, route
// buckets for plain HTTP routes, and the RateLimit-* headers. The counters and the procedure-layer
// checks live in routers/middleware/rate-limit.ts, shared by /v1 and /trpc.
import type { NextFunction, Request, Response } from 'express';
import onHeaders from 'on-headers';
import { LIMITS, type RateBucketName } from '../core/config.js';
import type { Deps } from '../routers/deps.js';
import { limiterFor, refuseIfAny, RateTracker } from '../routers/middleware/rate-limit.js';
import { requestState } from './state.js';

const TRACKERS = new WeakMap<object, RateTracker>();

/** The tracker of a request (created by `edgeLimit`); the tRPC context carries it to procedures. */
export function rateTrackerOf(req: Request): RateTracker | undefined {
  return TRACKERS.get(req);
}

/**
 * Issue 11.1: a /trpc batch (`/trpc/a,b,c?batch=1`) costs the edge bucket one token per call, as
 * the calls would alone (the per-credential and route buckets already count each call). Larger
 * batches than LIMITS.trpcBatchMax are refused by the adapter; the cost is capped just above it.
 *
 * Issue 28 item 5: the calls are counted as the adapters will read them, not as sent. Both
 * rest/trpc.ts and tRPC's own adapter (server/app.ts) percent-decode the path before splitting it
 * at commas, so `a%2Cb` is two calls; both read `batch` with URLSearchParams (the first value,
 * decoded: `%62atch=%31` is a batch); and Express mounts `/trpc` case-insensitively, so `/TRPC/`
 * reaches tRPC's adapter too. test/rest/trpc-batch-cost.rest.test.ts sends each spelling.
 */
const TRPC_PREFIX = /^\/trpc\//i;

/** Decoded as URLSearchParams decodes a name or value; null when an escape is bad (it then equals nothing we look for). */
function formDecoded(part: string): string | null {
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * `new URLSearchParams(query).get('batch') === '1'` (the adapters' reading), without decoding the
 * other values: `input` can be kilobytes, and decoding it all cost ~3 µs a request.
 */
function isBatch(query: string): boolean {
  for (let start = 0; start < query.length; ) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    const eq = query.indexOf('=', start);
    const keyEnd = eq === -1 || eq > end ? end : eq;
    // `batch` is at most 15 characters however it is escaped (`%62%61%74%63%68`).
    if (keyEnd - start <= 15 && formDecoded(query.slice(start, keyEnd)) === 'batch') {
      return keyEnd < end && formDecoded(query.slice(keyEnd + 1, end)) === '1';
    }
    start = end + 1;
  }
  return false;
}

export function callsIn(url: string): number {
  if (!TRPC_PREFIX.test(url)) return 1;
  const q = url.indexOf('?');
  if (q < 0 || !isBatch(url.slice(q + 1))) return 1;
  let path = url.slice('/trpc/'.length, q);
  try {
    path = decodeURIComponent(path);
  } catch {
    /* a bad escape: counted as sent */
  }
  const names = path.split(',').length;
  return Math.max(1, Math.min(names, LIMITS.trpcBatchMax + 1));
}

/**
 * Express middleware mounted first: starts the request's tracker, writes the RateLimit-* headers
 * just before the response head goes out, and applies the per-IP edge bucket (spec §8.1).
 * The IP is req.ip: the socket address unless CAIRN_TRUST_PROXY names the proxy in front.
 */
export function edgeLimit(deps: Deps) {
  const limiter = limiterFor(deps);
  return (req: Request, res: Response, next: NextFunction): void => {
    const tracker = new RateTracker();
    TRACKERS.set(req, tracker);
    onHeaders(res, () => {
      for (const [k, v] of Object.entries(tracker.headers())) res.setHeader(k, v);
    });
    const results = limiter.hit([{ name: 'edge', subject: requestState(req).ip, cost: callsIn(req.url) }]);
    tracker.add(results);
    try {
      refuseIfAny(results);
    } catch (e) {
      return next(e);
    }
    next();
  };
}

/** Express middleware attaching a per-IP route bucket to a plain Express route (e.g. /oauth/token). */
export function routeLimit(deps: Deps, name: RateBucketName) {
  const limiter = limiterFor(deps);
  if (limiter.bucket(name).per !== 'ip') throw new Error(`routeLimit: ${name} is not a per-IP bucket`);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const results = limiter.hit([{ name, subject: requestState(req).ip }]);
    rateTrackerOf(req)?.add(results);
    try {
      refuseIfAny(results);
    } catch (e) {
      return next(e);
    }
    next();
  };
}

/** What a tRPC context takes from the request for rate limits and idempotency. */
export function requestExtras(req: Request): { rate: RateTracker | undefined; idempotencyKey: string | undefined } {
  const key = req.headers['idempotency-key'];
  return { rate: rateTrackerOf(req), idempotencyKey: Array.isArray(key) ? key.join(', ') : key };
}
