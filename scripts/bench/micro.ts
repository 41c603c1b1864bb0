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
import { loadConfig } from '../../server/config.js';
import { openDb, closeDb } from '../../db/client.js';
import * as schema from '../../db/schema/index.js';
import { deriveServerKeys, loadMasterKey } from '../../server/crypto/master-key.js';
import { createLogger } from '../../server/logger.js';
import { systemClock } from '../../server/clock.js';
import type { Deps } from '../../server/deps.js';
import { createApp } from '../../server/app.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { authenticate, PAT_PREFIX, wrapPurpose } from '../../server/auth/credentials.js';
import { credentialKek, unwrapDataKey } from '../../server/crypto/keywrap.js';
import { fromB64u, sha256 } from '../../server/crypto/secrets.js';
import { openJson, rowAad } from '../../server/crypto/seal.js';
import { median } from './stats.js';
import type { MicroResult, MicroRow } from './protocol.js';

const TARGET_MS = Number(process.env.BENCH_MICRO_MS ?? 400);

/** µs per call: warm-up, then batches of ~2 ms until TARGET_MS; the median batch mean. */
async function measure(fn: () => unknown): Promise<number> {
  const first = fn();
  const isAsync = first instanceof Promise;
  if (isAsync) await first;
  const once = isAsync ? async () => void (await fn()) : () => void fn();
  const t0 = process.hrtime.bigint();
  let warm = 0;
  while (warm < 200 && Number(process.hrtime.bigint() - t0) < 50e6) {
    await once();
    warm++;
  }
  const perCall = Number(process.hrtime.bigint() - t0) / 1e3 / Math.max(1, warm);
  const batch = Math.max(1, Math.round(2_000 / Math.max(perCall, 0.01)));
  const means: number[] = [];
  const end = Date.now() + TARGET_MS;
  while (Date.now() < end || means.length < 7) {
    const s = process.hrtime.bigint();
    if (isAsync) for (let i = 0; i < batch; i++) await once();
    else for (let i = 0; i < batch; i++) once();
    means.push(Number(process.hrtime.bigint() - s) / 1e3 / batch);
  }
  return median(means);
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

async function main(): Promise<void> {
  const token = process.env.BENCH_TOKEN!;
  const config = loadConfig();
  const db = openDb(config.dbFile);
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

  const rows: MicroRow[] = [];
  const add = async (name: string, fn: () => unknown, note?: string) => {
    const us = await measure(fn);
    rows.push(note ? { name, usPerOp: us, note } : { name, usPerOp: us });
    return us;
  };

  const cred = db.select().from(schema.credentials).where(eq(schema.credentials.secretHash, sha256(secret))).get()!;
  const lookup = await add('token lookup: SHA-256 + SELECT credential', () =>
    db.select().from(schema.credentials).where(eq(schema.credentials.secretHash, sha256(secret))).get(),
  );
  const unwrap = await add('key unwrap: HKDF + AES-GCM open of the data key', () =>
    unwrapDataKey(credentialKek(secret, cred.kind), cred.userId, wrapPurpose(cred.id), cred.wrappedKey!),
  );
  const authAll = await add('authenticate() as a whole', () => authenticate(deps, auth));
  const principal = await authenticate(deps, auth);
  const row = db.select().from(table).where(and(eq(table.userId, principal.userId), eq(table.id, id))).get() as { sealed: Buffer; id: string };
  const select = await add(`row read: SELECT one ${resource} row (drizzle)`, () =>
    db.select().from(table).where(and(eq(table.userId, principal.userId), eq(table.id, id))).get(),
  );
  const decrypt = await add('decrypt: AES-GCM open + JSON.parse of the row', () => openJson(principal.dek, rowAad(principal.userId, resource, row.id), row.sealed));
  const factory = createCallerFactory(appRouter);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const caller = () => factory(createContextInner({ deps, requestId: 'bench-micro', authorization: auth })) as any;
  const proc = await add(`tRPC caller: ${resource}.get in-process (auth + zod + model)`, () => caller()[resource].get({ id }));

  const bare = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const http = await add('HTTP round trip, bare node:http, same process (client + server)', () => get(bare.port, '/', {}));

  const silent = await listen(createApp(deps));
  const headers = { authorization: auth };
  const rest = await add(`HTTP GET /v1/${resource}/{id}, log silent`, () => get(silent.port, `/v1/${resource}/${id}`, headers));
  const trpcPath = `/trpc/${resource}.get?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`;
  const trpc = await add(`HTTP GET /trpc/${resource}.get, log silent`, () => get(silent.port, trpcPath, headers));

  const devnull = pino.destination({ dest: '/dev/null', sync: true });
  const logged = await listen(createApp({ ...deps, log: createLogger('info', devnull as unknown as NodeJS.WritableStream) }));
  const restLogged = await add(`HTTP GET /v1/${resource}/{id}, log info (as deployed)`, () => get(logged.port, `/v1/${resource}/${id}`, headers));

  const split: MicroRow[] = [
    { name: 'token lookup (SHA-256 + SELECT)', usPerOp: lookup },
    { name: 'key unwrap (HKDF + AES-GCM)', usPerOp: unwrap },
    { name: 'rest of authentication (parse, scopes)', usPerOp: authAll - lookup - unwrap },
    { name: 'row read (SELECT)', usPerOp: select },
    { name: 'decrypt (AES-GCM + JSON.parse)', usPerOp: decrypt },
    { name: 'tRPC procedure overhead (middleware, zod in/out, shaping)', usPerOp: proc - authAll - select - decrypt },
    { name: 'REST facade (Express + trpc-to-openapi + guards)', usPerOp: rest - proc - http },
    { name: 'HTTP stack, both ends (bare node:http round trip)', usPerOp: http },
    { name: 'access log (pino at info)', usPerOp: restLogged - rest },
    { name: '= total GET /v1 (log info)', usPerOp: restLogged },
    { name: 'for comparison: /trpc adapter overhead', usPerOp: trpc - proc - http },
  ];

  for (const s of [bare.server, silent.server, logged.server]) {
    s.closeAllConnections();
    s.close();
  }
  agent.destroy();
  closeDb(db);
  const result: MicroResult = { type: 'micro', resource, accountSize: Number(process.env.BENCH_ACCOUNT_SIZE ?? 0), rows, split };
  process.send!(result, () => process.exit(0));
}

main().catch((e) => {
  console.error('micro failed:', e);
  process.exit(1);
});
