// The item band (spec §2.3, §4.6; DECISIONS §5): to-dos (and, later, notes) inside one container,
// or one heading of it, share one ordering. A band is (userId, parentId, headingId); every table
// that holds band items registers here, so sort keys, neighbours (`after`/`before`) and the band's
// end are computed across all of them. A table with no heading column sits in the heading-less band.
import type Database from 'better-sqlite3';
import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';
import { invalid } from '../core/errors.js';

export type Band = { parentId: string | null; headingId: string | null };

export type BandTable = {
  /** The item type as the API names it (`todo`, `note`). */
  kind: string;
  table: string;
  idCol: string;
  userCol: string;
  parentCol: string;
  /** Null when the table's items never sit under a heading. */
  headingCol: string | null;
  sortCol: string;
  trashedCol: string;
};

export const BAND_TABLES: BandTable[] = [
  { kind: 'todo', table: 'todos', idCol: 'id', userCol: 'user_id', parentCol: 'parent_id', headingCol: 'heading_id', sortCol: 'sort_key', trashedCol: 'trashed_at' },
  // Notes (spec §2.3) sit in the heading-less band of their container (docs/api.md "Notes").
  { kind: 'note', table: 'notes', idCol: 'id', userCol: 'user_id', parentCol: 'parent_id', headingCol: null, sortCol: 'sort_key', trashedCol: 'trashed_at' },
];

/** Adds a table to the band (notes call this once at import). */
export function registerBandTable(t: BandTable): void {
  if (!BAND_TABLES.some((b) => b.table === t.table)) BAND_TABLES.push(t);
}

export type BandItem = {
  kind: string;
  id: string;
  parentId: string | null;
  headingId: string | null;
  sortKey: string;
  trashedAt: number | null;
};

/** The WHERE clause selecting a band in one table (NULL-safe `IS`), or null when the table cannot hold it. */
function bandWhere(t: BandTable, userId: string, band: Band): { sql: string; args: unknown[] } | null {
  if (t.headingCol === null && band.headingId !== null) return null;
  const heading = t.headingCol ? ` AND "${t.headingCol}" IS ?` : '';
  return {
    sql: `"${t.userCol}" = ? AND "${t.parentCol}" IS ?${heading}`,
    args: t.headingCol ? [userId, band.parentId, band.headingId] : [userId, band.parentId],
  };
}

/** Finds an item of any band table by id (owned by the user). */
export function findBandItem(sqlite: Database.Database, userId: string, id: string): BandItem | null {
  for (const t of BAND_TABLES) {
    const heading = t.headingCol ? `"${t.headingCol}"` : 'NULL';
    const row = sqlite
      .prepare(
        `SELECT "${t.idCol}" AS id, "${t.parentCol}" AS parentId, ${heading} AS headingId, "${t.sortCol}" AS sortKey, "${t.trashedCol}" AS trashedAt FROM "${t.table}" WHERE "${t.userCol}" = ? AND "${t.idCol}" = ?`,
      )
      .get(userId, id) as Omit<BandItem, 'kind'> | undefined;
    if (row) return { kind: t.kind, ...row };
  }
  return null;
}

/** True when any band table already holds this id (for any user): ids stay unambiguous as neighbours. */
export function bandIdTaken(sqlite: Database.Database, id: string): boolean {
  return BAND_TABLES.some((t) => sqlite.prepare(`SELECT 1 FROM "${t.table}" WHERE "${t.idCol}" = ?`).get(id) !== undefined);
}

function extremeKey(sqlite: Database.Database, userId: string, band: Band, fn: 'max' | 'min', cmp: '' | '>' | '<', pivot: string | null, excludeId: string | null): string | null {
  let best: string | null = null;
  for (const t of BAND_TABLES) {
    const w = bandWhere(t, userId, band);
    if (!w) continue;
    let sql = `SELECT ${fn}("${t.sortCol}") AS k FROM "${t.table}" WHERE ${w.sql}`;
    const params: unknown[] = [...w.args];
    if (cmp && pivot !== null) {
      sql += ` AND "${t.sortCol}" ${cmp} ?`;
      params.push(pivot);
    }
    if (excludeId) {
      sql += ` AND "${t.idCol}" <> ?`;
      params.push(excludeId);
    }
    const k = (sqlite.prepare(sql).get(...params) as { k: string | null }).k;
    if (k !== null && (best === null || (fn === 'max' ? k > best : k < best))) best = k;
  }
  return best;
}

/** The last sort key in the band (trashed items included: they return to their place on restore). */
export function bandLastKey(sqlite: Database.Database, userId: string, band: Band, excludeId: string | null = null): string | null {
  return extremeKey(sqlite, userId, band, 'max', '', null, excludeId);
}

/** `n` ascending keys at the end of the band. */
export function bandKeysAtEnd(sqlite: Database.Database, userId: string, band: Band, n: number): string[] {
  if (n === 0) return [];
  return generateNKeysBetween(bandLastKey(sqlite, userId, band), null, n);
}

export type Placement = { after?: string | null | undefined; before?: string | null | undefined };

/**
 * The sort key for an item placed in `band`: right after `after`, right before `before`, or at the
 * end when neither is given. A neighbour must be a live item of the same band (a to-do or a note),
 * else `validation_failed` at its pointer. `movingId` is the item being moved (never its own
 * neighbour, and left out of the key computation).
 */
export function bandKeyFor(sqlite: Database.Database, userId: string, band: Band, place: Placement, movingId: string | null = null): string {
  if (place.after != null && place.before != null) {
    throw invalid('/before', 'give either after or before, not both');
  }
  const which = place.after != null ? 'after' : place.before != null ? 'before' : null;
  if (!which) return generateKeyBetween(bandLastKey(sqlite, userId, band, movingId), null);
  const neighbourId = (which === 'after' ? place.after : place.before)!;
  const pointer = `/${which}`;
  if (neighbourId === movingId) throw invalid(pointer, 'an item cannot be placed next to itself');
  const n = findBandItem(sqlite, userId, neighbourId);
  if (!n) throw invalid(pointer, 'no to-do or note with this id');
  if (n.trashedAt !== null) throw invalid(pointer, 'the neighbour is in the trash');
  if (n.parentId !== band.parentId || n.headingId !== band.headingId) {
    throw invalid(pointer, 'the neighbour is not in the destination container and heading');
  }
  if (which === 'after') {
    const next = extremeKey(sqlite, userId, band, 'min', '>', n.sortKey, movingId);
    return generateKeyBetween(n.sortKey, next);
  }
  const prev = extremeKey(sqlite, userId, band, 'max', '<', n.sortKey, movingId);
  return generateKeyBetween(prev, n.sortKey);
}
