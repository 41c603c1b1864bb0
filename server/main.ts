// The process: boot, listen, shut down cleanly on SIGTERM/SIGINT (finish in-flight requests,
// close the database).
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from './config.js';
import { openDb, closeDb } from '../db/client.js';
import { deriveServerKeys, loadMasterKey } from './crypto/master-key.js';
import { createLogger } from './logger.js';
import { systemClock } from './clock.js';
import { createApp } from './app.js';
import { startJobs } from './jobs/scheduler.js';
import type { Deps } from './deps.js';

/** The version in package.json: two levels up from dist/server/, one from server/ (tsx). */
function version(): string {
  for (const up of ['..', '../..']) {
    const file = path.join(import.meta.dirname, up, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const db = openDb(config.dbFile);
  const keys = deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex));
  const deps: Deps = { db, config, keys, clock: systemClock, log };
  const server = createServer(createApp(deps));
  const stopJobs = startJobs(deps);
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const addr = server.address();
  const address = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
  const dataDir = path.resolve(config.dataDir);
  const v = version();
  // Issue 13 item 4: one line a person can read, saying where it listens and what it keeps where.
  log.info({ address, dataDir, publicUrl: config.publicUrl, version: v }, `cairn ${v} listening on ${address}, DATA_DIR ${dataDir}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.close(() => {
      stopJobs();
      closeDb(db);
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    // In-flight requests get 10 s to finish.
    setTimeout(() => {
      server.closeAllConnections();
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
