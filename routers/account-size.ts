// Spec §7 `account_too_large` for the operations that read the whole account through the sealed
// index (views, saved filters, search, sealed-field lists): refused past CAIRN_MAX_ACCOUNT_ITEMS
// items (DECISIONS §1, default 250,000), counting to-dos, notes, containers, headings and inbox
// items. Counted on plaintext owner columns: no decryption.
import type Database from 'better-sqlite3';
import type { Deps } from './deps.js';
import { AppError } from '../core/errors.js';

/** Tables whose rows count as account items, when present in this database. */
const ITEM_TABLES = ['todos', 'notes', 'containers', 'headings', 'inbox_items'];

const countCache = new WeakMap<Database.Database, Database.Statement>();

function countStatement(db: Database.Database): Database.Statement {
  let st = countCache.get(db);
  if (!st) {
    const present = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    const parts = ITEM_TABLES.filter((t) => present.has(t)).map((t) => `(SELECT count(*) FROM "${t}" WHERE user_id = @userId)`);
    st = db.prepare(`SELECT ${parts.join(' + ')} AS n`);
    countCache.set(db, st);
  }
  return st;
}

export function accountItems(deps: Deps, userId: string): number {
  return (countStatement(deps.db.$client).get({ userId }) as { n: number }).n;
}

export function assertAccountSize(deps: Deps, userId: string): void {
  const limit = deps.config.maxAccountItems;
  const n = accountItems(deps, userId);
  if (n > limit) {
    throw new AppError('account_too_large', `This account holds ${n} items, more than this server's limit of ${limit} for views, filters and search (CAIRN_MAX_ACCOUNT_ITEMS).`);
  }
}
