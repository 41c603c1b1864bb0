// In-process microbenchmark: where the time of one authenticated read goes. It runs Cairn's own
// functions against the bench's seeded DATA_DIR (after the Cairn server has stopped), one call
// at a time, and splits a `GET /v1/{resource}/{id}` into token lookup, key unwrap, the rest of
// authentication, the row read, decryption, tRPC procedure overhead, the REST facade
// (Express + trpc-to-openapi), the HTTP stack and the access log.
// Env: DATA_DIR, BENCH_TOKEN, BENCH_TODO_ID, BENCH_TAG_ID. Reports a MicroResult over IPC.
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq } from 'drizzle-orm';
import { pino } from 'pino';
import { loadConfig } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import * as schema from '../../db/schema/index.js';
import { deriveServerKeys, loadMasterKey } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { createRequestHandler } from '../../server/handler.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { authenticate, PAT_PREFIX, wrapPurpose } from '../../routers/auth/credentials.js';
import { credentialKek, unwrapDataKey } from '../../core/crypto/keywrap.js';
import { fromB64u, sha256 } from '../../core/crypto/secrets.js';
import { open, openJson, rowAad, seal } from '../../core/crypto/seal.js';
import { sealV1 } from '../../core/crypto/seal-v1.js';
import superjson from 'superjson';
import { median } from './stats.js';
import { accessLogger } from '../../core/logger.js';
import { newRequestId } from '../../core/ids.js';
import { parseBearerHeader } from '../../routers/auth/credentials.js';
import { limiterFor } from '../../routers/middleware/rate-limit.js';
import { match as matchV1 } from '../../rest/v1.js';
import { serializeAnswer } from '../../rest/trpc.js';
import { callProcedure, PROCEDURES } from '../../rest/procedures.js';
import { getTodo, listTodos, updateTodo } from '../../routers/todos/model.js';
import { runWrite } from '../../routers/middleware/atomic.js';
import { sealJson } from '../../core/crypto/seal.js';
import type { MicroResult, MicroRow } from './protocol.js';

/** Milliseconds per op per round, and rounds. */
const ROUND_MS = Number(process.env.BENCH_MICRO_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_MICRO_ROUNDS ?? 5);

type Op = { name: string; fn: () => unknown; once?: () => Promise<void> | void; isAsync?: boolean; batch?: number; rounds: number[] };

/** Warm-up and calibration: a batch lasts about 2 ms. */
async function prepare(op: Op): Promise<void> {
  const first = op.fn();
  op.isAsync = first instanceof Promise;
  if (op.isAsync) await first;
  op.once = op.isAsync ? async () => void (await op.fn()) : () => void op.fn();
  const t0 = process.hrtime.bigint();
  let warm = 0;
  while (warm < 200 && Number(process.hrtime.bigint() - t0) < 50e6) {
    await op.once();
    warm++;
  }
  const perCall = Number(process.hrtime.bigint() - t0) / 1e3 / Math.max(1, warm);
  op.batch = Math.max(1, Math.round(2_000 / Math.max(perCall, 0.01)));
}

/** One round of one op: batches for ROUND_MS; the median batch mean in µs per call. */
async function round(op: Op): Promise<number> {
  const means: number[] = [];
  const end = Date.now() + ROUND_MS;
  const once = op.once!;
  while (Date.now() < end || means.length < 5) {
    const s = process.hrtime.bigint();
    if (op.isAsync) for (let i = 0; i < op.batch!; i++) await once();
    else for (let i = 0; i < op.batch!; i++) once();
    means.push(Number(process.hrtime.bigint() - s) / 1e3 / op.batch!);
  }
  return median(means);
}

/**
 * The ops are measured in interleaved rounds (op1, op2, … then again), so a burst of load from
 * other processes hits them alike; each op's figure is its best round (noise only adds time).
 */
async function measureAll(ops: Op[]): Promise<void> {
  for (const op of ops) await prepare(op);
  for (let r = 0; r < ROUNDS; r++) for (const op of ops) op.rounds.push(await round(op));
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function get(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`GET ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A to-do's sealed content of exactly 290 bytes (the size issue 29's figures were taken at). */
function row290(): Buffer {
  const base = { title: 'Renew the passport before the summer trip', notes: '', whenDate: '2026-11-23', deadline: null, priority: 'high', tags: ['errands'], checklist: [{ title: 'photos', done: false }] };
  const pad = 290 - Buffer.byteLength(JSON.stringify(base));
  return Buffer.from(JSON.stringify({ ...base, notes: 'n'.repeat(pad) }), 'utf8');
}

async function main(): Promise<void> {
  const token = process.env.BENCH_TOKEN!;
  const config = loadConfig();
  const db = openDb(config.dbFile, { durability: config.durability });
  const keys = deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex));
  const deps: Deps = { db, config, keys, clock: systemClock, log: createLogger('silent') };
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures;
  const tables = schema as unknown as Record<string, Parameters<typeof db.select>[0] & Record<string, unknown>>;

  const useTodos = !!process.env.BENCH_TODO_ID && 'todos.get' in procedures && 'todos' in tables;
  const resource = useTodos ? 'todos' : 'tags';
  const id = (useTodos ? process.env.BENCH_TODO_ID : process.env.BENCH_TAG_ID)!;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const table = (schema as any)[resource];
  const auth = `Bearer ${token}`;
  const secret = fromB64u(token.slice(PAT_PREFIX.length))!;

  const cred = db.select().from(schema.credentials).where(eq(schema.credentials.secretHash, sha256(secret))).get()!;
  const principal = await authenticate(deps, auth);
  const row = db.select().from(table).where(and(eq(table.userId, principal.userId), eq(table.id, id))).get() as { sealed: Buffer; id: string };
  // For comparison with drizzle's per-call query building and statement preparation.
  const rawSelect = db.$client.prepare(`SELECT * FROM "${resource}" WHERE user_id = ? AND id = ?`);
  const factory = createCallerFactory(appRouter);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const caller = () => factory(createContextInner({ deps, requestId: 'bench-micro', authorization: auth })) as any;

  const bare = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const silent = await listen(createRequestHandler(deps));
  const devnull = pino.destination({ dest: '/dev/null', sync: true });
  const logged = await listen(createRequestHandler({ ...deps, log: createLogger('info', devnull as unknown as NodeJS.WritableStream) }));
  const headers = { authorization: auth };
  const trpcPath = `/trpc/${resource}.get?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`;

  const op = (name: string, fn: () => unknown): Op => ({ name, fn, rounds: [] });
  const ops = {
    lookup: op('token lookup: SHA-256 + SELECT credential', () => db.select().from(schema.credentials).where(eq(schema.credentials.secretHash, sha256(secret))).get()),
    unwrap: op('key unwrap: HKDF + open of the data key (its wrap)', () => unwrapDataKey(credentialKek(secret, cred.kind), cred.userId, wrapPurpose(cred.id), cred.wrappedKey!)),
    authAll: op('authenticate() as a whole', () => authenticate(deps, auth)),
    select: op(`row read: SELECT one ${resource} row (drizzle)`, () => db.select().from(table).where(and(eq(table.userId, principal.userId), eq(table.id, id))).get()),
    selectRaw: op(`the same row read, statement prepared once (better-sqlite3)`, () => rawSelect.get(principal.userId, id)),
    decrypt: op('decrypt: open + JSON.parse of the row', () => openJson(principal.dek, rowAad(principal.userId, resource, row.id), row.sealed)),
    proc: op(`tRPC caller: ${resource}.get in-process (auth + middleware + zod + model)`, () => caller()[resource].get({ id })),
    http: op('HTTP round trip, bare node:http, same process (client + server)', () => get(bare.port, '/', {})),
    rest: op(`HTTP GET /v1/${resource}/{id}, log silent`, () => get(silent.port, `/v1/${resource}/${id}`, headers)),
    trpc: op(`HTTP GET /trpc/${resource}.get, log silent`, () => get(silent.port, trpcPath, headers)),
    restLogged: op(`HTTP GET /v1/${resource}/{id}, log info (as deployed)`, () => get(logged.port, `/v1/${resource}/${id}`, headers)),
  };
  // The layer budget (issue 12): each layer of a read and a write called on its own.
  const layerOps: Op[] = [];
  // The two sealed formats side by side (issue 29, docs/sealed-format.md): open and seal of a
  // 290-byte row under the user's data key and a to-do's AAD, each through core/crypto/seal.ts as
  // served (a v1 blob opens there too); v1's seal is the kept v1 code (core/crypto/seal-v1.ts).
  const fmtAad = rowAad(principal.userId, 'todos', id);
  const fmtRow = row290();
  const v1Blob = sealV1(principal.dek, fmtAad, fmtRow);
  const v2Blob = seal(principal.dek, fmtAad, fmtRow);
  layerOps.push(
    op('sealed format v1 (AES-256-GCM, node:crypto): open a 290-byte row', () => open(principal.dek, fmtAad, v1Blob)),
    op('sealed format v2 (XChaCha20-Poly1305, libsodium): open a 290-byte row', () => open(principal.dek, fmtAad, v2Blob)),
    op('sealed format v1 (AES-256-GCM, node:crypto): seal a 290-byte row', () => sealV1(principal.dek, fmtAad, fmtRow)),
    op('sealed format v2 (XChaCha20-Poly1305, libsodium): seal a 290-byte row', () => seal(principal.dek, fmtAad, fmtRow)),
  );
  if (useTodos) {
    const get = PROCEDURES['todos.get']!;
    const list = PROCEDURES['todos.list']!;
    const zIn = get._def.inputs[0] as { parse(v: unknown): unknown };
    const zOut = (get._def as unknown as { output: { parse(v: unknown): unknown } }).output;
    const zPage = (list._def as unknown as { output: { parse(v: unknown): unknown } }).output;
    const todo = getTodo(deps, principal, id);
    const page = listTodos(deps, principal, { limit: 50 } as never);
    const hash = sha256(secret);
    const byHash = db.$client.prepare('SELECT id, user_id, kind, wrapped_key, scopes, expires_at, last_used_at, revoked_at FROM credentials WHERE secret_hash = ?');
    const kek = credentialKek(secret, cred.kind);
    const limiter = limiterFor(deps);
    const subject = parseBearerHeader(auth)!.subject;
    const access = accessLogger(createLogger('info', devnull as unknown as NodeJS.WritableStream));
    const redacting = createLogger('info', devnull as unknown as NodeJS.WritableStream);
    const line = () => ({ requestId: 'REQ', method: 'GET', path: `/v1/todos/${id}`, route: 'todos.get', status: 200, durationMs: 1.23 });
    const callOpts = (ctx: unknown) => ({ path: 'todos.get', ctx, type: 'query' as const, getRawInput: async () => ({ id }), signal: undefined, batchIndex: 0 });
    const ctxOf = () => createContextInner({ deps, requestId: 'bench-micro', authorization: auth });
    const writeCtx = () => ({ deps, principal, http: { headers: {} } });
    let n = 0;
    layerOps.push(
      op('listener: request id', () => newRequestId()),
      op('access log line (pino, no redaction: as served)', () => access.info(line(), 'request')),
      op('access log line with the redaction pass (before)', () => redacting.info(line(), 'request')),
      op('route match (compiled /v1 table)', () => matchV1('GET', `/v1/todos/${id}`)),
      op('input parse (zod, todos.get)', () => zIn.parse({ id })),
      op('auth: bearer parse + the one SHA-256', () => parseBearerHeader(auth)),
      op('auth: credential SELECT by hash', () => byHash.get(hash)),
      op('auth: HKDF (key-encryption key)', () => credentialKek(secret, cred.kind)),
      op('auth: unwrap of the data key (open of its wrap)', () => unwrapDataKey(kek, cred.userId, wrapPurpose(cred.id), cred.wrappedKey!)),
      op('auth: authenticate() whole', () => authenticate(deps, auth)),
      op('rate bucket hit (credential)', () => limiter.hit([{ name: 'credential', subject }])),
      op('model: getTodo (row, open, tags, shape)', () => getTodo(deps, principal, id)),
      op('output check (zod, one to-do)', () => zOut.parse(todo)),
      op('JSON.stringify (one to-do)', () => JSON.stringify(todo)),
      op('superjson.serialize (one to-do)', () => superjson.serialize(todo)),
      op('serializeAnswer (one to-do, /trpc as served)', () => serializeAnswer(todo)),
      op('procedure chain, tRPC caller (todos.get)', () => (get as unknown as (o: unknown) => Promise<unknown>)(callOpts(ctxOf()))),
      op('procedure chain, callProcedure (todos.get, as served)', () => callProcedure(get, callOpts(ctxOf()))),
      op('model: listTodos limit 50', () => listTodos(deps, principal, { limit: 50 } as never)),
      op('output check (zod, page of 50)', () => zPage.parse(page)),
      op('JSON.stringify (page of 50)', () => JSON.stringify(page)),
      op('superjson.serialize (page of 50)', () => superjson.serialize(page)),
      op('serializeAnswer (page of 50, /trpc as served)', () => serializeAnswer(page)),
      op('seal one to-do (JSON + seal)', () => sealJson(principal.dek, rowAad(principal.userId, 'todos', id), todo)),
      op('write: PATCH model in its IMMEDIATE transaction, commit included', () => runWrite(writeCtx(), () => updateTodo(deps, principal, { id, title: `micro ${n++}` }))),
    );
  }
  await measureAll([...Object.values(ops), ...layerOps]);
  const best = (o: Op) => Math.min(...o.rounds);
  const rows: MicroRow[] = Object.values(ops).map((o) => ({ name: o.name, usPerOp: best(o) }));
  const [lookup, unwrap, authAll, select, selectRaw, decrypt, proc, http, rest, trpc, restLogged] = Object.values(ops).map(best) as [
    number, number, number, number, number, number, number, number, number, number, number,
  ];

  const split: MicroRow[] = [
    { name: 'token lookup (SHA-256 + SELECT)', usPerOp: lookup },
    { name: 'key unwrap (HKDF + open)', usPerOp: unwrap },
    { name: 'rest of authentication (parse, scopes)', usPerOp: authAll - lookup - unwrap },
    { name: 'row read (SELECT)', usPerOp: select },
    { name: 'decrypt (open + JSON.parse)', usPerOp: decrypt },
    { name: 'rest of the procedure: middleware (rate limits, idempotency), zod in/out, tag lookup, shaping', usPerOp: proc - authAll - select - decrypt },
    { name: 'HTTP layer: request setup, edge bucket, /v1 dispatch (rest/v1.ts), JSON out, and the client side of fetch', usPerOp: rest - proc - http },
    { name: 'HTTP stack, both ends (bare node:http round trip)', usPerOp: http },
    { name: 'access log (pino at info)', usPerOp: restLogged - rest },
    { name: '= total GET /v1 (log info)', usPerOp: restLogged },
    { name: 'for comparison: the same for /trpc (rest/trpc.ts, superjson)', usPerOp: trpc - proc - http },
    { name: 'for comparison: the row read with a statement prepared once', usPerOp: selectRaw },
  ];

  for (const s of [bare.server, silent.server, logged.server]) {
    s.closeAllConnections();
    s.close();
  }
  agent.destroy();
  closeDb(db);
  const layers: MicroRow[] = layerOps.map((o) => ({ name: o.name, usPerOp: best(o) }));
  const result: MicroResult = { type: 'micro', resource, accountSize: Number(process.env.BENCH_ACCOUNT_SIZE ?? 0), rows, split, layers };
  process.send!(result, () => process.exit(0));
}

main().catch((e) => {
  console.error('micro failed:', e);
  process.exit(1);
});
