// One request's picture of an account for the views, saved filters and overview (issue 14):
// every to-do's plaintext placement (container, heading, sort keys, trash, stamp) read from the
// rows, its sealed attributes from the sealed index (server/index/todo-index.ts), and the
// containers with their sealed status. Nothing here outlives the request. A caller picks to-dos
// from it and opens only the rows it returns (`presentPicked`).
import type Database from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import { containers, todos } from '../../db/schema/index.js';
import { inJsonIds, prepared } from '../../db/prepared.js';
import { decodeTupleCursor, encodeTupleCursor } from '../../db/tuple-page.js';
import { LIMITS } from '../../server/config.js';
import type { Deps } from '../../server/deps.js';
import type { Principal } from '../../server/auth/credentials.js';
import { indexedAttrs, type IndexedTodo } from '../../server/index/todo-index.js';
import { assertAccountSize } from '../../server/account-size.js';
import { openContainer, toContainer, type ContainerRow } from '../containers/model.js';
import type { ContainerOut } from '../containers/schema.js';
import { openTodo, presentTodos, type TodoRow } from '../todos/model.js';
import type { TodoOut } from '../todos/schema.js';

/** A to-do as the views see it: plaintext placement plus indexed attributes. */
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

export type Account = {
  /** Every to-do, in no particular order (sort a selection with `inAppOrder`). */
  items: Item[];
  orderOf: (i: Item) => Order;
  /** Sorts a selection in app order (in place), setting each item's `key`, and returns it. */
  inAppOrder: (items: Item[]) => Item[];
  containers: Map<string, ContainerInfo>;
  /** Live views: not trashed, not in a trashed or archived container (or below one). */
  isLive: (i: Item) => boolean;
  /** The logbook: not trashed and not in (or below) a trashed container; archived ones stay. */
  isLoggable: (i: Item) => boolean;
  container: (id: string) => ContainerOut;
};

/** The app-order key of an order tuple and id (NUL sorts below every character in them). */
export function keyOf(order: readonly string[], id: string): string {
  return `${order.join('\u0000')}\u0000${id}`;
}

type Placement = Omit<Item, 'a' | 'key'>;

const placementCache = new WeakMap<object, Database.Statement>();
function placementQuery(deps: Deps): Database.Statement {
  const db = deps.db.$client;
  let st = placementCache.get(db);
  if (!st) {
    // Arrays (raw): building fixed-shape objects in JS is cheaper than the driver's named rows.
    st = db.prepare('SELECT id, parent_id, heading_id, heading_key, sort_key, trashed_at, updated_at FROM todos WHERE user_id = ?').raw(true);
    placementCache.set(db, st);
  }
  return st;
}

export function loadAccount(deps: Deps, p: Principal): Account {
  assertAccountSize(deps, p.userId);
  // Plain better-sqlite3 rows (no ORM mapping): this reads every to-do of the account.
  const raw = placementQuery(deps).all(p.userId) as [string, string | null, string | null, string, string, number | null, number][];
  const rows: Placement[] = raw.map((r) => ({ id: r[0], parentId: r[1], headingId: r[2], headingKey: r[3], sortKey: r[4], trashedAt: r[5], updatedAt: r[6] }));
  const attrs = indexedAttrs(deps.db.$client, p, rows, { wholeAccount: true });

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

  const items: Item[] = [];
  for (const r of rows) {
    const a = attrs.get(r.id);
    if (!a) continue;
    (r as Item).a = a;
    items.push(r as Item);
  }
  const orderOf = (i: Item): Order => [i.parentId ? (info.get(i.parentId)?.path ?? '') : '', i.headingKey, i.headingId ?? '', i.sortKey];

  const inDead = (i: Item) => (i.parentId ? (info.get(i.parentId)?.trashedBelow ?? false) : false);
  const inArchived = (i: Item) => (i.parentId ? (info.get(i.parentId)?.archivedBelow ?? false) : false);
  const presented = new Map<string, ContainerOut>();
  return {
    items,
    orderOf,
    inAppOrder: (list) => {
      for (const i of list) i.key ??= keyOf(orderOf(i), i.id);
      return list.sort((x, y) => (x.key! < y.key! ? -1 : x.key! > y.key! ? 1 : 0));
    },
    containers: info,
    isLive: (i) => i.trashedAt === null && !inDead(i) && !inArchived(i),
    isLoggable: (i) => i.trashedAt === null && !inDead(i),
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
 * One page of picked items in app order (sorted with `Account.inAppOrder`), after the cursor's
 * position; the next cursor (MAC'd, bound to `scope`) carries the last item's order and id.
 */
export function pageInAppOrder(deps: Deps, acc: Account, picked: Item[], query: { limit?: number | undefined; cursor?: string | undefined }, scope: string) {
  acc.inAppOrder(picked);
  const limit = query.limit ?? LIMITS.page.defaultLimit;
  let start = 0;
  if (query.cursor) {
    const pos = decodeTupleCursor(deps.keys.cursor, scope, query.cursor, 4);
    const after = keyOf(pos.k, pos.i);
    start = picked.findIndex((i) => i.key! > after);
    if (start < 0) start = picked.length;
  }
  const page = picked.slice(start, start + limit);
  const last = page.at(-1);
  return { page, next_cursor: start + limit < picked.length && last ? encodeTupleCursor(deps.keys.cursor, scope, { k: [...acc.orderOf(last)], i: last.id }) : null };
}

/** Opens only the picked rows and presents them as the to-do routes do, keyed by id. */
export function presentPicked(deps: Deps, p: Principal, ids: readonly string[]): Map<string, TodoOut> {
  const out = new Map<string, TodoOut>();
  if (!ids.length) return out;
  const rows = prepared(deps.db, 'views.todosByIds', (db) =>
    db
      .select()
      .from(todos)
      .where(and(eq(todos.userId, sql.placeholder('userId')), inJsonIds(todos.id, 'ids')))
      .prepare(),
  ).all({ userId: p.userId, ids: JSON.stringify([...new Set(ids)]) }) as TodoRow[];
  const list = presentTodos(deps, p, rows.map((row) => ({ row, s: openTodo(p.dek, row) })));
  for (const t of list) out.set(t.id, t);
  return out;
}
