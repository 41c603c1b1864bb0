// What the CalDAV door reads and keeps (docs/caldav.md "What is stored"): a collection's members
// with their ETags, resource names found by blind index, the sealed per-resource rows
// (db/schema/dav.ts `dav_resources`) and the collections themselves. Every statement is scoped by
// the user id; content is opened only for the rows an answer returns.
//
// ETag (strong): a hash of the to-do row's sealed bytes, its `dav_resources` row's sealed bytes and
// each of its tags' ids and sealed bytes, in tag order. Every write of a to-do from any door
// re-seals its row under a fresh nonce, so the ETag changes with every change (a completion, a
// REST edit, a move), and with a tag renamed or deleted from the account (its link goes), without
// opening anything.
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { prepared } from '../db/prepared.js';
import type { Db } from '../db/client.js';
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { linksOfMany, openTodo, type TodoRow } from '../routers/todos/rows.js';
import { openContainer, type ContainerRow } from '../routers/containers/model.js';
import { davNameIndex, davUidIndex } from '../db/sealed.js';
import { openJson, rowAad, sealJson } from '../core/crypto/seal.js';
import { STANDALONE, defaultName } from './paths.js';
import { emptyExtras, extrasEmpty, type Extras } from './vtodo.js';

/**
 * A to-do's CalDAV row: its client name and UID, the properties Cairn does not model, and for its
 * checklist items made as subtasks by a client, their names and UIDs (by item id).
 */
export type DavSealed = { name: string | null; uid: string | null; extras: Extras; children?: Record<string, ChildRef> | undefined };
export type ChildRef = { name: string | null; uid: string | null };

/** One member of a collection: the to-do id, its ETag (without quotes) and its resource name. */
export type Member = { id: string; etag: string; name: string; updatedAt?: number; child?: Child | undefined };

/**
 * A checklist item served as a subtask (docs/caldav.md "Subtasks"): a VTODO of its own with
 * RELATED-TO;RELTYPE=PARENT the to-do's UID. Its member id is `<to-do id>/<item id>`; its default
 * name `<to-do id>.<item id>.ics`, its UID `<to-do UID>.<item id>`; its ETag changes with the to-do's.
 */
export type Child = { todoId: string; itemId: string; title: string; done: boolean; uid: string; parentUid: string };

type MemberRow = [id: string, sealed: Buffer, davSealed: Buffer | null, hasName: number, updatedAt: number];

const aad = (userId: string, todoId: string) => rowAad(userId, 'dav_resources', todoId);

export const nameIndex = (p: Principal, name: string): Buffer => davNameIndex(p.dek, name);
export const uidIndex = (p: Principal, uid: string): Buffer => davUidIndex(p.dek, uid);

export function openDav(p: Principal, todoId: string, sealed: Buffer): DavSealed {
  const s = openJson<DavSealed>(p.dek, aad(p.userId, todoId), sealed);
  return { name: s.name ?? null, uid: s.uid ?? null, extras: { ...emptyExtras(), ...s.extras }, children: s.children };
}

/** The members of a collection (live to-dos whose parent it is), in no particular order. */
function memberRows(db: Db): Database.Statement<[string, string], MemberRow> {
  // The list-order index (user_id, parent_key, …) finds the collection's rows; trashed ones are skipped.
  return prepared(db, 'dav.members.raw', (d) =>
    d.$client.prepare<[string, string], MemberRow>(
      `SELECT t.id, t.sealed, r.sealed, r.name_index IS NOT NULL, t.updated_at
         FROM todos t LEFT JOIN dav_resources r ON r.todo_id = t.id AND r.user_id = t.user_id
        WHERE t.user_id = ? AND t.parent_key = ? AND t.trashed_at IS NULL`,
    ),
  );
}

function oneRow(db: Db): Database.Statement<[string, string], [id: string, sealed: Buffer, davSealed: Buffer | null, hasName: number, parentId: string | null, trashedAt: number | null]> {
  return prepared(db, 'dav.member.raw', (d) =>
    d.$client.prepare(
      `SELECT t.id, t.sealed, r.sealed, r.name_index IS NOT NULL, t.parent_id, t.trashed_at
         FROM todos t LEFT JOIN dav_resources r ON r.todo_id = t.id AND r.user_id = t.user_id
        WHERE t.user_id = ? AND t.id = ?`,
    ),
  );
}

/** ETags of to-dos whose rows are read: one json_each join for all their tags. */
function etagsOf(deps: Deps, userId: string, rows: { id: string; sealed: Buffer; davSealed: Buffer | null }[]): Map<string, string> {
  const links = rows.length ? linksOfMany(deps.db).raw(true).all(JSON.stringify(rows.map((r) => r.id)), userId) : [];
  const byTodo = new Map<string, [number, string, Buffer][]>();
  for (const [todoId, tagId, sealed, position] of links) {
    const list = byTodo.get(todoId);
    if (list) list.push([position, tagId, sealed]);
    else byTodo.set(todoId, [[position, tagId, sealed]]);
  }
  const out = new Map<string, string>();
  for (const r of rows) {
    const h = createHash('sha256').update(r.sealed).update('\0');
    if (r.davSealed) h.update(r.davSealed);
    const tags = byTodo.get(r.id);
    if (tags) {
      tags.sort((a, b) => a[0] - b[0]);
      for (const [, tagId, sealed] of tags) h.update('\0').update(tagId).update('\0').update(sealed);
    }
    out.set(r.id, h.digest('base64url').slice(0, 27));
  }
  return out;
}

/** The subtasks of one to-do (its checklist items), from its opened content. */
export function childrenOf(todoId: string, etag: string, checklist: readonly { id: string; title: string; done: boolean }[], dav: DavSealed | null): Member[] {
  const parentUid = dav?.uid ?? todoId;
  return checklist.map((item) => {
    const ref = dav?.children?.[item.id];
    return {
      id: `${todoId}/${item.id}`,
      etag: createHash('sha256').update(etag).update('\0').update(item.id).digest('base64url').slice(0, 27),
      name: ref?.name ?? `${todoId}.${item.id}.ics`,
      child: { todoId, itemId: item.id, title: item.title, done: item.done, uid: ref?.uid ?? `${parentUid}.${item.id}`, parentUid },
    };
  });
}

/**
 * The members of a collection with ETags and names: its to-dos, then their checklist items as
 * subtasks. Rows with a client-chosen name open their `dav_resources` row; each to-do is opened
 * once to learn its checklist (docs/caldav.md "Subtasks": the one read that opens every member).
 */
export function listMembers(deps: Deps, p: Principal, collection: string, withChildren = true): Member[] {
  const rows = memberRows(deps.db).raw(true).all(p.userId, collection === STANDALONE ? '' : collection);
  const etags = etagsOf(deps, p.userId, rows.map(([id, sealed, davSealed]) => ({ id, sealed, davSealed })));
  const out: Member[] = [];
  const children: Member[] = [];
  for (const [id, sealed, davSealed, hasName, updatedAt] of rows) {
    const dav = davSealed ? openDav(p, id, davSealed) : null;
    const etag = etags.get(id)!;
    out.push({ id, etag, name: hasName && dav ? (dav.name ?? defaultName(id)) : defaultName(id), updatedAt });
    if (!withChildren) continue;
    const { checklist } = openTodo(p.dek, { id, userId: p.userId, sealed } as TodoRow);
    if (checklist.length) children.push(...childrenOf(id, etag, checklist, dav));
  }
  return out.concat(children);
}

export type Resource = { id: string; etag: string; name: string; dav: DavSealed | null; parentId: string | null; child?: Child | undefined };

/** One to-do as a resource (live or not: the caller checks its place), or null. */
export function resourceById(deps: Deps, p: Principal, todoId: string): (Resource & { trashed: boolean }) | null {
  const r = oneRow(deps.db).raw(true).get(p.userId, todoId);
  if (!r) return null;
  const [id, sealed, davSealed, , parentId, trashedAt] = r;
  const dav = davSealed ? openDav(p, id, davSealed) : null;
  const etag = etagsOf(deps, p.userId, [{ id, sealed, davSealed }]).get(id)!;
  return { id, etag, name: dav?.name ?? defaultName(id), dav, parentId, trashed: trashedAt !== null };
}

const UPPER_UUID_ICS = /^([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})\.ics$/;

function byNameIndex(db: Db): Database.Statement<[string, Buffer, string], [string]> {
  return prepared(db, 'dav.byName.raw', (d) =>
    d.$client.prepare(
      `SELECT r.todo_id FROM dav_resources r JOIN todos t ON t.id = r.todo_id AND t.user_id = r.user_id
        WHERE r.user_id = ? AND r.name_index = ? AND t.parent_key = ? AND t.trashed_at IS NULL`,
    ),
  );
}

function byUidIndex(db: Db): Database.Statement<[string, Buffer, string], [string]> {
  return prepared(db, 'dav.byUid.raw', (d) =>
    d.$client.prepare(
      `SELECT r.todo_id FROM dav_resources r JOIN todos t ON t.id = r.todo_id AND t.user_id = r.user_id
        WHERE r.user_id = ? AND r.uid_index = ? AND t.parent_key = ? AND t.trashed_at IS NULL`,
    ),
  );
}

const CHILD_NAME = /^([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})\.(.+)\.ics$/;

/** The subtask `itemId` of a live to-do of `collection`, or null. */
export function childResource(deps: Deps, p: Principal, collection: string, todoId: string, itemId: string): Resource | null {
  const parent = resourceById(deps, p, todoId);
  if (!parent || parent.trashed || (parent.parentId ?? STANDALONE) !== collection) return null;
  const row = oneRow(deps.db).raw(true).get(p.userId, todoId)!;
  const { checklist } = openTodo(p.dek, { id: todoId, userId: p.userId, sealed: row[1] } as TodoRow);
  const m = childrenOf(todoId, parent.etag, checklist, parent.dav).find((c) => c.child!.itemId === itemId);
  return m ? { id: m.id, etag: m.etag, name: m.name, dav: null, parentId: parent.parentId, child: m.child } : null;
}

/** Client-made to-dos of a collection: their CalDAV rows (for subtask names, which have no index). */
function davRowsOf(db: Db): Database.Statement<[string, string], [string, Buffer]> {
  return prepared(db, 'dav.rowsOfCollection.raw', (d) =>
    d.$client.prepare(
      `SELECT r.todo_id, r.sealed FROM dav_resources r JOIN todos t ON t.id = r.todo_id AND t.user_id = r.user_id
        WHERE r.user_id = ? AND t.parent_key = ? AND t.trashed_at IS NULL`,
    ),
  );
}

/** The live to-do (or subtask) served at `name` in `collection`, or null. */
export function findByName(deps: Deps, p: Principal, collection: string, name: string): Resource | null {
  const m = UPPER_UUID_ICS.exec(name);
  if (m) {
    const r = resourceById(deps, p, m[1]!);
    if (r && !r.trashed && (r.parentId ?? STANDALONE) === collection && r.name === name) return r;
  }
  const parentKey = collection === STANDALONE ? '' : collection;
  const hit = byNameIndex(deps.db).raw(true).get(p.userId, nameIndex(p, name), parentKey);
  if (hit) {
    const r = resourceById(deps, p, hit[0]);
    if (r && r.name === name) return r;
  }
  const c = CHILD_NAME.exec(name);
  if (c) {
    const child = childResource(deps, p, collection, c[1]!, c[2]!);
    if (child && child.name === name) return child;
  }
  // A subtask under a name of the client's: the client-written to-dos' rows name them.
  for (const [todoId, sealed] of davRowsOf(deps.db).raw(true).all(p.userId, parentKey)) {
    const children = openDav(p, todoId, sealed).children;
    for (const [itemId, ref] of Object.entries(children ?? {})) if (ref.name === name) return childResource(deps, p, collection, todoId, itemId);
  }
  return null;
}

/** The live to-do of `collection` whose UID is `uid`, or null. */
export function findByUid(deps: Deps, p: Principal, collection: string, uid: string): Resource | null {
  const r = resourceById(deps, p, uid);
  if (r && !r.trashed && (r.parentId ?? STANDALONE) === collection && (r.dav?.uid ?? r.id) === uid) return r;
  const hit = byUidIndex(deps.db).raw(true).get(p.userId, uidIndex(p, uid), collection === STANDALONE ? '' : collection);
  if (!hit) return null;
  const found = resourceById(deps, p, hit[0]);
  return found && (found.dav?.uid ?? found.id) === uid ? found : null;
}

/**
 * Writes (or removes, when it holds nothing) a to-do's `dav_resources` row, inside the caller's
 * write. A name equal to the default and a UID equal to the id are not stored.
 */
export function putDav(deps: Deps, p: Principal, todoId: string, s: DavSealed): void {
  const name = s.name && s.name !== defaultName(todoId) ? s.name : null;
  const uid = s.uid && s.uid !== todoId ? s.uid : null;
  const sqlite = deps.db.$client;
  const children = s.children && Object.keys(s.children).length ? s.children : undefined;
  if (!name && !uid && extrasEmpty(s.extras) && !children) {
    sqlite.prepare('DELETE FROM dav_resources WHERE user_id = ? AND todo_id = ?').run(p.userId, todoId);
    return;
  }
  const sealed = sealJson(p.dek, aad(p.userId, todoId), { name, uid, extras: s.extras, children } satisfies DavSealed);
  sqlite
    .prepare(
      `INSERT INTO dav_resources (todo_id, user_id, name_index, uid_index, sealed, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(todo_id) DO UPDATE SET name_index = excluded.name_index, uid_index = excluded.uid_index, sealed = excluded.sealed, updated_at = excluded.updated_at
       WHERE dav_resources.user_id = excluded.user_id`,
    )
    .run(todoId, p.userId, name ? nameIndex(p, name) : null, uid ? uidIndex(p, uid) : null, sealed, deps.clock());
}

export type Collection = { id: string; row: ContainerRow | null; name: string; color: string | null; order: number };

type ContainerLite = { id: string; kind: string; parentId: string | null; sortKey: string; sealed: Buffer; trashedAt: number | null; createdAt: number; updatedAt: number };

/**
 * The calendars of the account (docs/caldav.md "Calendars"): every live, unarchived project and
 * subproject, plus `standalone`. Areas are not calendars: their name prefixes their projects'
 * display names ("Area › Project", "Area › Project › Subproject").
 */
export function listCollections(deps: Deps, p: Principal): Collection[] {
  const rows = deps.db.$client
    .prepare<[string], ContainerLite>(
      `SELECT id, kind, parent_id AS parentId, sort_key AS sortKey, sealed, trashed_at AS trashedAt, created_at AS createdAt, updated_at AS updatedAt
         FROM containers WHERE user_id = ? ORDER BY sort_key, id`,
    )
    .all(p.userId);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const opened = new Map<string, ReturnType<typeof openContainer>>();
  const open = (r: ContainerLite) => {
    let s = opened.get(r.id);
    if (!s) {
      s = openContainer(p.dek, { ...r, userId: p.userId } as ContainerRow);
      opened.set(r.id, s);
    }
    return s;
  };
  const dead = (r: ContainerLite | undefined): boolean => !!r && (r.trashedAt !== null || dead(r.parentId ? byId.get(r.parentId) : undefined));
  const out: Collection[] = [{ id: STANDALONE, row: null, name: 'To-dos', color: null, order: 0 }];
  let order = 1;
  for (const r of rows) {
    if (r.kind === 'area' || dead(r)) continue;
    const s = open(r);
    if (s.status === 'archived') continue;
    const parent = r.parentId ? byId.get(r.parentId) : undefined;
    if (parent && open(parent).status === 'archived') continue;
    const names: string[] = [s.name];
    for (let up = parent; up; up = up.parentId ? byId.get(up.parentId) : undefined) names.unshift(open(up).name);
    out.push({ id: r.id, row: { ...r, userId: p.userId } as ContainerRow, name: names.join(' › '), color: s.colorHex, order: order++ });
  }
  return out;
}

/**
 * One calendar by its path segment, or null when it is not a live, unarchived project or
 * subproject. Reads the container and its ancestors only (not the account's containers); the
 * calendar-order, a position among all calendars, is computed only when asked for.
 */
export function findCollection(deps: Deps, p: Principal, id: string): Collection | null {
  if (id === STANDALONE) return { id, row: null, name: 'To-dos', color: null, order: 0 };
  // Ids are UPPERCASE UUIDs; a client that made a calendar under a lowercase one finds it too.
  if (!/^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/.test(id)) return null;
  const byId = containerById(deps.db);
  const row = byId.get(p.userId, id.toUpperCase());
  if (!row || row.kind === 'area' || row.trashedAt !== null) return null;
  const s = openContainer(p.dek, { ...row, userId: p.userId } as ContainerRow);
  if (s.status === 'archived') return null;
  const names = [s.name];
  for (let up = row.parentId ? byId.get(p.userId, row.parentId) : undefined, depth = 0; up && depth < 3; up = up.parentId ? byId.get(p.userId, up.parentId) : undefined, depth++) {
    if (up.trashedAt !== null) return null;
    const us = openContainer(p.dek, { ...up, userId: p.userId } as ContainerRow);
    if (up.kind !== 'area' && us.status === 'archived') return null;
    names.unshift(us.name);
  }
  const c: Collection = { id: row.id, row: { ...row, userId: p.userId } as ContainerRow, name: names.join(' › '), color: s.colorHex, order: 0 };
  let order: number | undefined;
  Object.defineProperty(c, 'order', { enumerable: true, get: () => (order ??= listCollections(deps, p).find((x) => x.id === row.id)?.order ?? 0) });
  return c;
}

function containerById(db: Db): Database.Statement<[string, string], ContainerLite> {
  return prepared(db, 'dav.containerById.raw', (d) =>
    d.$client.prepare(
      `SELECT id, kind, parent_id AS parentId, sort_key AS sortKey, sealed, trashed_at AS trashedAt, created_at AS createdAt, updated_at AS updatedAt
         FROM containers WHERE user_id = ? AND id = ?`,
    ),
  );
}

/**
 * getctag and the digest of a sync snapshot: a hash of the sorted to-do members. Subtasks are left
 * out: they follow from their to-do's ETag (its sealed content and CalDAV row), so the digest of
 * the to-dos alone changes exactly when the whole membership does, and a poll of an unchanged
 * calendar opens no to-do.
 */
export function membershipDigest(members: readonly Member[]): string {
  const h = createHash('sha256');
  for (const m of members.filter((x) => !x.child).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) h.update(m.id).update('\0').update(m.etag).update('\0').update(m.name).update('\n');
  return h.digest('base64url').slice(0, 27);
}
