// A real server for tests: a temp DATA_DIR with a real SQLite file, the real Express app on a
// loopback port, and a manual clock (tests never sleep).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { manualClock } from '../../core/clock.js';
import { createRequestHandler } from '../../server/handler.js';
import { attachClientErrorHandler } from '../../server/http.js';
import type { Deps } from '../../routers/deps.js';
import type { OutboundTestHooks } from '../../core/net/index.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';

const callerFactory = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof callerFactory>;

export type TestApp = {
  url: string;
  deps: Deps;
  clock: ReturnType<typeof manualClock>;
  dataDir: string;
  masterKey: Buffer;
  /** A tRPC caller acting with the given bearer token (no HTTP). */
  caller: (token?: string) => Caller;
  close: () => Promise<void>;
};

export async function startApp(
  env: Record<string, string> = {},
  configPatch: Partial<Config> = {},
  opts: { logStream?: NodeJS.WritableStream; outbound?: OutboundTestHooks } = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-test-'));
  const masterKey = randomBytes(32);
  // Rate-limit budgets ×1000 unless a test asks otherwise (test/rest/rate-limits.rest.test.ts
  // runs at factor 1): the manual clock never refills the edge bucket on its own.
  const base = loadConfig({ DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT_FACTOR: '1000', ...env });
  const clock = manualClock();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const config: Config = { ...base, port, publicUrl: `http://127.0.0.1:${port}`, ...configPatch };
  const db = openDb(config.dbFile, { durability: config.durability });
  const deps: Deps = { db, config, keys: deriveServerKeys(masterKey), clock, log: opts.logStream ? createLogger('info', opts.logStream) : createLogger('silent'), ...(opts.outbound ? { outbound: opts.outbound } : {}) };
  // As main.ts does (server/http.ts): what Node's parser refuses is answered as a problem.
  attachClientErrorHandler(server, deps);
  server.on('request', createRequestHandler(deps));
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    clock,
    dataDir,
    masterKey,
    caller: (token?: string) =>
      callerFactory(createContextInner({ deps, requestId: 'test', authorization: token ? `Bearer ${token}` : undefined })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      closeDb(db);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
