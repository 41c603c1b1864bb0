// Search (DECISIONS §6, issue 14): to-dos (title, notes, checklist), notes (title, body),
// containers (name, subtitle, notes) and headings (name). Matching is on folded text (NFKD, marks
// stripped, lower-cased: routers/todo-index/fold.ts); every term of `q` must occur; hits whose title holds
// every term rank first. To-dos, the bulk of an account, are matched on the search-text layer of
// the sealed index (routers/todo-index/index.ts), and only the page's to-do rows are opened;
// containers, headings and notes are opened in the request (account_too_large bounds it).
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { containers, headings, inboxItems, notes, todos } from '../../db/schema/index.js';
import { inJsonIds, prepared } from '../../db/prepared.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { openJson, rowAad } from '../../core/crypto/seal.js';
import { AppError, invalid } from '../../core/errors.js';
import type { Scope } from '../../core/scopes.js';
import { assertAccountSize } from '../account-size.js';
import type Database from 'better-sqlite3';
import { scanAccountTexts, scanTexts, todoTotals } from '../todo-index/index.js';
import { fold, foldWithMap, terms as termsOf } from '../todo-index/fold.js';
import { deadContainerIds } from '../containers/live.js';
import { openContainer } from '../containers/model.js';
import { openNote } from '../notes/model.js';
import { openInbox } from '../inbox/model.js';
import { openTodo, type TodoRow } from '../todos/model.js';
import { SEARCH_TYPES, type SearchType } from './schema.js';

const stampsCache = new WeakMap<Database.Database, Database.Statement>();
function todoStampsQuery(db: Database.Database): Database.Statement {
  let st = stampsCache.get(db);
  if (!st) {
    st = db.prepare('SELECT id, updated_at, parent_id, trashed_at FROM todos WHERE user_id = ? ORDER BY id').raw(true);
    stampsCache.set(db, st);
  }
  return st;
}

const placementCache = new WeakMap<Database.Database, Database.Statement>();
/** The placement (container, trash time) of the given to-dos: the hits found in the text chunks. */
function placementOf(db: Database.Database): Database.Statement {
  let st = placementCache.get(db);
  if (!st) {
    st = db.prepare('SELECT id, parent_id, trashed_at FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))').raw(true);
    placementCache.set(db, st);
  }
  return st;
}

type Hit = { type: SearchType; id: string; rank: 0 | 1 };
type Out = { type: SearchType; id: string; title: string; snippet: string };

const SNIPPET = 160;
const TYPE_ORDER: SearchType[] = ['todo', 'heading', 'container', 'note', 'inbox'];

/** The read scope each kind of hit needs (spec §5.3): a credential searches only what it may read. */
const SCOPE_OF: Record<SearchType, Scope> = { todo: 'todos:read', note: 'notes:read', container: 'containers:read', heading: 'containers:read', inbox: 'inbox:read' };

/**
 * The kinds this request searches: those asked for (each needs its read scope, else 403), or by
 * default every kind the credential may read (403 when it may read none).
 */
function searchableTypes(p: Principal, types: string | undefined): Set<SearchType> {
  if (types) {
    const asked = new Set(types.split(',').map((t) => t.trim() as SearchType));
    const missing = [...new Set([...asked].map((t) => SCOPE_OF[t]).filter((s) => !p.scopes.has(s)))];
    if (missing.length) throw new AppError('forbidden_scope', `The credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`);
    return asked;
  }
  const allowed = SEARCH_TYPES.filter((t) => p.scopes.has(SCOPE_OF[t]));
  if (!allowed.length) throw new AppError('forbidden_scope', 'Search needs at least one of todos:read, notes:read, containers:read or inbox:read.');
  return new Set(allowed);
}

/** 0 when every term is in the title, 1 when every term is in title + body, null otherwise. */
function rankOf(terms: string[], title: string, body: string): 0 | 1 | null {
  if (terms.every((t) => title.includes(t))) return 0;
  // A term holds no whitespace, so it is in `title\nbody` exactly when it is in one of them.
  return terms.every((t) => title.includes(t) || body.includes(t)) ? 1 : null;
}

/** Up to SNIPPET characters of `body` around the first term found in it, else its start. */
export function snippetOf(body: string, terms: string[]): string {
  const flat = body.replace(/\s+/gu, ' ').trim();
  if (!flat) return '';
  const { text, from } = foldWithMap(flat);
  let at = -1;
  for (const t of terms) {
    const i = text.indexOf(t);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const origin = at < 0 ? 0 : from[at]!;
  let start = Math.max(0, origin - 40);
  // Do not cut a surrogate pair.
  if (start > 0 && /[\uDC00-\uDFFF]/.test(flat[start]!)) start--;
  const out = flat.slice(start, start + SNIPPET);
  return `${start > 0 ? '…' : ''}${out}${start + SNIPPET < flat.length ? '…' : ''}`;
}

export function search(deps: Deps, p: Principal, input: { q: string; types?: string | undefined; limit?: number | undefined; cursor?: string | undefined; include_trashed?: boolean | undefined }) {
  // The to-do totals serve both the size check and the text chunks' freshness check (one scan).
  const totals = todoTotals(deps.db.$client, p.userId);
  assertAccountSize(deps, p.userId, totals[0]);
  const terms = termsOf(input.q);
  const wanted = searchableTypes(p, input.types);
  const withTrashed = input.include_trashed ?? false;
  const sqlite = deps.db.$client;
  const deadIds = withTrashed ? new Set<string>() : new Set(deps.db.all<{ id: string }>(deadContainerIds(p.userId)).map((r) => r.id));
  const liveParent = (parentId: string | null) => parentId === null || !deadIds.has(parentId);
  const hits: Hit[] = [];

  if (wanted.has('todo')) {
    // First from the text chunks alone, checked fresh by the account's totals (no row read);
    // then only the hits' placement is read, to leave out trashed ones and those in a trashed or
    // archived container. When the chunks are not fresh, the rows are read after all.
    const found: { id: string; rank: 0 | 1 }[] = [];
    // The chunks match at most 31 terms in place; a longer query (up to 256 characters) takes
    // the row path below.
    const fresh = terms.length <= 31 && scanAccountTexts(sqlite, p, terms, (id, rank) => found.push({ id, rank }), totals);
    if (fresh) {
      if (withTrashed) for (const f of found) hits.push({ type: 'todo', id: f.id, rank: f.rank });
      else {
        const live = new Set<string>();
        for (const r of placementOf(sqlite).iterate(p.userId, JSON.stringify(found.map((f) => f.id))) as IterableIterator<[string, string | null, number | null]>) {
          if (r[2] === null && liveParent(r[1])) live.add(r[0]);
        }
        for (const f of found) if (live.has(f.id)) hits.push({ type: 'todo', id: f.id, rank: f.rank });
      }
    } else {
      // The rows' ids and stamps in id order (the covering index todos_user_placement; the index
      // chunks' order), streamed: only the kept ids and stamps outlive the scan, not one array per
      // row (at 50,000 to-dos, ~14 MB less live during the request; docs/performance.md, issue 12).
      const ids: string[] = [];
      const stampList: number[] = [];
      let total = 0;
      for (const r of todoStampsQuery(sqlite).iterate(p.userId) as IterableIterator<[string, number, string | null, number | null]>) {
        total++;
        if (withTrashed || (r[3] === null && liveParent(r[2]))) {
          ids.push(r[0]);
          stampList.push(r[1]);
        }
      }
      const stamps = Float64Array.from(stampList);
      // Bucket by bucket: one bucket's search text is held at a time (the hits are sorted below).
      scanTexts(sqlite, p, ids, stamps, { sorted: true, wholeAccount: ids.length === total }, (k, title, body) => {
        const rank = rankOf(terms, title, body);
        if (rank !== null) hits.push({ type: 'todo', id: ids[k]!, rank });
      });
    }
  }
  const direct = new Map<string, { title: string; body: string }>();
  const consider = (type: SearchType, id: string, title: string, body: string) => {
    const rank = rankOf(terms, fold(title), fold(body));
    if (rank === null) return;
    hits.push({ type, id, rank });
    direct.set(`${type}:${id}`, { title, body });
  };
  if (wanted.has('container')) {
    for (const row of deps.db.select().from(containers).where(eq(containers.userId, p.userId)).all()) {
      if (!withTrashed && deadIds.has(row.id)) continue;
      const s = openContainer(p.dek, row);
      consider('container', row.id, s.name, [s.subtitle ?? '', s.notes ?? ''].filter(Boolean).join('\n'));
    }
  }
  if (wanted.has('heading')) {
    for (const row of deps.db.select().from(headings).where(eq(headings.userId, p.userId)).all()) {
      if (!withTrashed && deadIds.has(row.projectId)) continue;
      consider('heading', row.id, openJson<{ name: string }>(p.dek, rowAad(p.userId, 'headings', row.id), row.sealed).name, '');
    }
  }
  if (wanted.has('note')) {
    for (const row of deps.db.select().from(notes).where(eq(notes.userId, p.userId)).all()) {
      if (!withTrashed && (row.trashedAt !== null || !liveParent(row.parentId))) continue;
      const s = openNote(p.dek, row);
      // An untitled note is shown by its first line.
      const title = s.title ?? s.body.split('\n', 1)[0]!.slice(0, 200);
      consider('note', row.id, title, s.body);
    }
  }
  if (wanted.has('inbox')) {
    for (const row of deps.db.select().from(inboxItems).where(eq(inboxItems.userId, p.userId)).all()) {
      const s = openInbox(p.dek, row);
      // A moved item lives on as its to-do; searching it too would find the same thing twice.
      if (s.status === 'moved') continue;
      const title = s.title ?? s.text?.split('\n', 1)[0]!.slice(0, 200) ?? s.url ?? '';
      consider('inbox', row.id, title, [s.text ?? '', s.url ?? ''].filter(Boolean).join('\n'));
    }
  }

  hits.sort((x, y) => x.rank - y.rank || TYPE_ORDER.indexOf(x.type) - TYPE_ORDER.indexOf(y.type) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const limit = input.limit ?? LIMITS.page.defaultLimit;
  const scope = `${p.userId}:search`;
  // The cursor is bound to the query (a digest of q, types and include_trashed), so a cursor of
  // another search is refused rather than read against the wrong list.
  const queryKey = createHash('sha256').update(`${input.q}\u0000${[...wanted].sort().join(',')}\u0000${withTrashed}`).digest('base64url').slice(0, 16);
  let start = 0;
  if (input.cursor) {
    const pos = decodeTupleCursor(deps.keys.cursor, scope, input.cursor, 3);
    if (pos.k[2] !== queryKey) throw invalid('/cursor', 'The cursor belongs to another search; start again without it.');
    const rank = Number(pos.k[0]);
    const ti = Number(pos.k[1]);
    start = hits.findIndex((h) => h.rank > rank || (h.rank === rank && (TYPE_ORDER.indexOf(h.type) > ti || (TYPE_ORDER.indexOf(h.type) === ti && h.id > pos.i))));
    if (start < 0) start = hits.length;
  }
  const page = hits.slice(start, start + limit);

  // Open only the page's to-do rows.
  const todoIds = page.filter((h) => h.type === 'todo').map((h) => h.id);
  const todoRows = todoIds.length
    ? (prepared(deps.db, 'search.todosByIds', (db) =>
        db.select().from(todos).where(and(eq(todos.userId, sql.placeholder('userId')), inJsonIds(todos.id, 'ids'))).prepare(),
      ).all({ userId: p.userId, ids: JSON.stringify(todoIds) }) as TodoRow[])
    : [];
  const todoText = new Map(
    todoRows.map((r) => {
      const s = openTodo(p.dek, r);
      return [r.id, { title: s.title, body: [s.notes ?? '', ...s.checklist.map((c) => c.title)].filter(Boolean).join('\n') }];
    }),
  );
  const data: Out[] = page.map((h) => {
    const t = h.type === 'todo' ? todoText.get(h.id)! : direct.get(`${h.type}:${h.id}`)!;
    return { type: h.type, id: h.id, title: t.title, snippet: snippetOf(t.body, terms) };
  });
  const last = page.at(-1);
  return {
    data,
    next_cursor: start + limit < hits.length && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [String(last.rank), String(TYPE_ORDER.indexOf(last.type)), queryKey], i: last.id }) : null,
  };
}
