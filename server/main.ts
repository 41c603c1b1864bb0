// The process: boot, listen, shut down cleanly on SIGTERM/SIGINT (finish in-flight requests,
// close the database), and always end within a bound (issue 11.9).
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../core/config.js';
import { openDb, closeDb } from '../db/client.js';
import { deriveServerKeys, loadMasterKey } from '../core/crypto/master-key.js';
import { createLogger } from '../core/logger.js';
import { systemClock } from '../core/clock.js';
import { createRequestHandler } from './handler.js';
import { createHttpServer } from './http.js';
import { startJobs } from './jobs/scheduler.js';
import { createDispatcher } from './webhooks/dispatcher.js';
import type { Deps } from '../routers/deps.js';
import type { Logger } from 'pino';

/** After the grace period, connections are closed; this long after it, the process exits regardless. */
const HARD_EXIT_AFTER_GRACE_MS = 1_000;

/**
 * Issue 11.5 (docs/security.md "Files on disk"): DATA_DIR is 0700 when the server creates it, and
 * everything created under it is 0600 by the process umask. An existing directory keeps the
 * operator's mode; a warning says when others can read it.
 */
function prepareDataDir(dataDir: string, log: Logger): void {
  let existed = true;
  try {
    statSync(dataDir);
  } catch {
    existed = false;
  }
  if (!existed) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
    return;
  }
  const mode = statSync(dataDir).mode & 0o777;
  if (mode & 0o077) {
    log.warn({ dataDir, mode: mode.toString(8).padStart(4, '0') }, 'DATA_DIR is accessible to other users; chmod 700 it');
  }
}

/** The version in package.json: two levels up from dist/server/, one from server/ (tsx). */
function version(): string {
  for (const up of ['..', '../..']) {
    const file = path.join(import.meta.dirname, up, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

async function main(): Promise<void> {
  // Files this process creates (cairn.db, -wal, -shm, master.key) are readable by its user only.
  process.umask(0o077);
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  prepareDataDir(config.dataDir, log);
  const db = openDb(config.dbFile, { durability: config.durability });
  const keys = deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex));
  const deps: Deps = { db, config, keys, clock: systemClock, log };
  const server = createHttpServer(createRequestHandler(deps), deps);
  const stopJobs = startJobs(deps);
  // Webhook deliveries (server/webhooks): beside request handling, on their own timer.
  const dispatcher = createDispatcher(deps);
  dispatcher.start();

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    // No new send starts; a send cut off by the exit stays due and goes again after a restart.
    dispatcher.stop();
    server.close(() => {
      stopJobs();
      closeDb(db);
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    // In-flight requests get CAIRN_SHUTDOWN_GRACE_MS (default 10 s) to finish.
    setTimeout(() => {
      server.closeAllConnections();
    }, config.shutdownGraceMs).unref();
    // Issue 11.9: whatever still holds the process (a stalled stdout, a stuck handle), it exits
    // 1 s after the grace period. Logging cannot block (core/logger.ts), so this timer runs.
    setTimeout(() => {
      process.exit(1);
    }, config.shutdownGraceMs + HARD_EXIT_AFTER_GRACE_MS).unref();
  };
  // Installed before the listen line, so a supervisor reacting to it can already stop us.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

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
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
