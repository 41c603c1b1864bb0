// Issue 29 item 1: `cairn reseal --email …` re-seals one account written by the v1 code while the
// server process keeps serving the same DATA_DIR: its writes and reads between the batches go
// through, nothing of the account is v1 afterwards (but the wraps of credentials made before, which
// only their secrets re-make), and no v1 value is left in cairn.db, its WAL or its free pages
// (docs/sealed-format.md "What a reseal leaves on disk").
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { stopKeepingData } from '../helpers/restart.js';
import { call } from '../helpers/http.js';
import { createEveryResource, fullUser, type Owner } from '../helpers/resources.js';
import { root, startServerProcess, tsx, type ServerProcess } from '../helpers/process.js';
import { columnsWithV1, v1Values, writingV1 } from '../helpers/sealed-scan.js';
import { loadConfig } from '../../core/config.js';
import { closeDb, openDb } from '../../db/client.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { systemClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import { resealCommand } from '../../server/cli-reseal.js';

/** The wraps that only their credential's secret re-makes: they stay v1 until it ends. */
const WRAPS = ['credentials.wrapped_key', 'oauth_tokens.wrapped_key'];
const FILE = 'x'.repeat(150_000); // three 64 KiB chunks

let app: TestApp;
let proc: ServerProcess | undefined;
let owners: Owner[] = [];
let ids: Record<string, string>[] = [];
let v1: Record<string, Buffer[]>[] = [];

beforeAll(async () => {
  app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
  // The server process runs on the system clock: credentials are made at today's time.
  app.clock.set(Date.now());
  // Two accounts as the v1 code wrote them (through the API): one for the command run in this
  // process beside the server, one for the command run as its own process.
  await writingV1(async () => {
    for (let n = 0; n < 2; n++) {
      const o = await fullUser(app);
      const made = await createEveryResource(app, o, `ResealMark${n}`);
      for (let i = 0; i < 40; i++) expect((await call(app, 'POST', '/v1/todos', { token: o.pat, body: { title: `bulk ${n} ${i}`, notes: 'n'.repeat(200) } })).status).toBe(201);
      const file = await call(app, 'POST', `/v1/attachments/files?parentType=todo&parentId=${made.todos}&title=big`, { token: o.pat, rawBody: FILE, headers: { 'content-type': 'text/plain' } });
      expect(file.status, file.text).toBe(201);
      made.bigFile = file.body.id;
      owners.push(o);
      ids.push(made);
    }
  });
  const sqlite = app.deps.db.$client;
  v1 = owners.map((o) => v1Values(sqlite, o.userId));
  expect(Object.keys(v1[0]!).length).toBeGreaterThan(15);
  expect(v1[0]!['attachment_chunks.sealed']!.length).toBeGreaterThanOrEqual(4);
  stopKeepingData(app);
  proc = await startServerProcess(app.dataDir, { CAIRN_MASTER_KEY: app.masterKey.toString('hex'), CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
}, 120_000);

afterAll(async () => {
  await proc?.stop();
  await app.close();
});

/** What a copy of DATA_DIR holds now: cairn.db, its WAL and shared-memory file. */
function dataDirBytes(): Buffer {
  return Buffer.concat(['cairn.db', 'cairn.db-wal', 'cairn.db-shm'].map((f) => path.join(app.dataDir, f)).filter(existsSync).map((f) => readFileSync(f)));
}

/** Distinctive pieces of each v1 value (its nonce and tag; its last 32 bytes, which a large value keeps on its last overflow page). */
function pieces(values: Record<string, Buffer[]>): Buffer[] {
  return Object.entries(values)
    .filter(([c]) => !WRAPS.includes(c))
    .flatMap(([, bs]) => bs.flatMap((b) => [b.subarray(1, 29), b.subarray(b.length - 32)]));
}

function readonlyDb(): Database.Database {
  return new Database(path.join(app.dataDir, 'cairn.db'), { readonly: true, fileMustExist: true });
}

describe('cairn reseal beside a running server', () => {
  it('re-seals the account in bounded batches while the server keeps answering, and leaves no v1 copy on disk', async () => {
    const server = proc!;
    const o = owners[0]!;
    const made = ids[0]!;
    const before = await call(server, 'GET', `/v1/todos/${made.todos}`, { token: o.pat });
    expect(before.status, before.text).toBe(200);
    expect(dataDirBytes().includes(pieces(v1[0]!)[0]!)).toBe(true); // the scan finds what is there

    const config = loadConfig({ ...process.env, DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' });
    const db = openDb(config.dbFile, { durability: config.durability });
    const deps = { db, config, keys: deriveServerKeys(app.masterKey), clock: systemClock, log: createLogger('silent') };
    const served: number[] = [];
    try {
      const summary = await resealCommand(deps, o.email, async () => o.password, {
        batchRows: 20,
        out: () => {},
        err: () => {},
        // Between batches the server writes (a create, an update of a value still v1) and reads.
        onBatch: async (p) => {
          const created = await call(server, 'POST', '/v1/todos', { token: o.pat, body: { title: `during batch ${p.batch}` } });
          const patched = await call(server, 'PATCH', `/v1/notes/${made.notes}`, { token: o.session, body: { title: `note edited in batch ${p.batch}` } });
          const list = await call(server, 'GET', '/v1/todos?limit=50', { token: o.pat });
          served.push(created.status, patched.status, list.status);
        },
      });
      expect(summary.batches).toBeGreaterThan(4);
      expect(summary.unopened).toBe(0);
      expect(summary.walTruncated).toBe(true);
      expect(summary.longestBatchMs).toBeGreaterThan(0);
      // No piece of a re-sealed v1 value in cairn.db, the WAL or free pages, while the server
      // runs and before the command's own connection closes (closing checkpoints too).
      const disk = dataDirBytes();
      const gone = pieces(v1[0]!);
      expect(gone.length).toBeGreaterThan(100);
      for (const p of gone) expect(disk.includes(p)).toBe(false);
      // ... while the other account's v1 values are still there (the scan sees them).
      expect(pieces(v1[1]!).some((p) => disk.includes(p))).toBe(true);
    } finally {
      closeDb(db);
    }
    expect(new Set(served)).toEqual(new Set([200, 201]));

    // Nothing of the account is v1 but the wraps of the credentials made before.
    const ro = readonlyDb();
    try {
      expect(columnsWithV1(ro, o.userId).sort()).toEqual(WRAPS);
      // The other account was not touched.
      expect(columnsWithV1(ro, owners[1]!.userId).length).toBeGreaterThan(15);
    } finally {
      ro.close();
    }
    // The server reads everything back with the credentials of before.
    expect((await call(server, 'GET', `/v1/todos/${made.todos}`, { token: o.pat })).body).toEqual(before.body);
    expect((await call(server, 'GET', `/v1/notes/${made.notes}`, { token: o.pat })).body.title).toMatch(/^note edited in batch \d+$/);
    const file = await fetch(`${server.url}/v1/attachments/${made.bigFile}/file`, { headers: { authorization: `Bearer ${o.pat}` } });
    expect(await file.text()).toBe(FILE);
    expect((await call(server, 'GET', `/v1/search?q=resealmark0`, { token: o.session })).body.data.length).toBeGreaterThan(0);
  });

  it('`npm run cli -- reseal --email …` as its own process', async () => {
    const server = proc!;
    const o = owners[1]!;
    // Not spawnSync: the test's event loop keeps running, so its idle keep-alive socket to the
    // server is closed cleanly rather than reused after the server dropped it.
    const run = (password: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(tsx, ['server/cli.ts', 'reseal', '--email', o.email], {
          cwd: root,
          env: { ...process.env, DATA_DIR: app.dataDir, CAIRN_MASTER_KEY: app.masterKey.toString('hex'), CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent', CAIRN_PASSWORD: password },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    const wrong = await run('not the password');
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/email or password is wrong/);

    const r = await run(o.password);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { resealed: number; leftV1Wraps: Record<string, number>; walTruncated: boolean };
    expect(summary.resealed).toBeGreaterThan(50);
    expect(Object.keys(summary.leftV1Wraps).sort()).toEqual(WRAPS);
    expect(summary.walTruncated).toBe(true);
    expect(r.stderr).toMatch(/re-sealed \d+ of \d+ values/);
    const ro = readonlyDb();
    try {
      expect(columnsWithV1(ro, o.userId).sort()).toEqual(WRAPS);
    } finally {
      ro.close();
    }
    const disk = dataDirBytes();
    for (const p of pieces(v1[1]!)) expect(disk.includes(p)).toBe(false);
    expect((await call(server, 'GET', `/v1/todos/${ids[1]!.todos}`, { token: o.pat })).body.title).toBe('todo ResealMark1');
  });
});
