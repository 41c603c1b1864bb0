// "Restarting the process" in tests: close a TestApp's database without deleting its data
// directory, then boot a fresh app (new Express app, new in-memory state) on the same SQLite
// file, master key, public URL and clock.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { loadConfig, type Config } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { createRequestHandler } from '../../server/handler.js';
import { attachClientErrorHandler } from '../../server/http.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import type { TestApp } from './app.js';

/** Boots a new app on `previous`'s data; `previous` must be stopped first (see `stopKeepingData`). */
export async function restartApp(previous: TestApp, env: Record<string, string> = {}, configPatch: Partial<Config> = {}): Promise<TestApp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = loadConfig({ DATA_DIR: previous.dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT_FACTOR: '1000', ...env });
  const config: Config = { ...base, port, publicUrl: previous.deps.config.publicUrl, ...configPatch };
  const db = openDb(config.dbFile, { durability: config.durability });
  const deps: Deps = { db, config, keys: deriveServerKeys(previous.masterKey), clock: previous.clock, log: createLogger('silent') };
  // As main.ts does (server/http.ts): what Node's parser refuses is answered as a problem.
  attachClientErrorHandler(server, deps);
  server.on('request', createRequestHandler(deps));
  const factory = createCallerFactory(appRouter);
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    clock: previous.clock,
    dataDir: previous.dataDir,
    masterKey: previous.masterKey,
    caller: (token?: string) => factory(createContextInner({ deps, requestId: 'test', authorization: token ? `Bearer ${token}` : undefined })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      closeDb(db);
      rmSync(previous.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Ends a TestApp's life as a process would: its database connection closes (its listener stays
 * up until `close()`, but can no longer serve). The data directory is kept for `restartApp`.
 */
export function stopKeepingData(app: TestApp): void {
  closeDb(app.deps.db);
}
