// Rate limits (spec §8.1, docs/api.md "Rate limits"): the counters and the procedure-layer checks.
// The buckets are declared in one table (core/config.ts RATE_BUCKETS) and counted here, in
// memory, with the injected clock:
// - the per-credential buckets run in the procedure layer (routers/trpc.ts) keyed by SHA-256 of
//   the presented bearer token, before the credential is looked up, so they need no DB access
//   and hold for /v1 and /trpc alike (a /trpc batch counts once per procedure call);
// - route buckets (per user or per IP) are attached by procedure meta `rateLimits`;
// - the edge bucket (per IP, token bucket) and route buckets of plain HTTP routes are mounted by
//   the HTTP shell (rest/rate-limit.ts), on these same counters.
// Every response carries RateLimit-Limit / -Remaining / -Reset for the most constrained bucket
// that applied to it; a refusal is a 429 `rate_limited` problem with Retry-After.
//
// No library is used for the counting: express-rate-limit and rate-limiter-flexible read
// Date.now() themselves (tests here move an injected clock and never sleep), and each of their
// limiters writes its own headers, while the spec wants one set for the most constrained bucket.
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { and, count, eq, gte } from 'drizzle-orm';
import { credentials } from '../../db/schema/index.js';
import { RATE_BUCKETS, scaleBucket, type RateBucket, type RateBucketName, type WindowBucket } from '../../core/config.js';
import type { Deps } from '../deps.js';
import { AppError } from '../../core/errors.js';
import { parseBearerHeader, type BearerCredential } from '../auth/credentials.js';

/** What one bucket said about one request. */
export type BucketResult = {
  bucket: RateBucketName;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (window end, or a token bucket refilled). */
  resetSeconds: number;
  /** Seconds to wait before a refused request may succeed; 0 when allowed. */
  retryAfter: number;
  allowed: boolean;
};

/** A bucket whose count may start from durable state (e.g. tokens created today in the DB). */
export type BucketSeed = (deps: Deps, subject: string, windowStart: number) => number;

/**
 * Issue 28 item 6 (docs/operations.md "Client addresses and rate limits"): the subject a per-IP
 * bucket counts for a client address. One IPv6 subscriber holds a whole /64 (or more), so keying
 * on the full address would give each of its 2^64 addresses a budget of its own: an IPv6 address
 * counts by its first `v6Prefix` bits (CAIRN_IPV6_PREFIX, default 64), written `2001:db8:0:1::/64`.
 * An IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what a dual-stack socket reports) is the
 * IPv4 address it carries, so one client has one bucket whichever way it arrived; IPv4 is counted
 * per address, in its canonical dotted form. Anything else (no address, a value a trusted proxy
 * passed on that is no IP) is its own subject, as sent. Every per-IP bucket goes through this one
 * function: `RateLimiter` applies it to the subject of every bucket declared `per: 'ip'`.
 */
export function ipBucketKey(ip: string, v6Prefix: number): string {
  // node:net's checks decide what the text is (measured: ~0.1 µs for an IPv4 address, 1.5–3 µs
  // for an IPv6 one with the parse below); ipaddr.js took ~30 µs to validate an IPv6 address, too
  // much for every request's edge bucket.
  if (isIPv4(ip)) return ip; // node:net accepts only the canonical dotted form
  // The common mapped spelling (a dual-stack listener reports every IPv4 client so), without the
  // IPv6 parse.
  if (ip.length > 7 && ip.slice(0, 7).toLowerCase() === '::ffff:' && isIPv4(ip.slice(7))) return ip.slice(7);
  if (!isIPv6(ip)) return ip;
  const p = ipv6Parts(ip);
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff) {
    return `${p[6]! >> 8}.${p[6]! & 0xff}.${p[7]! >> 8}.${p[7]! & 0xff}`;
  }
  const bits = Math.max(0, Math.min(128, Math.floor(v6Prefix)));
  const groups: string[] = [];
  for (let i = 0; i * 16 < bits; i++) {
    const keep = Math.min(16, bits - i * 16);
    groups.push((p[i]! & ((0xffff << (16 - keep)) & 0xffff)).toString(16));
  }
  return `${groups.join(':')}${groups.length < 8 ? '::' : ''}/${bits}`;
}

/** The eight 16-bit groups of an address node:net accepts as IPv6 (a zone id is dropped). */
function ipv6Parts(ip: string): number[] {
  let s = ip;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const gap = s.indexOf('::');
  let groups: string[];
  if (gap === -1) groups = s.split(':');
  else {
    const head = gap === 0 ? [] : s.slice(0, gap).split(':');
    const rest = gap + 2 === s.length ? [] : s.slice(gap + 2).split(':');
    groups = [...head, ...new Array<string>(8 - head.length - rest.length).fill('0'), ...rest];
  }
  return groups.map((g) => parseInt(g, 16));
}

type WindowEntry = { windowStart: number; count: number };
type TokenEntry = { tokens: number; at: number };

const SWEEP_EVERY_MS = 60_000;
const IP_KEY_MEMO = 4096;

/** The counters of one app instance. */
export class RateLimiter {
  private readonly windows = new Map<string, WindowEntry>();
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly buckets: Record<RateBucketName, RateBucket>;
  private readonly ipv6Prefix: number;
  private readonly ipKeys = new Map<string, string>();
  private lastSweep = 0;

  constructor(
    private readonly deps: Deps,
    private readonly seeds: Partial<Record<RateBucketName, BucketSeed>> = {},
  ) {
    const factor = deps.config.rateLimitFactor;
    this.buckets = Object.fromEntries(
      Object.entries(RATE_BUCKETS).map(([name, b]) => [name, scaleBucket(b, factor)]),
    ) as Record<RateBucketName, RateBucket>;
    this.ipv6Prefix = deps.config.ipv6Prefix ?? 64;
  }

  bucket(name: RateBucketName): RateBucket {
    return this.buckets[name];
  }

  /**
   * Checks and counts one hit on each named bucket for its subject. All or nothing: when any
   * bucket refuses, none is counted (a refused request costs no budget elsewhere).
   * `peek` checks without counting (buckets that count only successes call `commit` later).
   */
  hit(hits: { name: RateBucketName; subject: string; cost?: number }[], opts: { peek?: boolean } = {}): BucketResult[] {
    const now = this.deps.clock();
    this.sweep(now);
    const plans = hits.map((h) => this.plan(h.name, h.subject, now, h.cost ?? 1));
    const allowed = plans.every((p) => p.result.allowed);
    if (allowed && !opts.peek) for (const p of plans) p.commit();
    return plans.map((p) => (allowed && !opts.peek ? p.result : p.peekResult));
  }

  /** Counts a hit checked earlier with `peek` (the request succeeded). */
  commit(name: RateBucketName, subject: string): BucketResult {
    const p = this.plan(name, subject, this.deps.clock());
    p.commit();
    return p.result;
  }

  /** `cost`: how many requests this hit stands for (a /trpc batch of n calls costs n at the edge). */
  private plan(name: RateBucketName, rawSubject: string, now: number, cost = 1) {
    const b = this.buckets[name];
    // Per-IP buckets count the client's network, not the address as written (ipBucketKey).
    const subject = b.per === 'ip' ? this.ipKey(rawSubject) : rawSubject;
    return 'limit' in b ? this.planWindow(name, b, subject, now, cost) : this.planTokens(name, b.ratePerSecond, b.burst, subject, now, cost);
  }

  private planWindow(name: RateBucketName, b: WindowBucket, subject: string, now: number, cost: number) {
    const key = `${name}\0${subject}`;
    const windowStart = Math.floor(now / b.windowMs) * b.windowMs;
    let entry = this.windows.get(key);
    if (!entry || entry.windowStart !== windowStart) {
      const seed = this.seeds[name];
      entry = { windowStart, count: seed ? seed(this.deps, subject, windowStart) : 0 };
      this.windows.set(key, entry);
    }
    const e = entry;
    const resetSeconds = Math.max(1, Math.ceil((windowStart + b.windowMs - now) / 1000));
    const allowed = e.count + cost <= b.limit;
    const result: BucketResult = {
      bucket: name,
      limit: b.limit,
      remaining: Math.max(0, b.limit - e.count - (allowed ? cost : 0)),
      resetSeconds,
      retryAfter: allowed ? 0 : resetSeconds,
      allowed,
    };
    const peekResult: BucketResult = { ...result, remaining: Math.max(0, b.limit - e.count) };
    return { result, peekResult, commit: () => void (e.count += cost) };
  }

  private planTokens(name: RateBucketName, rate: number, burst: number, subject: string, now: number, cost: number) {
    const key = `${name}\0${subject}`;
    const entry = this.tokens.get(key) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, entry.tokens + (Math.max(0, now - entry.at) / 1000) * rate);
    const allowed = tokens >= cost;
    const after = allowed ? tokens - cost : tokens;
    const result: BucketResult = {
      bucket: name,
      limit: burst,
      remaining: Math.floor(after),
      resetSeconds: Math.ceil((burst - after) / rate),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((Math.min(cost, burst) - tokens) / rate)),
      allowed,
    };
    const peekResult: BucketResult = { ...result, remaining: Math.floor(tokens), resetSeconds: Math.ceil((burst - tokens) / rate) };
    return { result, peekResult, commit: () => void this.tokens.set(key, { tokens: after, at: now }) };
  }

  /**
   * `ipBucketKey` with a memo: an IPv6 address costs a few µs to parse, and a client sends many
   * requests. The memo is bounded (cleared when full), so a flood of addresses costs parsing only.
   */
  private ipKey(ip: string): string {
    let key = this.ipKeys.get(ip);
    if (key === undefined) {
      key = ipBucketKey(ip, this.ipv6Prefix);
      // Only address-sized texts are kept (an IPv6 address with a zone id fits in 64 characters).
      if (ip.length > 64) return key;
      if (this.ipKeys.size >= IP_KEY_MEMO) this.ipKeys.clear();
      this.ipKeys.set(ip, key);
    }
    return key;
  }

  /** Drops counters whose window has ended and token buckets that have refilled. */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, e] of this.windows) {
      const b = this.buckets[key.slice(0, key.indexOf('\0')) as RateBucketName] as WindowBucket;
      if (e.windowStart + b.windowMs <= now) this.windows.delete(key);
    }
    for (const [key, e] of this.tokens) {
      const b = this.buckets[key.slice(0, key.indexOf('\0')) as RateBucketName];
      if (!('limit' in b) && e.tokens + ((now - e.at) / 1000) * b.ratePerSecond >= b.burst) this.tokens.delete(key);
    }
  }
}

const LIMITERS = new WeakMap<Deps, RateLimiter>();

/**
 * Where a success-counted bucket starts when its window is first seen (after a restart, too):
 * the durable count of what it limits. POST /v1/keys: personal tokens created in this UTC day,
 * revoked ones included, the same count routers/keys/model.ts enforces (spec §5.1 rule 4).
 */
const SEEDS: Partial<Record<RateBucketName, BucketSeed>> = {
  keyCreate: (deps, userId, windowStart) =>
    deps.db
      .select({ n: count() })
      .from(credentials)
      .where(and(eq(credentials.userId, userId), eq(credentials.kind, 'pat'), gte(credentials.createdAt, windowStart)))
      .get()?.n ?? 0,
};

/** The limiter of an app (one per Deps, shared by HTTP and direct tRPC callers). */
export function limiterFor(deps: Deps): RateLimiter {
  let l = LIMITERS.get(deps);
  if (!l) {
    l = new RateLimiter(deps, SEEDS);
    LIMITERS.set(deps, l);
  }
  return l;
}

/** Collects the bucket results of one request; its headers name the most constrained. */
export class RateTracker {
  private readonly results: BucketResult[] = [];

  add(results: BucketResult[]): void {
    this.results.push(...results);
  }

  /** A refused bucket first (the longest wait), else the fewest remaining (then the latest reset). */
  mostConstrained(): BucketResult | undefined {
    let best: BucketResult | undefined;
    const rank = (r: BucketResult) => [r.allowed ? 0 : 1, r.retryAfter, -r.remaining, r.resetSeconds] as const;
    for (const r of this.results) {
      if (!best) {
        best = r;
        continue;
      }
      const a = rank(r);
      const b = rank(best);
      for (let i = 0; i < a.length; i++) {
        if (a[i]! !== b[i]!) {
          if (a[i]! > b[i]!) best = r;
          break;
        }
      }
    }
    return best;
  }

  headers(): Record<string, string> {
    const r = this.mostConstrained();
    if (!r) return {};
    return { 'RateLimit-Limit': String(r.limit), 'RateLimit-Remaining': String(r.remaining), 'RateLimit-Reset': String(r.resetSeconds) };
  }
}

export function rateLimitedError(refused: BucketResult, detail?: string): AppError {
  return new AppError('rate_limited', detail ?? `Rate limit exceeded (${refused.bucket}: ${refused.limit}); retry in ${refused.retryAfter} s.`, {
    headers: { 'Retry-After': String(refused.retryAfter) },
  });
}

export function refuseIfAny(results: BucketResult[]): void {
  const refused = results.filter((r) => !r.allowed).sort((a, b) => b.retryAfter - a.retryAfter)[0];
  if (refused) throw rateLimitedError(refused);
}

// ---- The procedure layer (wired in routers/trpc.ts) -------------------------------------------

/** What the procedure-layer checks read from the tRPC context. */
export type RateContext = {
  deps: Deps;
  authorization?: string | undefined;
  ip?: string | undefined;
  rate?: RateTracker | undefined;
  /** Memo of `credentialSubject` for this request (both procedure-layer checks need it). */
  credentialSubject?: string | undefined;
  /** Memo of the parsed bearer header (authentication reuses it: one parse, one SHA-256). */
  bearer?: BearerCredential | null | undefined;
};

/**
 * The bucket subject of the presented credential: SHA-256 of its canonical token, computed once per
 * request (issue 11.4: another spelling of the header or of the token is the same credential).
 */
function credentialSubject(ctx: RateContext): string | undefined {
  if (ctx.credentialSubject !== undefined) return ctx.credentialSubject;
  const bearer = presentedBearer(ctx);
  ctx.credentialSubject = bearer?.subject ?? (ctx.authorization?.trim() ? createHash('sha256').update(ctx.authorization.trim(), 'utf8').digest('base64url') : undefined);
  return ctx.credentialSubject;
}

/** The request's bearer header, parsed once (`null`: none, or not a bearer header). */
export function presentedBearer(ctx: RateContext): BearerCredential | null {
  if (ctx.bearer === undefined) ctx.bearer = parseBearerHeader(ctx.authorization);
  return ctx.bearer;
}

/** Per credential, all requests (600 / 5 min): before the credential is looked up. */
export function limitCredential(ctx: RateContext): void {
  const subject = credentialSubject(ctx);
  if (!subject) return;
  const results = limiterFor(ctx.deps).hit([{ name: 'credential', subject }]);
  ctx.rate?.add(results);
  refuseIfAny(results);
}

/**
 * Per credential writes (120 / 5 min) for mutations, and the route buckets named in meta
 * `rateLimits`. Runs after authentication and after an idempotent replay has been answered (a
 * replay writes nothing, so it costs no write budget). Buckets marked `countOn: 'success'` are
 * checked now and counted by the returned function once the call succeeded.
 */
export function limitRoute(
  ctx: RateContext,
  opts: { mutation: boolean; buckets?: readonly RateBucketName[] | undefined; userId?: string | undefined },
): (ok: boolean) => void {
  const limiter = limiterFor(ctx.deps);
  const now: { name: RateBucketName; subject: string }[] = [];
  const later: { name: RateBucketName; subject: string }[] = [];
  const credential = credentialSubject(ctx);
  if (opts.mutation && credential) now.push({ name: 'credentialWrites', subject: credential });
  for (const name of opts.buckets ?? []) {
    const b = limiter.bucket(name);
    const subject = b.per === 'user' ? opts.userId : b.per === 'ip' ? ctx.ip : credential;
    if (!subject) continue;
    if ('countOn' in b && b.countOn === 'success') later.push({ name, subject });
    else now.push({ name, subject });
  }
  const results = limiter.hit(now);
  const peeked = later.length ? limiter.hit(later, { peek: true }) : [];
  ctx.rate?.add(results);
  refuseIfAny(results);
  if (peeked.some((r) => !r.allowed)) {
    ctx.rate?.add(peeked);
    refuseIfAny(peeked);
  }
  return (ok: boolean) => {
    if (!later.length) return;
    const counted = ok ? later.map((h) => limiter.commit(h.name, h.subject)) : peeked;
    ctx.rate?.add(counted);
  };
}

/**
 * Issue 11.1: a bucket counted on failures only (wrong passwords per account). Refuses at once when
 * the bucket is spent (before any password work), runs `attempt`, and counts a hit when it fails
 * with one of `failures` (the wrong-password answers).
 */
export async function limitFailures<T>(
  ctx: RateContext,
  name: RateBucketName,
  subject: string,
  attempt: () => Promise<T>,
  isFailure: (e: unknown) => boolean,
): Promise<T> {
  const limiter = limiterFor(ctx.deps);
  const peeked = limiter.hit([{ name, subject }], { peek: true });
  ctx.rate?.add(peeked);
  refuseIfAny(peeked);
  try {
    return await attempt();
  } catch (e) {
    if (isFailure(e)) ctx.rate?.add([limiter.commit(name, subject)]);
    throw e;
  }
}
