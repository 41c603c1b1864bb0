// The process: boot, listen, shut down cleanly on SIGTERM/SIGINT (finish in-flight requests,
// close the database), and always end within a bound (issue 11.9).
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../core/config.js';
import { closeDb } from '../db/client.js';
import { createLogger } from '../core/logger.js';
import { systemClock } from '../core/clock.js';
import { createRequestHandler } from './handler.js';
import { createHttpServer } from './http.js';
import { startJobs } from './jobs/scheduler.js';
import { createDispatcher } from './webhooks/dispatcher.js';
import { closeLiveStreams } from '../routers/live/model.js';
import { openData, StartupError } from './startup.js';
import { markInterruptedImports } from '../routers/imports/jobs.js';
import type { Deps } from '../routers/deps.js';
import type { Logger } from 'pino';

/** After the grace period, connections are closed; this long after it, the process exits regardless. */
const HARD_EXIT_AFTER_GRACE_MS = 1_000;

/**
 * Issue 11.5 (docs/security.md "Files on disk"): DATA_DIR is 0700 when the server creates it
 * (server/startup.ts), and everything created under it is 0600 by the process umask. An existing
 * directory keeps the operator's mode; a warning says when others can read it.
 */
function warnIfOpen(dataDir: string, log: Logger): void {
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
  // Issue 28 items 8 and 9: DATA_DIR, the master key and the key the database was made with are
  // checked before anything is created or migrated; a refusal ends the start here.
  const { db, keys, keySource, warnings } = openData(config);
  warnIfOpen(config.dataDir, log);
  for (const w of warnings) log.warn({ dataDir: config.dataDir }, w);
  const deps: Deps = { db, config, keys, clock: systemClock, log };
  // Import jobs the last stop cut off read `interrupted` from now on (routers/imports/jobs.ts).
  markInterruptedImports(deps);
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
    // Live streams (routers/live) never finish on their own: end them, or close would wait the grace period.
    closeLiveStreams(deps);
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
    server.once('error', (err: NodeJS.ErrnoException) => {
      // Issue 28 item 9: the refusal names the settings (EADDRINUSE, EADDRNOTAVAIL, EACCES…).
      const why = err.code === 'EADDRINUSE' ? 'the address is in use (another server runs there?)' : err.code === 'EACCES' ? 'not permitted (ports below 1024 need privileges)' : err.message;
      reject(new StartupError(`HOST ${config.host}, PORT ${config.port}: cannot listen: ${why} (${err.code ?? 'error'})`));
    });
    server.listen(config.port, config.host, resolve);
  });
  const addr = server.address();
  const address = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
  const dataDir = path.resolve(config.dataDir);
  const v = version();
  // Issue 13 item 4: one line a person can read, saying where it listens and what it keeps where.
  log.info({ address, dataDir, publicUrl: config.publicUrl, version: v, masterKey: keySource }, `cairn ${v} listening on ${address}, DATA_DIR ${dataDir}`);
}

main().catch((err) => {
  // A refusal is one message that names the setting or the path and what to do: no stack.
  if (err instanceof StartupError || err instanceof ConfigError) console.error(`cairn: not started: ${err.message}`);
  else console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
