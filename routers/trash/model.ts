// The trash (spec §3, DECISIONS §6). Lists what was trashed itself: notes, note folders, to-dos and
// containers with `trashedAt` set. Contents that left live views with a trashed folder or container
// keep `trashedAt: null` and are not listed (spec §3: only the folder is listed). Emptying the trash
// and the 30-day purge delete each entry the way its own DELETE does, contents included.
import { and, eq, inArray } from 'drizzle-orm';
import { containers, noteFolders, notes, todos } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import type { ListQuery, Page } from '../../db/paging.js';
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { iso } from '../../core/clock.js';
import { invalid } from '../../core/errors.js';
import { openNote } from '../notes/model.js';
import { removeNotes } from '../notes/remove.js';
import { openFolder, removeFolderTree } from '../note-folders/model.js';
import { openTodo, deleteTodo } from '../todos/model.js';
import { openContainer, deleteContainer } from '../containers/model.js';
import type { TrashItemOut, TrashType } from './schema.js';

type Entry = { type: TrashType; id: string; trashedAt: number };

/** Each trash table: its type name and SQL table. */
const TABLES: { type: TrashType; table: string }[] = [
  { type: 'note', table: 'notes' },
  { type: 'note_folder', table: 'note_folders' },
  { type: 'todo', table: 'todos' },
  { type: 'container', table: 'containers' },
];

const UNION = TABLES.map(
  (t) => `SELECT '${t.type}' AS type, id, user_id AS userId, trashed_at AS trashedAt, updated_at AS updatedAt FROM "${t.table}" WHERE trashed_at IS NOT NULL`,
).join(' UNION ALL ');

/** A note's title, or the first non-blank line of its body (cut to the title limit). */
export function noteTitle(s: { title: string | null; body: string }): string {
  if (s.title !== null && s.title.trim() !== '') return s.title;
  const line = s.body.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.trim().slice(0, LIMITS.note.title);
}

/** Titles of the entries, opened with each resource's own model. */
function titlesOf(db: Db, p: Principal, entries: Entry[]): Map<string, string> {
  const ids = (type: TrashType) => entries.filter((e) => e.type === type).map((e) => e.id);
  const out = new Map<string, string>();
  const key = (type: TrashType, id: string) => `${type}:${id}`;
  const n = ids('note');
  if (n.length) for (const r of db.select().from(notes).where(and(eq(notes.userId, p.userId), inArray(notes.id, n))).all()) out.set(key('note', r.id), noteTitle(openNote(p.dek, r)));
  const f = ids('note_folder');
  if (f.length) for (const r of db.select().from(noteFolders).where(and(eq(noteFolders.userId, p.userId), inArray(noteFolders.id, f))).all()) out.set(key('note_folder', r.id), openFolder(p.dek, r).name);
  const t = ids('todo');
  if (t.length) for (const r of db.select().from(todos).where(and(eq(todos.userId, p.userId), inArray(todos.id, t))).all()) out.set(key('todo', r.id), openTodo(p.dek, r).title);
  const c = ids('container');
  if (c.length) for (const r of db.select().from(containers).where(and(eq(containers.userId, p.userId), inArray(containers.id, c))).all()) out.set(key('container', r.id), openContainer(p.dek, r).name);
  return out;
}

/** `GET /v1/trash`: newest trashed first (ties by type, then id); paged like every list. */
export function listTrash(deps: Deps, p: Principal, query: ListQuery): Page<TrashItemOut> {
  const limit = query.limit ?? LIMITS.page.defaultLimit;
  const scope = `${p.userId}:trash`;
  const where = ['userId = @user'];
  const params: Record<string, unknown> = { user: p.userId, n: limit + 1 };
  if (query.cursor) {
    const pos = decodeTupleCursor(deps.keys.cursor, scope, query.cursor, 2);
    const at = Number(pos.k[0]);
    if (!Number.isSafeInteger(at)) throw invalid('/cursor', 'The cursor is not valid for this list; start again without it.');
    where.push('(trashedAt, type, id) < (@at, @type, @id)');
    Object.assign(params, { at, type: pos.k[1], id: pos.i });
  }
  if (query.updated_since) {
    where.push('updatedAt >= @since');
    params.since = Date.parse(query.updated_since);
  }
  const rows = deps.db.$client
    .prepare(`SELECT type, id, trashedAt FROM (${UNION}) WHERE ${where.join(' AND ')} ORDER BY trashedAt DESC, type DESC, id DESC LIMIT @n`)
    .all(params) as Entry[];
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const titles = titlesOf(deps.db, p, kept);
  const last = kept[kept.length - 1];
  return {
    data: kept.map((e) => ({ type: e.type, id: e.id, title: titles.get(`${e.type}:${e.id}`) ?? '', trashedAt: iso(e.trashedAt) })),
    next_cursor: more && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [String(last.trashedAt), last.type], i: last.id }) : null,
  };
}

function exists(tx: Tx | Db, type: TrashType, userId: string, id: string): boolean {
  const t = { note: notes, note_folder: noteFolders, todo: todos, container: containers }[type];
  return tx.select({ id: t.id }).from(t).where(and(eq(t.userId, userId), eq(t.id, id))).get() !== undefined;
}

/**
 * Deletes trash entries for good, each as its own DELETE would: a container with everything in
 * it, a folder with its subfolders and notes, a to-do, a note. Containers go first, then folders,
 * so contents already removed with them are skipped. Needs no data key: `p` is used for its user
 * id only (the purge passes a key-less principal).
 */
export function removeEntries(deps: Deps, tx: Tx, p: Principal, entries: { type: TrashType; id: string }[], now: number): void {
  const order: TrashType[] = ['container', 'note_folder', 'todo', 'note'];
  for (const type of order) {
    for (const e of entries.filter((x) => x.type === type)) {
      if (!exists(tx, type, p.userId, e.id)) continue;
      if (type === 'container') deleteContainer(deps, p, e.id);
      else if (type === 'note_folder') removeFolderTree(deps, tx, p.userId, e.id, now);
      else if (type === 'todo') deleteTodo(deps, p, e.id);
      else removeNotes(deps, tx, p.userId, [e.id], now);
    }
  }
}

/** `POST /v1/trash/empty`: every trashed entry of the user goes for good, in one transaction. */
export function emptyTrash(deps: Deps, p: Principal) {
  return deps.db.transaction((tx) => {
    const entries = deps.db.$client.prepare(`SELECT type, id, trashedAt FROM (${UNION}) WHERE userId = ?`).all(p.userId) as Entry[];
    removeEntries(deps, tx, p, entries, deps.clock());
    const count = (type: TrashType) => entries.filter((e) => e.type === type).length;
    return { deleted: { notes: count('note'), noteFolders: count('note_folder'), todos: count('todo'), containers: count('container') } };
  });
}

/** Every user's trash entries trashed at or before `cutoff` (the purge). */
export function entriesTrashedBefore(db: Db, cutoff: number): { userId: string; type: TrashType; id: string }[] {
  return db.$client.prepare(`SELECT userId, type, id FROM (${UNION}) WHERE trashedAt <= ? ORDER BY userId`).all(cutoff) as { userId: string; type: TrashType; id: string }[];
}
