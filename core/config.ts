// The process configuration: environment parsed once with zod, and every limit of spec §8
// in one place with the spec's values as defaults (DECISIONS §1).
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

const boolish = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on');

function isTrustedProxy(item: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(item)) return true;
  const [addr, prefix, ...rest] = item.split('/');
  if (rest.length || !addr || !isIP(addr)) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (isIP(addr) === 4 ? 32 : 128);
}

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_URL: z.url().optional(),
  CAIRN_MASTER_KEY: z.string().optional(),
  CAIRN_ALLOW_SIGNUP: boolish.default(true),
  CAIRN_RATE_LIMIT_FACTOR: z.coerce.number().positive().default(1),
  CAIRN_UNSAFE_ALLOW_LOOPBACK: boolish.default(false),
  // Spec §8.1 (docs/api.md "Rate limits"): the proxies whose X-Forwarded-For is believed, by
  // address, CIDR range or loopback/linklocal/uniquelocal. Hop counts and "true" are refused:
  // they would let any client pick its own rate-limit bucket.
  CAIRN_TRUST_PROXY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v.trim() === '' || v.split(',').every((s) => isTrustedProxy(s.trim())), {
      message: 'a comma-separated list of proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal',
    }),
  // Issue 28 item 6 (docs/operations.md "Client addresses and rate limits"): per-IP buckets count
  // an IPv6 client by this prefix of its address (a /64 is one subscriber's network, and it holds
  // more addresses than anyone could spend). 128 counts every address alone.
  CAIRN_IPV6_PREFIX: z.coerce.number().int().min(1).max(128).default(64),
  // scrypt cost as log2(N). OWASP's recommendation (N=2^17, r=8, p=1) is the default; tests may
  // lower it to keep the suite fast, never below 2^14.
  CAIRN_SCRYPT_LOG_N: z.coerce.number().int().min(14).max(20).default(17),
  // Issue 11.9 (docs/operations.md "Stopping"): how long in-flight requests may run after
  // SIGTERM/SIGINT; the process exits at the latest 1 s after that, whatever stdout does.
  CAIRN_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // DECISIONS §1: `full` (a 2xx means the change is fsync'd: synchronous=FULL) or `relaxed` (WAL
  // with synchronous=NORMAL: faster, may lose the last commits on power loss or an OS crash).
  CAIRN_DURABILITY: z.enum(['full', 'relaxed']).default('full'),
  // DECISIONS §1 / issue 14: past this many items (to-dos, notes, containers, headings, inbox
  // items) the decrypting operations (views, filters, search, sealed-field lists) answer
  // account_too_large (routers/account-size.ts).
  CAIRN_MAX_ACCOUNT_ITEMS: z.coerce.number().int().min(1).default(250_000),
  /** DECISIONS §4: the largest file upload in bytes (POST /v1/attachments/files). */
  CAIRN_MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(25 * 1024 * 1024),
  /** Issue 33 item 3: the largest import body in bytes (POST /v1/imports; docs/import.md). */
  CAIRN_MAX_IMPORT_BYTES: z.coerce.number().int().min(1).default(100 * 1024 * 1024),
  // Issue 18.7 (docs/operations.md "Connections and timeouts"): slow or silent clients. The whole
  // request line and headers must arrive within HEADERS, the whole request (body included)
  // within REQUEST; an idle keep-alive connection closes after KEEP_ALIVE; a connection on which
  // nothing moves either way (a client that stopped reading its answer) after SOCKET_IDLE.
  CAIRN_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  CAIRN_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  CAIRN_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  CAIRN_SOCKET_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  // Test-only fault injection (routers/middleware/write.ts): die right after this procedure's
  // transaction commits, before its answer is sent.
  CAIRN_UNSAFE_CRASH_AFTER_COMMIT: z.string().optional(),
  // Issue 31 (docs/mcp.md "Origin"): browser origins, besides PUBLIC_URL's, allowed to call /mcp;
  // comma-separated, each `scheme://host[:port]`.
  CAIRN_MCP_ALLOWED_ORIGINS: z.string().optional(),
  // Issue 30 (docs/caldav.md "Sync tokens"): how long a CalDAV sync token (a sealed snapshot of a
  // collection's membership, which is what remembers removals) stays valid; an older token gets
  // 403 valid-sync-token and the client resyncs.
  CAIRN_DAV_SYNC_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  // Issue 33 item 1 (docs/operations.md "Scheduled backups"; server/jobs/backup.ts): with a folder
  // set, the server writes a backup there every CAIRN_BACKUP_EVERY (minutes, hours or days: 30m,
  // 6h, 1d) and keeps the newest CAIRN_BACKUP_KEEP. Off when the folder is unset.
  CAIRN_BACKUP_DIR: z.string().optional(),
  CAIRN_BACKUP_EVERY: z
    .string()
    .regex(/^[1-9]\d{0,4}[mhd]$/, { message: 'a whole number of minutes, hours or days: 30m, 6h, 1d' })
    .default('1d'),
  CAIRN_BACKUP_KEEP: z.coerce.number().int().min(1).max(10_000).default(7),
  // Issue 33 item 4 (docs/operations.md "Metrics"): GET /metrics (server/metrics.ts) exists only
  // when this is on; it answers loopback clients, and others that present this token as a bearer
  // (at least 32 characters: it guards the whole instance's activity figures).
  CAIRN_METRICS: boolish.default(false),
  CAIRN_METRICS_TOKEN: z.union([z.literal(''), z.string().min(32, { message: 'at least 32 characters (e.g. `openssl rand -hex 32`)' })]).optional(),
});

/** Spec §8: every limit, with the spec's numbers. Rate-limit budgets are scaled by `rateLimitFactor`. */
export const LIMITS = {
  page: { defaultLimit: 50, maxLimit: 200 },
  cursorMax: 4096,
  updatedSinceMax: 24,
  idMax: 64,
  container: { name: 256, subtitle: 512, notes: 100_000 },
  headingName: 512,
  noteFolderName: 512,
  note: { title: 512, body: 100_000 },
  attachment: { url: 2048, text: 2048, title: 512 },
  inbox: { text: 2048, url: 2048 },
  filter: { name: 256, criteria: 10_000 },
  /** Issue 14: the search query `q`, 1..256 characters. */
  search: { q: 256 },
  tag: { name: 64, colorHex: 16 },
  linkTitleUrl: 2048,
  /**
   * Spec §4.16: one fetch, at most 5 redirects, 8 s in all, 256 KB read; the title is cut to 512
   * characters. Tests shorten the deadline through `Config.linkTitleDeadlineMs`, never an env var.
   */
  linkTitle: { deadlineMs: 8_000, maxBytes: 256 * 1024, redirects: 5, titleMax: 512 },
  /**
   * Issue 31 (docs/oauth.md "Client ID Metadata Documents"): a client_id that is an https URL is
   * fetched through the outbound door: at most 64 KiB in at most 5 s, no redirect; the document is
   * cached per its Cache-Control/Expires, never shorter than the floor nor longer than the ceiling,
   * at most `cacheEntries` documents. Tests shorten the deadline through
   * `Config.clientMetadataDeadlineMs`.
   */
  clientMetadata: { deadlineMs: 5_000, maxBytes: 64 * 1024, urlMax: 2048, cacheFloorSeconds: 60, cacheCeilingSeconds: 86_400, cacheEntries: 1000 },
  symbol: 64,
  colorHex: 16,
  trashPurgeDays: 30,
  personalTokens: { active: 25, perDay: 10, expiryDays: [30, 90, 180, 365] as const },
  webhookDeliveries: { kept: 100, days: 30 },
  refresh: { graceSeconds: 30, grantLifeDays: 365 },
  session: { lifeDays: 30 },
  password: { min: 10, max: 1024 },
  email: 254,
  /** DECISIONS §4: JSON bodies up to 1 MiB; file uploads up to 25 MiB. */
  jsonBodyBytes: 1024 * 1024,
  /** File bytes are sealed in chunks of this size (docs/security.md "Attachment files"). */
  fileChunkBytes: 64 * 1024,
  /** Issue 11.10 (docs/api.md): arrays/objects nested at most this deep in a JSON body. */
  jsonDepth: 32,
  fileBodyBytes: 25 * 1024 * 1024,
  /**
   * Issue 11.1: calls in one /trpc batch (each counts against the buckets it would hit alone), and
   * password hashes (scrypt) running at once; more wait in a queue of `passwordQueue`, beyond
   * which a request is refused with 429.
   */
  trpcBatchMax: 16,
  passwordConcurrency: 2,
  passwordQueue: 64,
  /** Spec §7 account_too_large: rows a request may decrypt beyond its page (core/decrypt-budget.ts). */
  decryptRowsPerRequest: 20_000,
  /** To-dos (DECISIONS §5): title, tags and checklist sizes. */
  todo: { title: 4096, notes: 100_000, tags: 100, checklist: 100, checklistTitle: 4096, recurrenceRule: 1024 },
  /**
   * Issue 30 (docs/caldav.md): a CalDAV request body (XML or iCalendar) up to 1 MiB, an XML body of
   * at most 10,000 elements, sync snapshots kept per collection (the newest; older ones also go
   * after CAIRN_DAV_SYNC_RETENTION_DAYS).
   */
  dav: { bodyBytes: 1024 * 1024, xmlElements: 10_000, snapshotsPerCollection: 8 },
} as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * A fixed-window bucket: at most `limit` hits per window; windows are aligned to the epoch.
 * `countOn: 'success'`: only requests that succeed are counted (creation quotas); others count
 * every attempt.
 */
export type WindowBucket = { per: 'credential' | 'user' | 'ip' | 'account'; limit: number; windowMs: number; countOn?: 'success' | 'failure' };
/** A token bucket: refills `ratePerSecond`, holds at most `burst`. */
export type TokenBucket = { per: 'ip'; ratePerSecond: number; burst: number };
export type RateBucket = WindowBucket | TokenBucket;

/**
 * Spec §8.1: every rate-limit bucket, in one table (docs/api.md "Rate limits"). Windows are fixed
 * and aligned to the epoch, so a one-day bucket turns over at UTC midnight like the daily token
 * count (spec §5.1 rule 4). The edge bucket is a token bucket: 20/s sustained, bursts of 100.
 * `per` is the subject counted: the presented credential (SHA-256 of the bearer token), the
 * authenticated user, or the client IP. `credential` and `credentialWrites` and `edge` apply to
 * every request; the others are attached by route: procedures list them in meta `rateLimits`,
 * plain Express routes mount `routeLimit(deps, name)` (rest/rate-limit.ts; counters in routers/middleware/rate-limit.ts). Budgets are multiplied
 * by `config.rateLimitFactor` (scaleBucket).
 */
export const RATE_BUCKETS = {
  credential: { per: 'credential', limit: 600, windowMs: 5 * MINUTE },
  credentialWrites: { per: 'credential', limit: 120, windowMs: 5 * MINUTE },
  oauthToken: { per: 'ip', limit: 60, windowMs: MINUTE },
  oauthRegister: { per: 'ip', limit: 10, windowMs: HOUR },
  /** Not in spec §8.1: each authorize page stores a pending request (20 min), so a page costs storage. */
  oauthAuthorize: { per: 'ip', limit: 30, windowMs: MINUTE },
  approvalLookupUser: { per: 'user', limit: 10, windowMs: MINUTE },
  approvalLookupIp: { per: 'ip', limit: 30, windowMs: MINUTE },
  keyCreate: { per: 'user', limit: LIMITS.personalTokens.perDay, windowMs: DAY, countOn: 'success' },
  webhookCreate: { per: 'user', limit: 20, windowMs: HOUR, countOn: 'success' },
  // Issue 28 (docs/webhooks.md "Rate limits"): each ping and redelivery is a request to a receiver
  // the user chose, and lifts a timeout hold. Not in spec §8.1: Cairn's own.
  webhookPing: { per: 'user', limit: 30, windowMs: HOUR, countOn: 'success' },
  webhookRedeliver: { per: 'user', limit: 100, windowMs: HOUR, countOn: 'success' },
  edge: { per: 'ip', ratePerSecond: 20, burst: 100 },
  // Issue 11.1 (docs/security.md "Password checks"): every request that runs a password hash
  // (register, login, password change, rotate-key) counts per IP; wrong passwords count per
  // account (login by email, the others by the signed-in user), so guessing one account from many
  // addresses stops too. Not in spec §8.1: Cairn's own.
  passwordIp: { per: 'ip', limit: 20, windowMs: 5 * MINUTE },
  passwordFailures: { per: 'account', limit: 10, windowMs: 15 * MINUTE, countOn: 'failure' },
} as const satisfies Record<string, RateBucket>;

export type RateBucketName = keyof typeof RATE_BUCKETS;

/** A bucket with its budget multiplied by CAIRN_RATE_LIMIT_FACTOR (never below 1). */
export function scaleBucket(bucket: RateBucket, factor: number): RateBucket {
  const n = (v: number) => Math.max(1, Math.floor(v * factor));
  return 'limit' in bucket
    ? { ...bucket, limit: n(bucket.limit) }
    : { per: bucket.per, ratePerSecond: bucket.ratePerSecond * factor, burst: n(bucket.burst) };
}

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  dbFile: string;
  publicUrl: string;
  masterKeyHex: string | undefined;
  allowSignup: boolean;
  rateLimitFactor: number;
  unsafeAllowLoopback: boolean;
  trustProxy: string | undefined;
  /** CAIRN_IPV6_PREFIX: the prefix length per-IP rate buckets key an IPv6 client by (routers/middleware/rate-limit.ts ipBucketKey). */
  ipv6Prefix: number;
  scryptLogN: number;
  shutdownGraceMs: number;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  durability: 'full' | 'relaxed';
  /** CAIRN_MAX_ACCOUNT_ITEMS: the account_too_large threshold (routers/account-size.ts). */
  maxAccountItems: number;
  /** CAIRN_MAX_UPLOAD_BYTES: the file upload limit (413 payload_too_large past it, found while streaming). */
  maxUploadBytes: number;
  /** CAIRN_MAX_IMPORT_BYTES: the import body limit (413 payload_too_large past it, found while reading). */
  maxImportBytes: number;
  /** Issue 18.7: connection timeouts (server/http.ts createHttpServer), in ms. */
  httpTimeouts: { headersMs: number; requestMs: number; keepAliveMs: number; socketIdleMs: number };
  /** CAIRN_MCP_ALLOWED_ORIGINS: origins (besides PUBLIC_URL's) a browser may call /mcp from (mcp/door.ts). */
  mcpAllowedOrigins?: string[];
  /** Test-only: the procedure path after whose commit the process kills itself. */
  crashAfterCommit?: string | undefined;
  /** CAIRN_METRICS: whether GET /metrics exists (server/metrics.ts); off when absent. */
  metrics?: boolean;
  /** CAIRN_METRICS_TOKEN: a bearer token that opens /metrics to non-loopback clients. */
  metricsToken?: string | undefined;
  /** CAIRN_BACKUP_*: scheduled backups (server/jobs/backup.ts); absent when CAIRN_BACKUP_DIR is unset. */
  backup?: { dir: string; everyMs: number; keep: number } | undefined;
  /** CAIRN_DAV_SYNC_RETENTION_DAYS: how long a CalDAV sync token stays valid (dav/sync.ts); 90 when absent. */
  davSyncRetentionDays?: number;
  /** Overrides LIMITS.decryptRowsPerRequest (tests set a small one). */
  decryptRowLimit?: number;
  /** Test-only: overrides LIMITS.linkTitle.deadlineMs (a never-answering server, a short wait). */
  linkTitleDeadlineMs?: number;
  /** Test-only: overrides LIMITS.clientMetadata.deadlineMs (a never-answering server, a short wait). */
  clientMetadataDeadlineMs?: number;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    dbFile: path.join(dataDir, 'cairn.db'),
    publicUrl,
    masterKeyHex: e.CAIRN_MASTER_KEY,
    allowSignup: e.CAIRN_ALLOW_SIGNUP,
    rateLimitFactor: e.CAIRN_RATE_LIMIT_FACTOR,
    unsafeAllowLoopback: e.CAIRN_UNSAFE_ALLOW_LOOPBACK,
    trustProxy: e.CAIRN_TRUST_PROXY?.trim() || undefined,
    ipv6Prefix: e.CAIRN_IPV6_PREFIX,
    scryptLogN: e.CAIRN_SCRYPT_LOG_N,
    shutdownGraceMs: e.CAIRN_SHUTDOWN_GRACE_MS,
    logLevel: e.LOG_LEVEL,
    durability: e.CAIRN_DURABILITY,
    maxAccountItems: e.CAIRN_MAX_ACCOUNT_ITEMS,
    maxUploadBytes: e.CAIRN_MAX_UPLOAD_BYTES,
    maxImportBytes: e.CAIRN_MAX_IMPORT_BYTES,
    httpTimeouts: {
      headersMs: Math.min(e.CAIRN_HEADERS_TIMEOUT_MS, e.CAIRN_REQUEST_TIMEOUT_MS), // Node requires headers ≤ request
      requestMs: e.CAIRN_REQUEST_TIMEOUT_MS,
      keepAliveMs: e.CAIRN_KEEP_ALIVE_TIMEOUT_MS,
      socketIdleMs: e.CAIRN_SOCKET_IDLE_TIMEOUT_MS,
    },
    crashAfterCommit: e.CAIRN_UNSAFE_CRASH_AFTER_COMMIT || undefined,
    davSyncRetentionDays: e.CAIRN_DAV_SYNC_RETENTION_DAYS,
    backup: e.CAIRN_BACKUP_DIR?.trim()
      ? {
          dir: path.resolve(e.CAIRN_BACKUP_DIR.trim()),
          everyMs: Number(e.CAIRN_BACKUP_EVERY.slice(0, -1)) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[e.CAIRN_BACKUP_EVERY.slice(-1) as 'm' | 'h' | 'd'],
          keep: e.CAIRN_BACKUP_KEEP,
        }
      : undefined,
    metrics: e.CAIRN_METRICS,
    metricsToken: e.CAIRN_METRICS_TOKEN || undefined,
    mcpAllowedOrigins: (e.CAIRN_MCP_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
  };
}
