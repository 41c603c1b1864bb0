// Issue 10.1 (spec §4.2): an idempotent answer is stored in the transaction of its change. The
// real server runs as a process with the test-only fault hook CAIRN_UNSAFE_CRASH_AFTER_COMMIT,
// which kills it (SIGKILL) right after the named procedure's transaction commits and before any
// answer leaves. The client never sees an answer; after a restart its retry replays, and the
// change and its events exist exactly once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call, createPat, registerUser } from '../helpers/http.js';

let dataDir: string;
let server: ServerProcess | undefined;
beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-crash-'));
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function boot(crashAfter?: string): Promise<ServerProcess> {
  await server?.stop();
  server = await startServerProcess(dataDir, crashAfter ? { CAIRN_UNSAFE_CRASH_AFTER_COMMIT: crashAfter } : {});
  return server;
}

/** Sends the request the hook kills the server under: the client gets no answer at all. */
async function sendAndCrash(s: ServerProcess, method: string, urlPath: string, token: string, body: unknown, key: string) {
  const sent = fetch(s.url + urlPath, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  await expect(sent).rejects.toThrow();
  const { code, signal } = await s.exited;
  // tsx runs the server in a child node and reports a SIGKILL'd child as 128 + 9.
  expect(signal === 'SIGKILL' || code === 137, `exit ${code} ${signal}: ${s.output()}`).toBe(true);
}

function count(sql: string, ...args: unknown[]): number {
  const db = new Database(path.join(dataDir, 'cairn.db'), { readonly: true });
  try {
    return (db.prepare(sql).get(...args) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('a crash after commit and before the answer (spec §4.2)', () => {
  let token: string;
  let userId: string;

  it('POST /v1/todos: the retry after restart replays; one to-do, one todo.created', async () => {
    const s = await boot('todos.create');
    const u = await registerUser(s);
    userId = u.userId;
    token = (await createPat(s, u.session, ['tasks:write'])).token;
    await sendAndCrash(s, 'POST', '/v1/todos', token, { title: 'exactly once' }, 'crash-create-1');

    const again = await boot();
    const retry = await call(again, 'POST', '/v1/todos', { token, body: { title: 'exactly once' }, headers: { 'Idempotency-Key': 'crash-create-1' } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.title).toBe('exactly once');
    await again.stop();
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(1);
    expect(count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'todo.created'", userId)).toBe(1);
  });

  it('POST /v1/todos/{id}/complete of a daily recurring to-do: rolled once, one logged copy', async () => {
    const s = await boot('todos.complete');
    const created = await call(s, 'POST', '/v1/todos', {
      token,
      body: { title: 'water plants', whenDate: '2026-11-22', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } },
    });
    expect(created.status).toBe(201);
    const todos = count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId);
    await sendAndCrash(s, 'POST', `/v1/todos/${created.body.id}/complete?today=2026-11-22`, token, {}, 'crash-complete-1');

    const again = await boot();
    const retry = await call(again, 'POST', `/v1/todos/${created.body.id}/complete?today=2026-11-22`, { token, body: {}, headers: { 'Idempotency-Key': 'crash-complete-1' } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const now = await call(again, 'GET', `/v1/todos/${created.body.id}`, { token });
    expect(now.body.status).toBe('open');
    expect(now.body.whenDate).toBe('2026-11-23'); // rolled one day, not two
    await again.stop();
    expect(count('SELECT count(*) AS n FROM todos WHERE user_id = ?', userId)).toBe(todos + 1); // one logged copy
  });

  it('POST /v1/headings/{id}/convert: the retry replays; one subproject, the heading gone once', async () => {
    const s = await boot('headings.convert');
    const project = await call(s, 'POST', '/v1/containers', { token, body: { kind: 'project', name: 'Crash project' } });
    const heading = await call(s, 'POST', '/v1/headings', { token, body: { projectId: project.body.id, name: 'To convert' } });
    const t = await call(s, 'POST', '/v1/todos', { token, body: { title: 'under heading', parentId: project.body.id, headingId: heading.body.id } });
    expect(t.status).toBe(201);
    await sendAndCrash(s, 'POST', `/v1/headings/${heading.body.id}/convert`, token, {}, 'crash-convert-1');

    const again = await boot();
    const retry = await call(again, 'POST', `/v1/headings/${heading.body.id}/convert`, { token, body: {}, headers: { 'Idempotency-Key': 'crash-convert-1' } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.todos.map((x: { id: string }) => x.id)).toEqual([t.body.id]);
    await again.stop();
    expect(count("SELECT count(*) AS n FROM containers WHERE user_id = ? AND kind = 'subproject'", userId)).toBe(1);
    expect(count("SELECT count(*) AS n FROM outbox WHERE user_id = ? AND type = 'heading.deleted'", userId)).toBe(1);
    expect(count('SELECT count(*) AS n FROM headings WHERE user_id = ?', userId)).toBe(0);
  });
});
