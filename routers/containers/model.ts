// Containers (spec §2.1, §4.4; DECISIONS §6): areas, projects, subprojects. `kind` and the
// parent relation are plaintext; every content field and the status are sealed.
import { unindexTodos } from '../todo-index/index.js';
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { containers, headings } from '../../db/schema/index.js';
import type { ContainerKind } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { keyBetween } from '../../db/order.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent, type EventType } from '../events.js';
import { removeAttachmentsOf, removeAttachmentsToNotes } from '../attachments/remove.js';
import { BAND_TABLES, bandIdTaken } from '../band.js';
import { decryptBudget } from '../../core/decrypt-budget.js';
import { containerIsDead, containerSubtree, deadContainerIds } from './live.js';
import type { ContainerOut } from './schema.js';

export type ContainerRow = typeof containers.$inferSelect;
type Priority = 'low' | 'medium' | 'high';
export type ContainerSealed = {
  name: string;
  subtitle: string | null;
  notes: string | null;
  symbol: string | null;
  colorHex: string | null;
  deadline: string | null;
  priority: Priority | null;
  status: 'active' | 'archived';
};

const aad = (userId: string, id: string) => rowAad(userId, 'containers', id);

export function openContainer(dek: Buffer, row: ContainerRow): ContainerSealed {
  return openJson<ContainerSealed>(dek, aad(row.userId, row.id), row.sealed);
}

export function sealContainer(dek: Buffer, userId: string, id: string, s: ContainerSealed): Buffer {
  return sealJson(dek, aad(userId, id), s);
}

export function toContainer(dek: Buffer, row: ContainerRow, s: ContainerSealed = openContainer(dek, row)): ContainerOut {
  return {
    id: row.id,
    kind: row.kind,
    name: s.name,
    parentId: row.parentId,
    subtitle: s.subtitle,
    notes: s.notes,
    symbol: s.symbol,
    colorHex: s.colorHex,
    deadline: s.deadline,
    priority: s.priority,
    status: s.status,
    sortKey: row.sortKey,
    trashedAt: isoOrNull(row.trashedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function findContainerRow(tx: Tx | Db, userId: string, id: string): ContainerRow | undefined {
  return tx.select().from(containers).where(and(eq(containers.userId, userId), eq(containers.id, id))).get();
}

function getRow(tx: Tx | Db, userId: string, id: string): ContainerRow {
  const row = findContainerRow(tx, userId, id);
  if (!row) throw notFound('Container');
  return row;
}

/** Which parent kinds each kind accepts (spec §2.1: an area holds projects only, a subproject holds to-dos). */
const PARENT_OF: Record<ContainerKind, ContainerKind | null> = { area: null, project: 'area', subproject: 'project' };

/**
 * Checks `parentId` for a container of `kind` (create and move). A wrong parent is
 * `validation_failed` at /parentId: unknown, trashed (or inside the trash), or of the wrong kind.
 */
function checkParent(deps: Deps, tx: Tx, userId: string, kind: ContainerKind, parentId: string | null): void {
  const want = PARENT_OF[kind];
  if (parentId === null) {
    if (kind === 'subproject') throw invalid('/parentId', 'a subproject needs a project as its parent');
    return;
  }
  if (want === null) throw invalid('/parentId', 'an area cannot have a parent');
  const parent = findContainerRow(tx, userId, parentId);
  if (!parent) throw invalid('/parentId', 'no container with this id');
  if (parent.kind !== want) {
    throw invalid('/parentId', kind === 'project' ? 'a project can only sit in an area' : 'a subproject can only sit in a project');
  }
  if (containerIsDead(deps.db.$client, userId, parentId)) throw invalid('/parentId', 'the parent is in the trash');
}

function siblingsLastKey(tx: Tx, userId: string, parentId: string | null, excludeId: string | null = null): string | null {
  const conds: SQL[] = [eq(containers.userId, userId), parentId === null ? isNull(containers.parentId) : eq(containers.parentId, parentId)];
  if (excludeId) conds.push(sql`${containers.id} <> ${excludeId}`);
  const r = tx.select({ k: sql<string | null>`max(${containers.sortKey})` }).from(containers).where(and(...conds)).get();
  return r?.k ?? null;
}

/** Sort key among the siblings under `parentId`: after/before a sibling, else at the end. */
function siblingKey(deps: Deps, tx: Tx, userId: string, parentId: string | null, place: { after?: string | null | undefined; before?: string | null | undefined }, movingId: string | null): string {
  if (place.after != null && place.before != null) throw invalid('/before', 'give either after or before, not both');
  const which = place.after != null ? 'after' : place.before != null ? 'before' : null;
  if (!which) return keyBetween(siblingsLastKey(tx, userId, parentId, movingId), null);
  const nid = (which === 'after' ? place.after : place.before)!;
  const pointer = `/${which}`;
  if (nid === movingId) throw invalid(pointer, 'a container cannot be placed next to itself');
  const n = findContainerRow(tx, userId, nid);
  if (!n || n.parentId !== parentId) throw invalid(pointer, 'no sibling container with this id under the destination parent');
  if (n.trashedAt !== null) throw invalid(pointer, 'the sibling is in the trash');
  const sameParent = parentId === null ? isNull(containers.parentId) : eq(containers.parentId, parentId);
  const notMoving = movingId ? sql`${containers.id} <> ${movingId}` : sql`1 = 1`;
  if (which === 'after') {
    const next = tx
      .select({ k: sql<string | null>`min(${containers.sortKey})` })
      .from(containers)
      .where(and(eq(containers.userId, userId), sameParent, sql`${containers.sortKey} > ${n.sortKey}`, notMoving))
      .get();
    return keyBetween(n.sortKey, next?.k ?? null);
  }
  const prev = tx
    .select({ k: sql<string | null>`max(${containers.sortKey})` })
    .from(containers)
    .where(and(eq(containers.userId, userId), sameParent, sql`${containers.sortKey} < ${n.sortKey}`, notMoving))
    .get();
  return keyBetween(prev?.k ?? null, n.sortKey);
}

/** A client id must be new: a container's id is `duplicate_id`; an id of another task-core row is `conflict`. */
export function checkNewContainerId(deps: Deps, tx: Tx, id: string, pointer = '/id'): void {
  if (tx.select({ id: containers.id }).from(containers).where(eq(containers.id, id)).get()) {
    throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer });
  }
  if (tx.select({ id: headings.id }).from(headings).where(eq(headings.id, id)).get() || bandIdTaken(deps.db.$client, id)) {
    throw new AppError('conflict', 'This id already names a heading, to-do or note.', { pointer });
  }
}

export type CreateContainer = {
  kind: ContainerKind;
  name: string;
  parentId?: string | null | undefined;
  subtitle?: string | null | undefined;
  notes?: string | null | undefined;
  symbol?: string | null | undefined;
  colorHex?: string | null | undefined;
  deadline?: string | null | undefined;
  priority?: Priority | null | undefined;
  id?: string | undefined;
};

/** Inserts a container inside the caller's transaction (create, heading convert). */
export function insertContainer(deps: Deps, tx: Tx, p: Principal, input: CreateContainer): ContainerRow {
  const parentId = input.parentId ?? null;
  checkParent(deps, tx, p.userId, input.kind, parentId);
  if (input.id) checkNewContainerId(deps, tx, input.id);
  const id = input.id ?? newId();
  const now = deps.clock();
  const sealed: ContainerSealed = {
    name: input.name,
    subtitle: input.subtitle ?? null,
    notes: input.notes ?? null,
    symbol: input.symbol ?? null,
    colorHex: input.colorHex ?? null,
    deadline: input.deadline ?? null,
    priority: input.priority ?? null,
    status: 'active',
  };
  const row: ContainerRow = {
    id,
    userId: p.userId,
    kind: input.kind,
    parentId,
    sortKey: keyBetween(siblingsLastKey(tx, p.userId, parentId), null),
    sealed: sealContainer(p.dek, p.userId, id, sealed),
    trashedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  tx.insert(containers).values(row).run();
  recordEvent(deps, { userId: p.userId, type: 'container.created', id, at: now });
  return row;
}

export function createContainer(deps: Deps, p: Principal, input: CreateContainer): ContainerOut {
  return deps.db.transaction((tx) => toContainer(p.dek, insertContainer(deps, tx, p, input)));
}

export function getContainer(deps: Deps, p: Principal, id: string): ContainerOut {
  return toContainer(p.dek, getRow(deps.db, p.userId, id));
}

export type ContainerListQuery = ListQuery & {
  kind?: ContainerKind | undefined;
  parent_id?: string | undefined;
  status?: 'active' | 'archived' | undefined;
  include_trashed?: boolean | undefined;
};

/** Spec §4.4: app order (siblings by sort key, grouped by parent); `status` decrypts in the request. */
export function listContainers(deps: Deps, p: Principal, query: ContainerListQuery) {
  const conds: SQL[] = [eq(containers.userId, p.userId)];
  if (query.kind) conds.push(eq(containers.kind, query.kind));
  if (query.parent_id !== undefined) conds.push(query.parent_id === 'null' ? isNull(containers.parentId) : eq(containers.parentId, query.parent_id));
  if (!query.include_trashed) conds.push(sql`${containers.id} NOT IN (${deadContainerIds(p.userId)})`);
  const since = updatedSince(containers.updatedAt, query);
  if (since) conds.push(since);
  const cols = [sql`coalesce(${containers.parentId}, '')`, sql`${containers.sortKey}`];
  const status = query.status;
  return tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:containers`,
    query,
    arity: 2,
    fetch: (after, n) =>
      deps.db
        .select()
        .from(containers)
        .where(and(...conds, ...(after ? [afterTuple(cols, containers.id, after)] : [])))
        .orderBy(sql`coalesce(${containers.parentId}, '')`, asc(containers.sortKey), asc(containers.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [r.parentId ?? '', r.sortKey], i: r.id }),
    map: (r) => {
      const s = openContainer(p.dek, r);
      return status && s.status !== status ? null : toContainer(p.dek, r, s);
    },
    ...(status ? { budget: decryptBudget(deps) } : {}),
  });
}

type ContainerPatch = Partial<Omit<ContainerSealed, 'status'>>;

function writeSealed(deps: Deps, tx: Tx, p: Principal, row: ContainerRow, s: ContainerSealed, extra: Partial<ContainerRow> = {}): ContainerRow {
  const now = deps.clock();
  const next: ContainerRow = { ...row, ...extra, sealed: sealContainer(p.dek, p.userId, row.id, s), updatedAt: now };
  tx.update(containers)
    .set({ sealed: next.sealed, updatedAt: now, parentId: next.parentId, sortKey: next.sortKey, trashedAt: next.trashedAt })
    .where(and(eq(containers.userId, p.userId), eq(containers.id, row.id)))
    .run();
  recordEvent(deps, { userId: p.userId, type: 'container.updated', id: row.id, at: now });
  return next;
}

export function updateContainer(deps: Deps, p: Principal, input: ContainerPatch & { id: string }): ContainerOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, input.id);
    const s = openContainer(p.dek, row);
    const next: ContainerSealed = { ...s };
    // Field by field: only what the client sent changes (null clears the nullable ones).
    if (input.name !== undefined) next.name = input.name;
    if (input.subtitle !== undefined) next.subtitle = input.subtitle;
    if (input.notes !== undefined) next.notes = input.notes;
    if (input.symbol !== undefined) next.symbol = input.symbol;
    if (input.colorHex !== undefined) next.colorHex = input.colorHex;
    if (input.deadline !== undefined) next.deadline = input.deadline;
    if (input.priority !== undefined) next.priority = input.priority;
    if (JSON.stringify(next) === JSON.stringify(s)) return toContainer(p.dek, row, s);
    return toContainer(p.dek, writeSealed(deps, tx, p, row, next), next);
  });
}

export function moveContainer(
  deps: Deps,
  p: Principal,
  input: { id: string; parentId: string | null; after?: string | null | undefined; before?: string | null | undefined },
): ContainerOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, input.id);
    checkParent(deps, tx, p.userId, row.kind, input.parentId);
    const sortKey = siblingKey(deps, tx, p.userId, input.parentId, input, row.id);
    const s = openContainer(p.dek, row);
    return toContainer(p.dek, writeSealed(deps, tx, p, row, s, { parentId: input.parentId, sortKey }), s);
  });
}

/** DECISIONS §6: archive → `archived`, unarchive → `active` (the status is sealed). */
export function setContainerStatus(deps: Deps, p: Principal, id: string, status: 'active' | 'archived'): ContainerOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    const s = openContainer(p.dek, row);
    if (s.status === status) return toContainer(p.dek, row, s);
    const next = { ...s, status };
    return toContainer(p.dek, writeSealed(deps, tx, p, row, next), next);
  });
}

/** Only the container gets `trashedAt`; its contents leave live views with it (DECISIONS §6). */
export function trashContainer(deps: Deps, p: Principal, id: string, trashed: boolean): ContainerOut {
  return deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    const s = openContainer(p.dek, row);
    if ((row.trashedAt !== null) === trashed) return toContainer(p.dek, row, s);
    return toContainer(p.dek, writeSealed(deps, tx, p, row, s, { trashedAt: trashed ? deps.clock() : null }), s);
  });
}

/**
 * DELETE only when trashed (else `conflict`): removes the container, the containers below it,
 * their headings and every band item (to-dos, notes) in them, recording each removal's event.
 */
export function deleteContainer(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    const row = getRow(tx, p.userId, id);
    if (row.trashedAt === null) throw new AppError('conflict', 'Only a container in the trash can be deleted; trash it first.');
    const sqlite = deps.db.$client;
    const subtree = containerSubtree(sqlite, p.userId, id);
    const now = deps.clock();
    const marks = subtree.map(() => '?').join(', ');
    for (const t of BAND_TABLES) {
      const items = sqlite
        .prepare(`SELECT "${t.idCol}" AS id FROM "${t.table}" WHERE "${t.userCol}" = ? AND "${t.parentCol}" IN (${marks})`)
        .all(p.userId, ...subtree) as { id: string }[];
      for (const it of items) recordEvent(deps, { userId: p.userId, type: `${t.kind}.deleted` as EventType, id: it.id, at: now });
      if (t.table === 'todos') unindexTodos(sqlite, p, items.map((it) => it.id));
      // Their attachments go with them: a to-do's own, and note attachments pointing at a note.
      if (t.kind === 'todo') removeAttachmentsOf(deps, tx, p.userId, 'todo', items.map((it) => it.id), now);
      if (t.kind === 'note') removeAttachmentsToNotes(deps, tx, p.userId, items.map((it) => it.id), now);
      sqlite.prepare(`DELETE FROM "${t.table}" WHERE "${t.userCol}" = ? AND "${t.parentCol}" IN (${marks})`).run(p.userId, ...subtree);
    }
    const hs = tx.select({ id: headings.id }).from(headings).where(and(eq(headings.userId, p.userId), inArray(headings.projectId, subtree))).all();
    for (const h of hs) recordEvent(deps, { userId: p.userId, type: 'heading.deleted', id: h.id, at: now });
    tx.delete(headings).where(and(eq(headings.userId, p.userId), inArray(headings.projectId, subtree))).run();
    // Deepest first, so no row is removed by the foreign-key cascade behind the model's back.
    removeAttachmentsOf(deps, tx, p.userId, 'container', subtree, now);
    for (const cid of [...subtree].reverse()) {
      recordEvent(deps, { userId: p.userId, type: 'container.deleted', id: cid, at: now });
      tx.delete(containers).where(and(eq(containers.userId, p.userId), eq(containers.id, cid))).run();
    }
  });
}
