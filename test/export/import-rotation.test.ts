// Imports stay idempotent across a data-key rotation (docs/import.md "Once"): the import links'
// blind indexes are written again under the new key inside the rotation's transaction
// (routers/imports/links.ts rekeyImportLinks), their source ids kept sealed beside them. A
// rotation that fails part-way (here: the last statement of its transaction is made to fail, as a
// crash before the commit would leave it) keeps every link as it was, and the old key with it.
// The old index values do not stay on disk. Links made before migration 0019 (no sealed source
// id) are upgraded by a real re-run, and dropped by a rotation if still old.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { openJson, rowAad } from '../../core/crypto/seal.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app.close();
});

type Counts = Record<string, number>;
type Report = { created: Counts; existing: Counts; failed: unknown[]; unmapped: string[] };

const CSV = [
  'TYPE,CONTENT,DESCRIPTION,PRIORITY,INDENT,AUTHOR,RESPONSIBLE,DATE,DATE_LANG,TIMEZONE,DURATION,DURATION_UNIT',
  'task,Buy milk @errand @home,Semi-skimmed,1,1,Ann (1),,2026-12-01,en,Europe/Paris,,',
  'task,Whole or skimmed?,,4,2,Ann (1),,,en,Europe/Paris,,',
  'section,Weekly,,,,,,,,,,',
  'task,Water plants,,2,1,Ann (1),,every monday,en,Europe/Paris,,',
  'task,Review budget,,3,1,Ann (1),,every! 2 weeks,en,Europe/Paris,,',
  'task,Water plants,,4,1,Ann (1),,,en,Europe/Paris,,',
].join('\r\n');
/** What CSV makes: a project, a heading, four to-dos, two tags. */
const MADE = { containers: 1, headings: 1, todos: 4, tags: 2 };

async function runImport(token: string, dryRun: boolean): Promise<Report> {
  const res = await call(app, 'POST', `/v1/imports?source=todoist&name=Groceries${dryRun ? '&dryRun=true' : ''}`, { token, rawBody: CSV });
  expect(res.status, res.text).toBe(202);
  for (;;) {
    const r = await call(app, 'GET', `/v1/imports/${res.body.id}`, { token });
    expect(r.status, r.text).toBe(200);
    if (r.body.status !== 'running') {
      expect(r.body.status, r.text).toBe('succeeded');
      expect(r.body.counts.created).toEqual(r.body.report.created);
      return r.body.report as Report;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const sum = (c: Counts) => Object.values(c).reduce((a, b) => a + b, 0);
const sqlite = () => app.deps.db.$client;
const links = (userId: string) => sqlite().prepare('SELECT id, source_index AS idx, sealed FROM import_links WHERE user_id = ? ORDER BY target_id').all(userId) as { id: string | null; idx: Buffer; sealed: Buffer | null }[];
const todoCount = (userId: string) => sqlite().prepare('SELECT count(*) FROM todos WHERE user_id = ?').pluck().get(userId) as number;

async function rotate(u: { session: string; password: string }): Promise<string> {
  const r = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
  expect(r.status, r.text).toBe(200);
  return r.body.token as string;
}

describe('import links across a key rotation', () => {
  it('after a rotation the dry run says "already imported" and a re-run makes nothing; the old index values are gone from disk', async () => {
    const u = await registerUser(app);
    const first = await runImport(u.session, false);
    expect(first.created).toMatchObject(MADE);
    expect(todoCount(u.userId)).toBe(4);
    const before = links(u.userId);
    expect(before).toHaveLength(sum(first.created));
    // Each link holds its source id sealed (never in the clear), with an id of its own.
    for (const l of before) {
      expect(l.id).toBeTruthy();
      expect(l.sealed![0]).toBe(2);
      expect(l.sealed!.includes(Buffer.from('Water plants'))).toBe(false);
    }

    const token = await rotate(u);
    const after = links(u.userId);
    expect(after.map((l) => l.id)).toEqual(before.map((l) => l.id));
    // Every index and every sealed value was written again; none is left as it was.
    const old = new Set(before.map((l) => l.idx.toString('hex')));
    expect(after.filter((l) => old.has(l.idx.toString('hex')))).toEqual([]);
    expect(after.filter((l, i) => l.sealed!.equals(before[i]!.sealed!))).toEqual([]);

    const dry = await runImport(token, true);
    expect(dry.existing).toMatchObject(MADE);
    expect(sum(dry.created)).toBe(0);
    const again = await runImport(token, false);
    expect(sum(again.created)).toBe(0);
    expect(again.existing).toMatchObject(MADE);
    expect(todoCount(u.userId)).toBe(4);
    expect(links(u.userId)).toHaveLength(before.length);

    // A second rotation: still found.
    const token2 = await rotate({ session: token, password: u.password });
    expect(sum((await runImport(token2, true)).created)).toBe(0);

    // The old index values are in neither the database file nor its WAL (secure_delete, and the
    // rotation's checkpoint).
    const files = readdirSync(app.dataDir).filter((f) => f.startsWith('cairn.db')).map((f) => readFileSync(path.join(app.dataDir, f)));
    for (const l of before) for (const f of files) expect(f.includes(l.idx), 'an old index value is still on disk').toBe(false);
  });

  it('a rotation that fails before its commit leaves every link under the old key, which still opens the account', async () => {
    const u = await registerUser(app);
    expect((await runImport(u.session, false)).created).toMatchObject(MADE);
    const before = links(u.userId);
    // The rotation's last write (the password wrap of the new key) fails: everything before it in
    // the same transaction (re-sealed rows, re-keyed links) is rolled back, as after a crash.
    sqlite().exec(`CREATE TEMP TRIGGER rotation_fails BEFORE UPDATE OF pw_wrapped_key ON users WHEN old.id = '${u.userId}' BEGIN SELECT RAISE(ABORT, 'simulated crash'); END`);
    try {
      const r = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
      expect(r.status, r.text).toBe(500);
    } finally {
      sqlite().exec('DROP TRIGGER rotation_fails');
    }
    expect(links(u.userId)).toEqual(before);
    // The old session (and key) still stand; the duplicate check works.
    const dry = await runImport(u.session, true);
    expect(dry.existing).toMatchObject(MADE);
    expect(sum(dry.created)).toBe(0);
    // The rotation run again succeeds, and the check still works under the new key.
    const token = await rotate(u);
    expect(sum((await runImport(token, false)).created)).toBe(0);
    expect(todoCount(u.userId)).toBe(4);
  });

  it('links made before migration 0019 are upgraded by a re-run; a rotation drops those still old', async () => {
    const u = await registerUser(app);
    expect((await runImport(u.session, false)).created).toMatchObject(MADE);
    const n = links(u.userId).length;
    // As the code before 0019 left them: the index alone.
    sqlite().prepare('UPDATE import_links SET id = NULL, sealed = NULL WHERE user_id = ?').run(u.userId);
    // A dry run finds them and writes nothing.
    expect(sum((await runImport(u.session, true)).created)).toBe(0);
    expect(links(u.userId).every((l) => l.sealed === null)).toBe(true);
    // A real re-run finds them, makes nothing, and gives each its sealed source id.
    expect(sum((await runImport(u.session, false)).created)).toBe(0);
    const upgraded = links(u.userId);
    expect(upgraded.every((l) => l.id !== null && l.sealed !== null)).toBe(true);
    const token = await rotate(u);
    expect(links(u.userId)).toHaveLength(n);
    expect(sum((await runImport(token, true)).created)).toBe(0);

    // Still old at the rotation: dropped (their index cannot be made under the new key), and
    // documented: a re-run would then make those items again.
    sqlite().prepare('UPDATE import_links SET id = NULL, sealed = NULL WHERE user_id = ?').run(u.userId);
    const token2 = await rotate({ session: token, password: u.password });
    expect(links(u.userId)).toEqual([]);
    expect((await runImport(token2, true)).created).toMatchObject(MADE);
  });

  it("a link's sealed source id opens only in its own row", async () => {
    const u = await registerUser(app);
    await runImport(u.session, false);
    const [a, b] = links(u.userId);
    sqlite().prepare('UPDATE import_links SET sealed = ? WHERE id = ?').run(a!.sealed, b!.id);
    // A rotation opens every link: the moved one fails, and the rotation with it (nothing changes).
    const r = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    expect(r.status).toBe(500);
    expect((await call(app, 'GET', '/v1/me', { token: u.session })).status).toBe(200);
    expect(() => openJson(Buffer.alloc(32), rowAad(u.userId, 'import_links', b!.id!), a!.sealed!)).toThrow();
  });
});
