// Spec §7 `account_too_large` for the operations that read the whole account through the sealed
// index (views, saved filters, search, sealed-field lists): refused past CAIRN_MAX_ACCOUNT_ITEMS
// items (DECISIONS §1, default 250,000), counting to-dos, notes, containers, headings and inbox
// items. Counted on plaintext owner columns: no decryption.
import type Database from 'better-sqlite3';
import type { Deps } from './deps.js';
import { AppError } from '../core/errors.js';

/** Tables whose rows count as account items, when present in this database. */
const ITEM_TABLES = ['todos', 'notes', 'containers', 'headings', 'inbox_items'];

const countCache = new WeakMap<Database.Database, Database.Statement[]>();

/** The count over every item table (`noTodos`: all but to-dos, counted by the caller). */
function countStatement(db: Database.Database, noTodos: boolean): Database.Statement {
  let st = countCache.get(db);
  if (!st) {
    const present = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    const sumOf = (tables: string[]) => `SELECT ${['0', ...tables.filter((t) => present.has(t)).map((t) => `(SELECT count(*) FROM "${t}" WHERE user_id = @userId)`)].join(' + ')} AS n`;
    st = [db.prepare(sumOf(ITEM_TABLES)), db.prepare(sumOf(ITEM_TABLES.filter((t) => t !== 'todos')))];
    countCache.set(db, st);
  }
  return st[noTodos ? 1 : 0]!;
}

export function accountItems(deps: Deps, userId: string, todoCount?: number): number {
  return (countStatement(deps.db.$client, todoCount !== undefined).get({ userId }) as { n: number }).n + (todoCount ?? 0);
}

/** `todoCount`: the account's to-dos when the caller has counted them already (the views' totals). */
export function assertAccountSize(deps: Deps, userId: string, todoCount?: number): void {
  const limit = deps.config.maxAccountItems;
  const n = accountItems(deps, userId, todoCount);
  if (n > limit) {
    throw new AppError('account_too_large', `This account holds ${n} items, more than this server's limit of ${limit} for views, filters and search (CAIRN_MAX_ACCOUNT_ITEMS).`);
  }
}
