// One request's picture of an account for the views, saved filters and overview (issue 14):
// every to-do's plaintext placement (container, heading, sort keys, trash, stamp) read from the
// rows, its sealed attributes from the sealed index (routers/todo-index/index.ts), and the
// containers with their sealed status. Nothing here outlives the request. A caller picks to-dos
// from it and opens only the rows it returns (`presentPicked`).
import type Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { containers, todos } from '../../db/schema/index.js';
import { prepared } from '../../db/prepared.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import { LIMITS } from '../../core/config.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { accountIndex, todoTotals, type Arena, type AttrReader, type IndexedTodo } from '../todo-index/index.js';
import { assertAccountSize } from '../account-size.js';
import { openContainer, toContainer, type ContainerRow } from '../containers/model.js';
import type { ContainerOut } from '../containers/schema.js';
import { openTodo, presentTodos, type TodoRow } from '../todos/model.js';
import type { TodoOut } from '../todos/schema.js';

/** A to-do as the views see it: plaintext placement plus indexed attributes (built only for picked rows). */
export type Item = {
  id: string;
  parentId: string | null;
  headingId: string | null;
  headingKey: string;
  sortKey: string;
  trashedAt: number | null;
  updatedAt: number;
  a: IndexedTodo;
  /** The app-order key, set by `Account.inAppOrder` (see `keyOf`). */
  key?: string;
};

/** App order: the container's place in the container tree, then heading, then sort key (then id). */
export type Order = [string, string, string, string];

type ContainerInfo = { row: ContainerRow; archived: boolean; path: string; trashedBelow: boolean; archivedBelow: boolean };

/** The rest of a picked row's placement (its place in app order): id, heading_id, heading_key, sort_key. */
type Rest = [string, string | null, string, string];

export type Account = {
  /** How many to-dos the account holds; rows are addressed by position 0..n-1. */
  n: number;
  /** The indexed attributes of row k, column-wise (no object per to-do). */
  attrs: AttrReader;
  /** Row k's id and container. */
  idAt: (k: number) => string;
  parentAt: (k: number) => string | null;
  /** Whether row k has indexed attributes (false only for a to-do created during the request). */
  has: (k: number) => boolean;
  /** Live views: not trashed, not in a trashed or archived container (or below one). */
  isLive: (k: number) => boolean;
  /** The logbook: not trashed and not in (or below) a trashed container; archived ones stay. */
  isLoggable: (k: number) => boolean;
  /** Rows as Items (placement plus attributes as an object), for the few rows a view keeps. */
  items: (ks: readonly number[]) => Item[];
  /** Row k as an Item, given its app-order columns (read by the caller). */
  itemWith: (k: number, headingId: string | null, headingKey: string, sortKey: string) => Item;
  /** The rows a predicate keeps (positions). */
  positions: (pred: (k: number) => boolean) => number[];
  userId: string;
  /** The Items of the rows `pred` keeps. */
  pick: (pred: (k: number) => boolean) => Item[];
  orderOf: (i: Item) => Order;
  /** Sorts a selection in app order (in place), setting each item's `key`, and returns it. */
  inAppOrder: (items: Item[]) => Item[];
  containers: Map<string, ContainerInfo>;
  container: (id: string) => ContainerOut;
};

/** The app-order key of an order tuple and id (NUL sorts below every character in them). */
export function keyOf(order: readonly string[], id: string): string {
  return `${order.join('\u0000')}\u0000${id}`;
}

type Queries = { restAll: Database.Statement; restOf: Database.Statement };
const queryCache = new WeakMap<object, Queries>();
function queries(deps: Deps): Queries {
  const db = deps.db.$client;
  let q = queryCache.get(db);
  if (!q) {
    // Every row's id, stamp, trash and container come from the sealed index (format 3), checked
    // fresh by an aggregate (routers/todo-index/index.ts accountIndex); the app-order columns are
    // read from the rows only for the rows a view picks: by id for a few, in one scan for many.
    q = {
      restAll: db.prepare('SELECT id, heading_id, heading_key, sort_key FROM todos WHERE user_id = ? ORDER BY id').raw(true),
      restOf: db.prepare('SELECT id, heading_id, heading_key, sort_key FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))').raw(true),
    };
    queryCache.set(db, q);
  }
  return q;
}

/** `arena`: the read's plaintext buffers (routers/todo-index/reads.ts `withAccountArena`): use the Account only inside it. */
export function loadAccount(deps: Deps, p: Principal, arena: Arena): Account {
  // The to-do totals serve both the size check and the index's freshness check (one scan).
  const totals = todoTotals(deps.db.$client, p.userId);
  assertAccountSize(deps, p.userId, totals[0]);
  const q = queries(deps);
  const ix = accountIndex(deps.db.$client, p, arena, totals);
  const { n, idAt, stamps, attrs } = ix;

  const crows = deps.db.select().from(containers).where(eq(containers.userId, p.userId)).all();
  const byId = new Map(crows.map((r) => [r.id, r]));
  const info = new Map<string, ContainerInfo>();
  const resolve = (id: string, depth = 0): ContainerInfo | undefined => {
    const have = info.get(id);
    if (have) return have;
    const row = byId.get(id);
    if (!row || depth > 64) return undefined;
    const archived = openContainer(p.dek, row).status === 'archived';
    const parent = row.parentId ? resolve(row.parentId, depth + 1) : undefined;
    const self = `${row.sortKey}\u0002${row.id}`;
    const c: ContainerInfo = {
      row,
      archived,
      path: parent ? `${parent.path}\u0001${self}` : self,
      trashedBelow: row.trashedAt !== null || (parent?.trashedBelow ?? false),
      archivedBelow: archived || (parent?.archivedBelow ?? false),
    };
    info.set(id, c);
    return c;
  };
  for (const r of crows) resolve(r.id);

  const items = (ks: readonly number[]): Item[] => {
    const out: Item[] = [];
    if (!ks.length) return out;
    // The app-order columns of these rows: one scan when they are many, else by id.
    let restAt: (k: number) => Rest | undefined;
    if (ks.length > n / 16) {
      const byId = new Map<string, Rest>();
      for (const r of q.restAll.all(p.userId) as Rest[]) byId.set(r[0], r);
      restAt = (k) => byId.get(idAt(k));
    } else {
      const byId = new Map<string, Rest>();
      for (const r of q.restOf.all(p.userId, JSON.stringify(ks.map(idAt))) as Rest[]) byId.set(r[0], r);
      restAt = (k) => byId.get(idAt(k));
    }
    for (const k of ks) {
      const x = restAt(k);
      // A row deleted since the index was read is left out.
      if (x) out.push({ id: idAt(k), parentId: ix.parentId(k), headingId: x[1], headingKey: x[2], sortKey: x[3], trashedAt: ix.trashedAt(k), updatedAt: stamps[k]!, a: attrs.attrs(k) });
    }
    return out;
  };
  const orderOf = (i: Item): Order => [i.parentId ? (info.get(i.parentId)?.path ?? '') : '', i.headingKey, i.headingId ?? '', i.sortKey];
  const presented = new Map<string, ContainerOut>();
  return {
    n,
    attrs,
    idAt,
    parentAt: (k) => ix.parentId(k),
    has: (k) => attrs.has(k),
    isLive: (k) => {
      if (ix.trashedAt(k) !== null) return false;
      const parent = ix.parentId(k);
      if (parent === null) return true;
      const c = info.get(parent);
      return !(c?.trashedBelow ?? false) && !(c?.archivedBelow ?? false);
    },
    isLoggable: (k) => {
      const parent = ix.parentId(k);
      return ix.trashedAt(k) === null && !(parent !== null && (info.get(parent)?.trashedBelow ?? false));
    },
    items,
    itemWith: (k, headingId, headingKey, sortKey) => {
      return { id: idAt(k), parentId: ix.parentId(k), headingId, headingKey, sortKey, trashedAt: ix.trashedAt(k), updatedAt: stamps[k]!, a: attrs.attrs(k) };
    },
    positions: (pred) => {
      const ks: number[] = [];
      for (let k = 0; k < n; k++) if (attrs.has(k) && pred(k)) ks.push(k);
      return ks;
    },
    userId: p.userId,
    pick: (pred) => {
      const ks: number[] = [];
      for (let k = 0; k < n; k++) if (attrs.has(k) && pred(k)) ks.push(k);
      return items(ks);
    },
    orderOf,
    inAppOrder: (list) => {
      for (const i of list) i.key ??= keyOf(orderOf(i), i.id);
      return list.sort((x, y) => (x.key! < y.key! ? -1 : x.key! > y.key! ? 1 : 0));
    },
    containers: info,
    container: (id) => {
      let c = presented.get(id);
      if (!c) {
        c = toContainer(p.dek, info.get(id)!.row);
        presented.set(id, c);
      }
      return c;
    },
  };
}

/**
 * The `limit` smallest of `xs` under `cmp`, in order, without sorting all of them (a bounded
 * insertion buffer: a view's page of 50 out of thousands of picked to-dos).
 */
export function smallest<T>(xs: readonly T[], limit: number, cmp: (a: T, b: T) => number): T[] {
  if (xs.length <= limit * 4) return [...xs].sort(cmp).slice(0, limit);
  const buf: T[] = [];
  for (const x of xs) {
    if (buf.length === limit && cmp(x, buf[limit - 1]!) >= 0) continue;
    let lo = 0;
    let hi = buf.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(buf[mid]!, x) <= 0) lo = mid + 1;
      else hi = mid;
    }
    buf.splice(lo, 0, x);
    if (buf.length > limit) buf.pop();
  }
  return buf;
}

/**
 * One page of picked rows (positions) in app order, after the cursor's position; the next cursor
 * (MAC'd, bound to `scope`) carries the last item's order and id. The rows' containers are put in
 * app order (their paths), then each container's rows are walked in list order on the index
 * todos_user_list_order (heading key, heading, sort key, id: app order inside a container) until
 * the page is full: a page reads about limit / (share picked) index entries, not the account.
 */
export function pageInAppOrder(deps: Deps, acc: Account, picked: readonly number[], query: { limit?: number | undefined; cursor?: string | undefined }, scope: string) {
  const limit = query.limit ?? LIMITS.page.defaultLimit;
  const pos = query.cursor ? decodeTupleCursor(deps.keys.cursor, scope, query.cursor, 4) : null;
  // Few picked rows (a selective filter): the walk would read ~(limit + 1) × n / picked index
  // entries to find a page, more than reading and sorting the picked rows themselves.
  if (picked.length * picked.length * 3 <= (limit + 1) * acc.n) return pageBySorting(deps, acc, acc.items(picked), limit, pos, scope);
  // The picked rows by container (parent_key: '' for standalone), and each container's path.
  const byParent = new Map<string, Map<string, number>>();
  for (const k of picked) {
    const parent = acc.parentAt(k) ?? '';
    if (parent !== '' && !acc.containers.has(parent)) return pageBySorting(deps, acc, acc.items(picked), limit, pos, scope);
    let m = byParent.get(parent);
    if (!m) byParent.set(parent, (m = new Map()));
    m.set(acc.idAt(k), k);
  }
  const pathOf = (parent: string) => (parent === '' ? '' : acc.containers.get(parent)!.path);
  const groups = [...byParent.keys()].map((parent) => ({ parent, path: pathOf(parent) })).sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const found: Item[] = [];
  const q = walkQueries(deps);
  for (const g of groups) {
    if (pos && g.path < pos.k[0]!) continue;
    const mine = byParent.get(g.parent)!;
    const it = (pos && g.path === pos.k[0] ? q.after.iterate(acc.userId, g.parent, pos.k[1], pos.k[2], pos.k[3], pos.i) : q.all.iterate(acc.userId, g.parent)) as IterableIterator<[string, string, string, string]>;
    let seen = 0;
    for (const r of it) {
      const k = mine.get(r[0]);
      if (k === undefined) continue;
      found.push(acc.itemWith(k, r[1] === '' ? null : r[1], r[2], r[3]));
      // Stop once the page and one more are found, or every picked row of the container was seen.
      if (found.length > limit || ++seen === mine.size) {
        it.return?.();
        break;
      }
    }
    if (found.length > limit) break;
  }
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return { page, next_cursor: found.length > limit && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [...acc.orderOf(last)], i: last.id }) : null };
}

/** The same page by sorting the picked items (few of them, or a to-do's container is unknown). */
function pageBySorting(deps: Deps, acc: Account, picked: Item[], limit: number, pos: { k: string[]; i: string } | null, scope: string) {
  for (const i of picked) i.key ??= keyOf(acc.orderOf(i), i.id);
  const from = pos ? keyOf(pos.k, pos.i) : null;
  const after = from === null ? picked : picked.filter((i) => i.key! > from);
  const page = smallest(after, limit, (x, y) => (x.key! < y.key! ? -1 : x.key! > y.key! ? 1 : 0));
  const last = page.at(-1);
  return { page, next_cursor: after.length > limit && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [...acc.orderOf(last)], i: last.id }) : null };
}

type WalkQueries = { all: Database.Statement; after: Database.Statement };
const walkCache = new WeakMap<object, WalkQueries>();
function walkQueries(deps: Deps): WalkQueries {
  const db = deps.db.$client;
  let q = walkCache.get(db);
  if (!q) {
    const cols = 'SELECT id, heading_ref, heading_key, sort_key FROM todos WHERE user_id = ? AND parent_key = ?';
    const order = 'ORDER BY heading_key, heading_ref, sort_key, id';
    q = {
      all: db.prepare(`${cols} ${order}`).raw(true),
      after: db.prepare(`${cols} AND (heading_key, heading_ref, sort_key, id) > (?, ?, ?, ?) ${order}`).raw(true),
    };
    walkCache.set(db, q);
  }
  return q;
}

/** Opens only the picked rows and presents them as the to-do routes do, keyed by id. */
export function presentPicked(deps: Deps, p: Principal, ids: readonly string[]): Map<string, TodoOut> {
  const out = new Map<string, TodoOut>();
  if (!ids.length) return out;
  // A raw statement with the row's columns named as TodoRow (drizzle's row mapping cost ~3.6 ms
  // of a 539-row Today at 50k to-dos).
  const rows = prepared(deps.db, 'views.todosByIds.raw', (db) =>
    db.$client.prepare<[string, string], TodoRow>(
      `SELECT id, user_id AS userId, parent_id AS parentId, heading_id AS headingId, sort_key AS sortKey, sealed, trashed_at AS trashedAt, created_at AS createdAt, updated_at AS updatedAt
         FROM todos WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`,
    ),
  ).all(p.userId, JSON.stringify([...new Set(ids)]));
  const list = presentTodos(deps, p, rows.map((row) => ({ row, s: openTodo(p.dek, row) })));
  for (const t of list) out.set(t.id, t);
  return out;
}
