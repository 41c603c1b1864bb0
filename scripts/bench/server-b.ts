// (B) The reference: bare Express 5 + better-sqlite3 doing the same plaintext work as each Cairn
// scenario (same paths, same JSON shapes, same rows) with no auth, no crypto, no tRPC, no
// logging. The account is named by the X-Bench-Account header. Started by run.ts as its own
// process with the accounts to seed in BENCH_ACCOUNTS; reports its port and sample ids over IPC.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import Database from 'better-sqlite3';
import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';
import { FILTER_CRITERIA, FILTER_NAME, TAG_NAMES, fixtureTodo } from './fixtures.js';
import type { AccountSpec, SeededAccount } from './protocol.js';

const accounts = JSON.parse(process.env.BENCH_ACCOUNTS ?? '[]') as AccountSpec[];
const today = process.env.BENCH_TODAY ?? new Date().toISOString().slice(0, 10);
const dir = mkdtempSync(path.join(tmpdir(), 'cairn-bench-b-'));
const db = new Database(path.join(dir, 'b.db'));
db.pragma('journal_mode = WAL');
// The same durability as C (issue 10.3): FULL unless the run says relaxed.
db.pragma(`synchronous = ${process.env.BENCH_DURABILITY === 'relaxed' ? 'NORMAL' : 'FULL'}`);
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

db.exec(`
CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL, webhooks_disabled_at INTEGER, created_at INTEGER NOT NULL);
CREATE TABLE todos (
  id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title TEXT NOT NULL, notes TEXT, status TEXT NOT NULL DEFAULT 'open', completed_at INTEGER,
  when_date TEXT, evening INTEGER NOT NULL DEFAULT 0, someday INTEGER NOT NULL DEFAULT 0, deadline TEXT,
  priority TEXT, sort_key TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, trashed_at INTEGER);
CREATE INDEX todos_user_order ON todos(user_id, sort_key, id);
CREATE INDEX todos_user_updated ON todos(user_id, updated_at);
CREATE TABLE tags (
  id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, name TEXT NOT NULL,
  name_lower TEXT NOT NULL, color_hex TEXT, sort_key TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE UNIQUE INDEX tags_user_name ON tags(user_id, name_lower);
CREATE INDEX tags_user_order ON tags(user_id, sort_key, id);
CREATE TABLE todo_tags (todo_id TEXT NOT NULL REFERENCES todos(id) ON DELETE CASCADE, tag_id TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE, PRIMARY KEY (todo_id, tag_id));
CREATE INDEX todo_tags_tag ON todo_tags(tag_id);
CREATE TABLE filters (id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, name TEXT NOT NULL, criteria TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
`);

const newId = () => randomUUID().toUpperCase();
const iso = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

type TodoRow = {
  id: string; user_id: string; title: string; notes: string | null; status: string; completed_at: number | null; when_date: string | null;
  evening: number; someday: number; deadline: string | null; priority: string | null; sort_key: string; created_at: number; updated_at: number; trashed_at: number | null;
};
type TagRow = { id: string; user_id: string; name: string; name_lower: string; color_hex: string | null; sort_key: string; created_at: number; updated_at: number };

// ---- seeding (one transaction per account; B's own start-up cost is not measured) ----

const insUser = db.prepare('INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)');
const insTodo = db.prepare(`INSERT INTO todos (id, user_id, title, notes, status, completed_at, when_date, someday, priority, sort_key, created_at, updated_at)
  VALUES (@id, @user_id, @title, @notes, @status, @completed_at, @when_date, @someday, @priority, @sort_key, @created_at, @updated_at)`);
const insTag = db.prepare('INSERT INTO tags (id, user_id, name, name_lower, color_hex, sort_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
const insTodoTag = db.prepare('INSERT INTO todo_tags (todo_id, tag_id) VALUES (?, ?)');
const insFilter = db.prepare('INSERT INTO filters (id, user_id, name, criteria, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');

const SAMPLE = 500;
const seeded: SeededAccount[] = [];
for (const a of accounts) {
  seeded.push(
    db.transaction(() => {
      const now = Date.now();
      insUser.run(a.name, `${a.name}@bench.invalid`, now);
      const tagIds = new Map<string, string>();
      const extraTags = Math.max(0, a.tags - TAG_NAMES.length);
      const names = [...TAG_NAMES, ...Array.from({ length: extraTags }, (_, k) => `label-${k}`)];
      const tagKeys = generateNKeysBetween(null, null, names.length);
      names.forEach((name, k) => {
        const id = newId();
        tagIds.set(name, id);
        insTag.run(id, a.name, name, name.toLowerCase(), null, tagKeys[k]!, now, now);
      });
      const keys = a.todos ? generateNKeysBetween(null, null, a.todos) : [];
      const todoIds: string[] = [];
      for (let i = 0; i < a.todos; i++) {
        const f = fixtureTodo(i, today);
        const id = newId();
        insTodo.run({
          id, user_id: a.name, title: f.title, notes: f.notes, status: f.status, completed_at: f.status === 'completed' ? now : null,
          when_date: f.whenDate, someday: f.someday ? 1 : 0, priority: f.priority, sort_key: keys[i]!, created_at: now, updated_at: now,
        });
        for (const t of f.tags) insTodoTag.run(id, tagIds.get(t)!);
        if (todoIds.length < SAMPLE) todoIds.push(id);
      }
      const filterId = newId();
      insFilter.run(filterId, a.name, FILTER_NAME, FILTER_CRITERIA, now, now);
      return { name: a.name, todoIds, tagIds: [...tagIds.values()].slice(0, SAMPLE), filterId };
    })(),
  );
}
db.pragma('wal_checkpoint(TRUNCATE)');
// Planner statistics, as Cairn gathers them at open and close (db/client.ts).
db.pragma('optimize');

// ---- queries ----

const q = {
  user: db.prepare<[string], { id: string; webhooks_disabled_at: number | null }>('SELECT id, webhooks_disabled_at FROM users WHERE id = ?'),
  todo: db.prepare<[string, string], TodoRow>('SELECT * FROM todos WHERE user_id = ? AND id = ?'),
  todoTags: db.prepare<[string], { todo_id: string; name: string }>(
    'SELECT tt.todo_id, t.name FROM todo_tags tt JOIN tags t ON t.id = tt.tag_id WHERE tt.todo_id = ? ORDER BY t.sort_key',
  ),
  listTodos: db.prepare<[string, number], TodoRow>('SELECT * FROM todos WHERE user_id = ? AND trashed_at IS NULL ORDER BY sort_key, id LIMIT ?'),
  lastTodoKey: db.prepare<[string], { k: string }>('SELECT sort_key AS k FROM todos WHERE user_id = ? ORDER BY sort_key DESC LIMIT 1'),
  updateTodo: db.prepare('UPDATE todos SET title = ?, notes = ?, updated_at = ? WHERE user_id = ? AND id = ?'),
  tag: db.prepare<[string, string], TagRow>('SELECT * FROM tags WHERE user_id = ? AND id = ?'),
  tagByName: db.prepare<[string, string], TagRow>('SELECT * FROM tags WHERE user_id = ? AND name_lower = ?'),
  listTags: db.prepare<[string, number], TagRow>('SELECT * FROM tags WHERE user_id = ? ORDER BY sort_key, id LIMIT ?'),
  lastTagKey: db.prepare<[string], { k: string }>('SELECT sort_key AS k FROM tags WHERE user_id = ? ORDER BY sort_key DESC LIMIT 1'),
  updateTag: db.prepare('UPDATE tags SET color_hex = ?, updated_at = ? WHERE user_id = ? AND id = ?'),
  filter: db.prepare<[string, string], { criteria: string }>('SELECT criteria FROM filters WHERE user_id = ? AND id = ?'),
  today: db.prepare<[string, string], TodoRow>(
    `SELECT * FROM todos WHERE user_id = ? AND status = 'open' AND trashed_at IS NULL AND someday = 0 AND when_date IS NOT NULL AND when_date <= ? ORDER BY sort_key, id`,
  ),
  anytime: db.prepare<[string, string], TodoRow>(
    `SELECT * FROM todos WHERE user_id = ? AND status = 'open' AND trashed_at IS NULL AND someday = 0 AND (when_date IS NULL OR when_date <= ?) ORDER BY sort_key, id`,
  ),
  upcoming: db.prepare<[string, string, string], TodoRow>(
    `SELECT * FROM todos WHERE user_id = ? AND status = 'open' AND trashed_at IS NULL AND (when_date > ? OR (when_date IS NULL AND deadline > ?)) ORDER BY coalesce(when_date, deadline), sort_key, id`,
  ),
  logbook: db.prepare<[string, number], TodoRow>(
    `SELECT * FROM todos WHERE user_id = ? AND status IN ('completed', 'canceled') AND trashed_at IS NULL ORDER BY completed_at DESC, id LIMIT ?`,
  ),
  counts: db.prepare<[string, string, string, string, string, string], { today: number; upcoming: number; anytime: number; someday: number; logbook: number }>(
    `SELECT
       sum(status = 'open' AND (when_date <= ? OR deadline <= ?)) AS today,
       sum(status = 'open' AND (when_date > ? OR (when_date IS NULL AND deadline > ?))) AS upcoming,
       sum(status = 'open' AND someday = 0 AND (when_date IS NULL OR when_date <= ?)) AS anytime,
       sum(status = 'open' AND someday = 1) AS someday,
       sum(status IN ('completed', 'canceled')) AS logbook
     FROM todos WHERE user_id = ? AND trashed_at IS NULL`,
  ),
  search: db.prepare<[string, string, string, number], TodoRow>(
    `SELECT * FROM todos WHERE user_id = ? AND trashed_at IS NULL AND (title LIKE ? ESCAPE '\\' OR notes LIKE ? ESCAPE '\\') ORDER BY sort_key, id LIMIT ?`,
  ),
};

/** Tags of many to-dos in one query (what any list route must do). */
function tagsOf(ids: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!ids.length) return out;
  const rows = db
    .prepare(`SELECT tt.todo_id, t.name FROM todo_tags tt JOIN tags t ON t.id = tt.tag_id WHERE tt.todo_id IN (${ids.map(() => '?').join(',')}) ORDER BY t.sort_key`)
    .all(...ids) as { todo_id: string; name: string }[];
  for (const r of rows) {
    const list = out.get(r.todo_id);
    if (list) list.push(r.name);
    else out.set(r.todo_id, [r.name]);
  }
  return out;
}

function toTodo(r: TodoRow, tags: string[]) {
  return {
    id: r.id, title: r.title, notes: r.notes, status: r.status, completedAt: iso(r.completed_at), whenDate: r.when_date, evening: !!r.evening,
    someday: !!r.someday, deadline: r.deadline, priority: r.priority, tags, checklist: [], recurrence: null, parentId: null, headingId: null,
    sortKey: r.sort_key, trashedAt: iso(r.trashed_at), createdAt: iso(r.created_at)!, updatedAt: iso(r.updated_at)!,
  };
}

function todosJson(rows: TodoRow[]) {
  const tags = tagsOf(rows.map((r) => r.id));
  return rows.map((r) => toTodo(r, tags.get(r.id) ?? []));
}

function toTag(r: TagRow) {
  return { id: r.id, name: r.name, colorHex: r.color_hex, sortKey: r.sort_key, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) };
}

function readTodo(user: string, id: string) {
  const row = q.todo.get(user, id);
  return row ? toTodo(row, q.todoTags.all(row.id).map((t) => t.name)) : null;
}

/** Filter criteria (DECISIONS §6 tag expressions: #name, and/or/not, parentheses) → SQL. */
function criteriaToSql(criteria: string): { sql: string; params: string[] } {
  const tokens = criteria.match(/#"[^"]*"|#[^\s()&|!]+|\(|\)|&|\||!|\band\b|\bor\b|\bnot\b/gi) ?? [];
  let i = 0;
  const params: string[] = [];
  const peek = () => tokens[i]?.toLowerCase();
  const expr = (): string => {
    let left = term();
    while (peek() === 'or' || peek() === '|') {
      i++;
      left = `(${left} OR ${term()})`;
    }
    return left;
  };
  const term = (): string => {
    let left = factor();
    while (peek() === 'and' || peek() === '&') {
      i++;
      left = `(${left} AND ${factor()})`;
    }
    return left;
  };
  const factor = (): string => {
    const t = tokens[i++];
    if (t === undefined) throw new Error('criteria: unexpected end');
    const lt = t.toLowerCase();
    if (lt === 'not' || lt === '!') return `NOT ${factor()}`;
    if (t === '(') {
      const e = expr();
      i++; // ')'
      return `(${e})`;
    }
    const name = t.startsWith('#"') ? t.slice(2, -1) : t.slice(1);
    params.push(name.toLowerCase());
    return 'EXISTS (SELECT 1 FROM todo_tags tt JOIN tags g ON g.id = tt.tag_id WHERE tt.todo_id = todos.id AND g.name_lower = ?)';
  };
  return { sql: expr(), params };
}

// ---- the app ----

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: '1mb' }));

const account = (req: Request) => String(req.headers['x-bench-account'] ?? '');
const limitOf = (req: Request) => Math.min(200, Math.max(1, Number(req.query.limit ?? 50) || 50));
const cursorOf = (rows: { sort_key: string; id: string }[], limit: number) =>
  rows.length === limit ? Buffer.from(JSON.stringify({ k: rows.at(-1)!.sort_key, i: rows.at(-1)!.id })).toString('base64url') : null;
const notFound = (res: Response) => res.status(404).json({ type: 'about:blank', title: 'Not found', status: 404 });
const trpc = (res: Response, data: unknown) => res.json({ result: { data: { json: data } } });

function me(req: Request) {
  const u = q.user.get(account(req));
  return u
    ? { sub: u.id, credential: { id: 'bench', kind: 'personal_token', expiresAt: iso(Date.now() + 86_400_000) }, scopes: ['tasks:write'], webhooks: { disabled: u.webhooks_disabled_at != null, disabledAt: iso(u.webhooks_disabled_at) } }
    : null;
}

app.get('/v1/me', (req, res) => {
  const body = me(req);
  return body ? res.json(body) : notFound(res);
});
app.get('/trpc/me.get', (req, res) => {
  const body = me(req);
  return body ? trpc(res, body) : notFound(res);
});

function listTodos(user: string, limit: number) {
  const rows = q.listTodos.all(user, limit);
  return { data: todosJson(rows), next_cursor: cursorOf(rows, limit) };
}
app.get('/v1/todos', (req, res) => {
  res.json(listTodos(account(req), limitOf(req)));
});
// The /trpc twins of the CRUD scenarios (issue 12): the same work, tRPC's envelope.
app.get('/trpc/todos.list', (req, res) => {
  const input = JSON.parse(String(req.query.input ?? '{}')) as { json?: { limit?: number } };
  trpc(res, listTodos(account(req), Math.min(200, Math.max(1, Number(input.json?.limit ?? 50) || 50))));
});
app.get('/v1/todos/:id', (req, res) => {
  const t = readTodo(account(req), req.params.id);
  return t ? res.json(t) : notFound(res);
});
app.get('/trpc/todos.get', (req, res) => {
  const input = JSON.parse(String(req.query.input ?? '{}')) as { json?: { id?: string } };
  const t = readTodo(account(req), String(input.json?.id ?? ''));
  return t ? trpc(res, t) : notFound(res);
});
function createTodo(user: string, body: { title?: unknown; notes?: unknown } | undefined): TodoRow | null {
  const title = body?.title;
  if (typeof title !== 'string' || title.length < 1 || title.length > 4096) return null;
  return db.transaction(() => {
    const now = Date.now();
    const r: TodoRow = {
      id: newId(), user_id: user, title, notes: typeof body?.notes === 'string' ? body.notes : null, status: 'open', completed_at: null, when_date: null,
      evening: 0, someday: 0, deadline: null, priority: null, sort_key: generateKeyBetween(q.lastTodoKey.get(user)?.k ?? null, null), created_at: now, updated_at: now, trashed_at: null,
    };
    insTodo.run(r);
    return r;
  })();
}
app.post('/v1/todos', (req, res) => {
  const row = createTodo(account(req), req.body);
  if (!row) return res.status(422).json({ status: 422 });
  res.status(201).json(toTodo(row, []));
});
app.post('/trpc/todos.create', (req, res) => {
  const row = createTodo(account(req), req.body?.json);
  if (!row) return res.status(422).json({ status: 422 });
  trpc(res, toTodo(row, []));
});
function updateTodo(user: string, id: string, body: { title?: unknown; notes?: unknown } | undefined) {
  const out = db.transaction(() => {
    const row = q.todo.get(user, id);
    if (!row) return null;
    const title = typeof body?.title === 'string' ? body.title : row.title;
    const notes = typeof body?.notes === 'string' ? body.notes : row.notes;
    const now = Date.now();
    q.updateTodo.run(title, notes, now, user, row.id);
    return { ...row, title, notes, updated_at: now };
  })();
  return out ? toTodo(out, q.todoTags.all(out.id).map((t) => t.name)) : null;
}
app.patch('/v1/todos/:id', (req, res) => {
  const out = updateTodo(account(req), req.params.id!, req.body);
  return out ? res.json(out) : notFound(res);
});
app.post('/trpc/todos.update', (req, res) => {
  const input = req.body?.json as { id?: string; title?: unknown } | undefined;
  const out = updateTodo(account(req), String(input?.id ?? ''), input);
  return out ? trpc(res, out) : notFound(res);
});

app.get('/v1/tags', (req, res) => {
  const limit = limitOf(req);
  const rows = q.listTags.all(account(req), limit);
  res.json({ data: rows.map(toTag), next_cursor: cursorOf(rows, limit) });
});
app.get('/v1/tags/:id', (req, res) => {
  const row = q.tag.get(account(req), req.params.id);
  return row ? res.json(toTag(row)) : notFound(res);
});
app.get('/trpc/tags.get', (req, res) => {
  const input = JSON.parse(String(req.query.input ?? '{}')) as { json?: { id?: string } };
  const row = q.tag.get(account(req), String(input.json?.id ?? ''));
  return row ? trpc(res, toTag(row)) : notFound(res);
});
app.post('/v1/tags', (req, res) => {
  const user = account(req);
  const name = req.body?.name;
  if (typeof name !== 'string' || name.length < 1 || name.length > 64) return res.status(422).json({ status: 422 });
  const out = db.transaction(() => {
    const existing = q.tagByName.get(user, name.toLowerCase());
    if (existing) return { created: false, row: existing };
    const now = Date.now();
    const row: TagRow = { id: newId(), user_id: user, name, name_lower: name.toLowerCase(), color_hex: req.body.colorHex ?? null, sort_key: generateKeyBetween(q.lastTagKey.get(user)?.k ?? null, null), created_at: now, updated_at: now };
    insTag.run(row.id, row.user_id, row.name, row.name_lower, row.color_hex, row.sort_key, now, now);
    return { created: true, row };
  })();
  res.status(out.created ? 201 : 200).json(toTag(out.row));
});
app.patch('/v1/tags/:id', (req, res) => {
  const user = account(req);
  const row = q.tag.get(user, req.params.id);
  if (!row) return notFound(res);
  const now = Date.now();
  q.updateTag.run(req.body?.colorHex ?? null, now, user, row.id);
  res.json(toTag({ ...row, color_hex: req.body?.colorHex ?? null, updated_at: now }));
});

const dayOf = (req: Request) => (typeof req.query.today === 'string' ? req.query.today : today);
app.get('/v1/views/today', (req, res) => {
  const rows = q.today.all(account(req), dayOf(req));
  const todos = todosJson(rows);
  res.json({ date: dayOf(req), todos: todos.filter((t) => !t.evening), evening: todos.filter((t) => t.evening) });
});
app.get('/v1/views/anytime', (req, res) => {
  const rows = q.anytime.all(account(req), dayOf(req));
  res.json({ groups: [{ container: null, todos: todosJson(rows) }] });
});
/** Rows grouped by a day, in the order given. */
function byDay(rows: TodoRow[], dayOfRow: (r: TodoRow) => string) {
  const days: { date: string; todos: ReturnType<typeof todosJson> }[] = [];
  const json = todosJson(rows);
  rows.forEach((r, i) => {
    const date = dayOfRow(r);
    if (days.at(-1)?.date !== date) days.push({ date, todos: [] });
    days.at(-1)!.todos.push(json[i]!);
  });
  return days;
}
app.get('/v1/views/upcoming', (req, res) => {
  const day = dayOf(req);
  res.json({ days: byDay(q.upcoming.all(account(req), day, day), (r) => (r.when_date ?? r.deadline)!) });
});
app.get('/v1/views/logbook', (req, res) => {
  const rows = q.logbook.all(account(req), limitOf(req));
  res.json({ days: byDay(rows, (r) => new Date(r.completed_at ?? 0).toISOString().slice(0, 10)), next_cursor: null });
});
app.get('/v1/views/overview', (req, res) => {
  const day = dayOf(req);
  res.json({ date: day, counts: q.counts.get(day, day, day, day, day, account(req)), containers: [] });
});
app.get('/v1/search', (req, res) => {
  const term = String(req.query.q ?? '').replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = q.search.all(account(req), `%${term}%`, `%${term}%`, limitOf(req));
  res.json({ data: rows.map((r) => ({ type: 'todo', id: r.id, title: r.title, snippet: r.title })), next_cursor: null });
});
app.get('/v1/filters/:id/todos', (req, res) => {
  const user = account(req);
  const f = q.filter.get(user, req.params.id);
  if (!f) return notFound(res);
  const { sql, params } = criteriaToSql(f.criteria);
  const rows = db
    .prepare(`SELECT * FROM todos WHERE user_id = ? AND status = 'open' AND trashed_at IS NULL AND ${sql} ORDER BY sort_key, id LIMIT ?`)
    .all(user, ...params, limitOf(req)) as TodoRow[];
  res.json({ data: todosJson(rows), next_cursor: cursorOf(rows, limitOf(req)) });
});

app.use((_req: Request, res: Response) => notFound(res));

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port, accounts: seeded });
});
server.keepAliveTimeout = 5_000;

function shutdown(): never {
  try {
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
process.on('disconnect', shutdown);
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
