// Saved filters (spec §2.8, §4.10, DECISIONS §6). Name, criteria and symbol are sealed. The
// criteria are parsed on every write (a syntax error is 422 at /criteria with the column) and
// evaluated over the account's live open to-dos through the sealed index (routers/views/account.ts):
// only the page's rows are opened.
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { filters, tags, todoTags } from '../../db/schema/index.js';
import { prepared } from '../../db/prepared.js';
import { finishPage, pageConditions, type ListQuery, type PageSpec } from '../../db/paging.js';
import { keyAfter } from '../../db/order.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { tagNameIndex } from '../../core/crypto/blind-index.js';
import { recordEvent } from '../events.js';
import { todayOf } from '../todos/model.js';
import { withAccountArena } from '../todo-index/index.js';
import { loadAccount, pageInAppOrder, presentPicked } from '../views/account.js';
import { CriteriaError, evaluate, parseCriteria, tagNamesIn, type Criteria } from './criteria.js';
import type { FilterOut } from './schema.js';

type Row = typeof filters.$inferSelect;
type Sealed = { name: string; criteria: string; symbol: string | null };

const aad = (userId: string, id: string) => rowAad(userId, 'filters', id);

function toFilter(dek: Buffer, row: Row): FilterOut {
  const s = openJson<Sealed>(dek, aad(row.userId, row.id), row.sealed);
  return { id: row.id, name: s.name, criteria: s.criteria, symbol: s.symbol, sortKey: row.sortKey, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

function getRow(deps: Deps, userId: string, id: string): Row {
  const q = prepared(deps.db, 'filters.byId', (db) =>
    db.select().from(filters).where(and(eq(filters.userId, sql.placeholder('userId')), eq(filters.id, sql.placeholder('id')))).prepare(),
  );
  const row = q.get({ userId, id });
  if (!row) throw notFound('Filter');
  return row;
}

/** Parses criteria from client input; a syntax error is validation_failed at /criteria with its column. */
function parseInput(criteria: string): Criteria {
  try {
    return parseCriteria(criteria);
  } catch (e) {
    if (e instanceof CriteriaError) throw invalid('/criteria', e.message);
    throw e;
  }
}

export function listFilters(deps: Deps, p: Principal, query: ListQuery) {
  const spec: PageSpec = { key: deps.keys.cursor, scope: `${p.userId}:filters`, query, sortCol: filters.sortKey, idCol: filters.id, updatedCol: filters.updatedAt };
  const { where, fetch, limit } = pageConditions(spec);
  const rows = deps.db
    .select()
    .from(filters)
    .where(and(eq(filters.userId, p.userId), ...where))
    .orderBy(asc(filters.sortKey), asc(filters.id))
    .limit(fetch)
    .all();
  return finishPage(spec, rows, limit, (r) => ({ k: r.sortKey, i: r.id }), (r) => toFilter(p.dek, r));
}

export function getFilter(deps: Deps, p: Principal, id: string): FilterOut {
  return toFilter(p.dek, getRow(deps, p.userId, id));
}

export function createFilter(deps: Deps, p: Principal, input: { name: string; criteria: string; symbol?: string | null | undefined; id?: string | undefined }): FilterOut {
  parseInput(input.criteria);
  return deps.db.transaction((tx) => {
    if (input.id && tx.select({ id: filters.id }).from(filters).where(eq(filters.id, input.id)).get()) {
      throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
    }
    const id = input.id ?? newId();
    const last = tx.select({ k: filters.sortKey }).from(filters).where(eq(filters.userId, p.userId)).orderBy(desc(filters.sortKey)).limit(1).get();
    const now = deps.clock();
    const row: Row = {
      id,
      userId: p.userId,
      sortKey: keyAfter(last?.k ?? null),
      sealed: sealJson(p.dek, aad(p.userId, id), { name: input.name, criteria: input.criteria, symbol: input.symbol ?? null } satisfies Sealed),
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(filters).values(row).run();
    recordEvent(deps, { userId: p.userId, type: 'filter.created', id, at: now });
    return toFilter(p.dek, row);
  });
}

export function updateFilter(deps: Deps, p: Principal, input: { id: string; name?: string | undefined; criteria?: string | undefined; symbol?: string | null | undefined }): FilterOut {
  if (input.criteria !== undefined) parseInput(input.criteria);
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, input.id);
    const s = openJson<Sealed>(p.dek, aad(p.userId, row.id), row.sealed);
    const next: Sealed = { ...s };
    if (input.name !== undefined) next.name = input.name;
    if (input.criteria !== undefined) next.criteria = input.criteria;
    if (input.symbol !== undefined) next.symbol = input.symbol;
    if (JSON.stringify(next) === JSON.stringify(s)) return toFilter(p.dek, row);
    const now = deps.clock();
    const updated: Row = { ...row, sealed: sealJson(p.dek, aad(p.userId, row.id), next), updatedAt: now };
    tx.update(filters).set({ sealed: updated.sealed, updatedAt: now }).where(and(eq(filters.userId, p.userId), eq(filters.id, row.id))).run();
    recordEvent(deps, { userId: p.userId, type: 'filter.updated', id: row.id, at: now });
    return toFilter(p.dek, updated);
  });
}

export function deleteFilter(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    const res = tx.delete(filters).where(and(eq(filters.userId, p.userId), eq(filters.id, id))).run();
    if (res.changes === 0) throw notFound('Filter');
    recordEvent(deps, { userId: p.userId, type: 'filter.deleted', id, at: deps.clock() });
  });
}

/**
 * GET /v1/filters/{id}/todos: the live open to-dos the criteria match, in app order, paged.
 * Tag names resolve through the tags' blind index (the normalisation tags use), so matching is
 * case-insensitive and an unknown tag matches nothing.
 */
export function filterTodos(deps: Deps, p: Principal, input: { id: string; limit?: number | undefined; cursor?: string | undefined; today?: string | undefined }) {
  return withAccountArena((arena) => {
    const filter = getRow(deps, p.userId, input.id);
    const criteria = parseCriteria(openJson<Sealed>(p.dek, aad(p.userId, filter.id), filter.sealed).criteria);
    const today = input.today ?? todayOf(deps);
    const acc = loadAccount(deps, p, arena);

    // Tag name → tag id (blind index), then the to-dos carrying each referenced tag.
    const tagQ = prepared(deps.db, 'filters.tagByIndex', (db) =>
      db.select({ id: tags.id }).from(tags).where(and(eq(tags.userId, sql.placeholder('userId')), eq(tags.nameIndex, sql.placeholder('idx')))).prepare(),
    );
    const carriersQ = prepared(deps.db, 'filters.carriers', (db) =>
      db.select({ todoId: todoTags.todoId }).from(todoTags).where(and(eq(todoTags.userId, sql.placeholder('userId')), eq(todoTags.tagId, sql.placeholder('tagId')))).prepare(),
    );
    const carriers = new Map<string, Set<string>>();
    for (const name of tagNamesIn(criteria)) {
      const tag = tagQ.get({ userId: p.userId, idx: tagNameIndex(p.dek, name) });
      carriers.set(name, new Set(tag ? carriersQ.all({ userId: p.userId, tagId: tag.id }).map((r) => r.todoId) : []));
    }

    // One subject read lazily from the index columns at row k (no object per to-do).
    let k = 0;
    const v = acc.attrs;
    const subject = {
      hasTag: (name: string) => carriers.get(name)!.has(acc.idAt(k)),
      get whenDate() {
        return v.whenDate(k);
      },
      get deadline() {
        return v.deadline(k);
      },
      get someday() {
        return (v.flags(k) & 2) !== 0;
      },
      get priority() {
        return v.priority(k);
      },
    };
    const picked = acc.positions((row) => {
      if (v.status(row) !== 0 || !acc.isLive(row)) return false;
      k = row;
      return evaluate(criteria, subject, today);
    });
    const { page, next_cursor } = pageInAppOrder(deps, acc, picked, input, `${p.userId}:filters.${filter.id}.todos`);
    const shown = presentPicked(deps, p, page.map((i) => i.id));
    return { data: page.map((i) => shown.get(i.id)!), next_cursor };
  });
}
