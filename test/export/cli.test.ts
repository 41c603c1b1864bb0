// Issue 33 items 2 and 3: `cairn export` and `cairn import` (server/cli-export.ts,
// server/cli-import.ts) against a real DATA_DIR: the export to a file (0600, valid JSON, the same
// document GET /v1/export answers), the import with its progress (a redrawn bar on a terminal,
// plain lines otherwise) and its report, and no session left behind.
import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { exportCommand } from '../../server/cli-export.js';
import { importCommand } from '../../server/cli-import.js';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'cairn-cli-export-'));
});
afterAll(async () => {
  await app.close();
});

const sessions = (userId: string) => (app.deps.db.$client.prepare("SELECT count(*) FROM credentials WHERE user_id = ? AND kind = 'session'").pluck().get(userId) as number);

it('exports to a file and to stdout, and imports with progress and a report', async () => {
  const a = await registerUser(app);
  await call(app, 'POST', '/v1/todos', { token: a.session, body: { title: 'From the CLI', tags: ['cli'] } });
  const before = sessions(a.userId);
  const file = path.join(dir, 'out.json');
  const lines: string[] = [];
  await exportCommand(app.deps, a.email, async () => a.password, { out: file, err: (l) => lines.push(l) });
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(existsSync(`${file}.partial`)).toBe(false);
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { format: string; todos: { title: string }[] };
  expect(doc.format).toBe('cairn-export');
  expect(doc.todos.map((t) => t.title)).toEqual(['From the CLI']);
  expect(lines).toEqual([`exported to ${file}`]);

  let text = '';
  const stdout = new Writable({ write: (c, _e, cb) => ((text += String(c)), cb()) });
  await exportCommand(app.deps, a.email, async () => a.password, { stdout });
  expect((JSON.parse(text) as { todos: unknown[] }).todos).toHaveLength(1);
  expect(sessions(a.userId)).toBe(before);

  const b = await registerUser(app);
  const plain: string[] = [];
  const out: string[] = [];
  const report = await importCommand(app.deps, b.email, async () => b.password, { source: 'cairn', file, out: (l) => out.push(l), progress: { write: (t) => plain.push(t), isTTY: false } });
  expect(report.created.todos).toBe(1);
  expect(JSON.parse(out[0]!).created.todos).toBe(1);
  expect(plain.every((l) => /^importing: \d+ of \d+ items\n$/.test(l))).toBe(true);
  expect(plain.at(-1)).toBe('importing: 2 of 2 items\n');

  const csv = path.join(dir, 'Chores.csv');
  writeFileSync(csv, 'TYPE,CONTENT,PRIORITY,INDENT\ntask,Sweep,1,1\n');
  const bar: string[] = [];
  const dry = await importCommand(app.deps, b.email, async () => b.password, { source: 'todoist', file: csv, dryRun: true, out: () => {}, progress: { write: (t) => bar.push(t), isTTY: true } });
  expect(dry.created).toMatchObject({ containers: 1, todos: 1 });
  expect(bar.join('')).toContain('\rchecking [##############################] 2/2');
  expect(bar.at(-1)).toBe('\n');
  expect(sessions(b.userId)).toBe(1); // the register session only
});
