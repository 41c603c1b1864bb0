// Issue 33 item 2: the export's memory is bounded. An account of 50,000 to-dos is seeded through
// the to-do model directly (as scripts/bench/seed-cairn.ts does: the route's zod input, then
// createTodo, 500 per transaction), then the real server process streams GET /v1/export while
// the test reads its RSS from /proc. The growth over the RSS just before the request (after one
// export of a small account has warmed the same code) must stay under 30 MB. Built whole, the
// answer alone would be ~25 MB of JSON text (twice that as a JS string) plus every opened row.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { openDb, closeDb } from '../../db/client.js';
import { deriveServerKeys, loadMasterKey } from '../../core/crypto/master-key.js';
import { createLogger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { Deps } from '../../routers/deps.js';
import { appRouter } from '../../routers/index.js';
import { createCallerFactory, createContextInner } from '../../routers/trpc.js';
import { authenticate } from '../../routers/auth/credentials.js';
import { createTodo } from '../../routers/todos/model.js';
import { CreateTodoInput } from '../../routers/todos/schema.js';
import { processStats, serverPid, startServerProcess, type ServerProcess } from '../helpers/process.js';

const TODOS = 50_000;
const LIMIT = 30 * 1024 * 1024;

let dataDir: string;
let server: ServerProcess;
let big: string;
let small: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-export-mem-'));
  const config = loadConfig({ DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent' });
  const deps: Deps = { db: openDb(config.dbFile, { durability: 'relaxed' }), config, keys: deriveServerKeys(loadMasterKey(config.dataDir, undefined)), clock: systemClock, log: createLogger('silent') };
  const caller = createCallerFactory(appRouter)(createContextInner({ deps, requestId: 'seed' }));
  big = (await caller.auth.register({ email: 'big@example.test', password: 'correct horse battery staple' })).token;
  small = (await caller.auth.register({ email: 'small@example.test', password: 'correct horse battery staple' })).token;
  const p = await authenticate(deps, `Bearer ${big}`);
  const sqlite = deps.db.$client;
  const tags = ['home', 'work', 'errand'];
  for (let start = 0; start < TODOS; start += 500) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(TODOS, start + 500); i++) {
        createTodo(deps, p, CreateTodoInput.parse({ title: `To-do number ${i} with a title of ordinary length`, notes: i % 3 ? null : `Some notes for ${i}, a sentence or two long.`, tags: [tags[i % 3]!], whenDate: i % 5 ? null : '2026-12-01' }));
      }
    })();
  }
  closeDb(deps.db);
  server = await startServerProcess(dataDir);
}, 600_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Streams the export, sampling the server's RSS as the answer arrives; returns the bytes read and the peak RSS. */
async function streamExport(token: string, pid: number): Promise<{ bytes: number; peak: number; todos: number }> {
  const res = await fetch(`${server.url}/v1/export`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let bytes = 0;
  let peak = processStats(pid).rss;
  let todos = 0;
  let n = 0;
  let tail = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    // Counted on the text as it passes, never parsed whole here either.
    const text = tail + Buffer.from(value).toString('utf8');
    todos += text.split('"completedAt":').length - 1;
    tail = text.slice(-16);
    todos -= tail.split('"completedAt":').length - 1;
    if (++n % 8 === 0) peak = Math.max(peak, processStats(pid).rss);
  }
  todos += tail.split('"completedAt":').length - 1;
  return { bytes, peak: Math.max(peak, processStats(pid).rss), todos };
}

it('streams 50,000 to-dos with RSS growth under 30 MB', async () => {
  const pid = serverPid(server);
  await streamExport(small, pid); // warms the same code paths
  const before = processStats(pid).rss;
  const { bytes, peak, todos } = await streamExport(big, pid);
  const growth = peak - before;
  console.log(`export of ${todos} to-dos: ${(bytes / 1e6).toFixed(1)} MB of JSON; server RSS ${(before / 1e6).toFixed(1)} MB before, peak ${(peak / 1e6).toFixed(1)} MB, growth ${(growth / 1e6).toFixed(1)} MB`);
  expect(todos).toBe(TODOS);
  expect(growth).toBeLessThan(LIMIT);
}, 600_000);
