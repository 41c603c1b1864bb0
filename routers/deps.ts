// What every procedure, job and route needs, passed in (never imported as globals) so tests can
// build the app around a temp file and a manual clock.
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import type { Config } from '../core/config.js';
import type { ServerKeys } from '../core/crypto/master-key.js';
import type { Clock } from '../core/clock.js';
import type { OutboundTestHooks } from '../core/net/index.js';

export type Deps = {
  db: Db;
  config: Config;
  keys: ServerKeys;
  clock: Clock;
  log: Logger;
  /**
   * Test-only hooks of the outbound door (core/net): a stub resolver, an extra trusted CA, a
   * watcher of connect attempts. Absent in the real process.
   */
  outbound?: OutboundTestHooks;
};
