// Re-sealing one account's v1 values as v2 (issue 29; docs/sealed-format.md "Re-sealing an
// account"): what `cairn reseal --email …` runs (server/cli-reseal.ts). The data key stays the
// same (no credential ends, blind indexes stay valid): every sealed value of the account still in
// format v1 (AES-256-GCM) is opened and sealed again as v2 (XChaCha20-Poly1305), in bounded
// IMMEDIATE transactions with a pause between them, so a server on the same file keeps answering.
// Only a credential opens the data key: the account's password is asked for (unlockAccount).
import type Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import sodium from 'sodium-native';
import { users } from '../../db/schema/index.js';
import { SEALED_TABLES, chunkAad } from '../../db/sealed.js';
import { smallWrites } from '../../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../../core/errors.js';
import { open, rowAad, seal, sealedVersion, SealError } from '../../core/crypto/seal.js';
import { unwrapDataKey, wrapDataKey } from '../../core/crypto/keywrap.js';
import { decoyRecord, verifyPassword, type PasswordRecord } from '../../core/crypto/password.js';
import { accountKeyForEmail, decoyLogN } from './model.js';
import { resealV1Target } from '../webhooks/v1-targets.js';
import { resealV1Link, v1Links } from '../imports/links.js';

/** How `reseal` re-makes a v1 value of a column, or why it cannot. */
export type ResealWay =
  | { by: 'data-key' }
  | { by: 'file-chunk' }
  | { by: 'webhook-target' }
  | { by: 'password-wrap' }
  | { by: 'import-link' }
  | { by: 'none'; why: string };

export type SealedColumn = {
  table: string;
  column: string;
  /** The column naming the account (the user id). */
  userCol: string;
  /** Where the sealed blob starts in the value (the OAuth code box starts with a 32-byte public key). */
  offset: number;
  reseal: ResealWay;
};

/**
 * Every column of the database that holds a sealed value (core/crypto/seal.ts), content and wraps
 * alike. `test/security/sealed-v2.test.ts` fails when the schema has a BLOB column that is neither
 * here nor in its list of hashes and indexes, so a new sealed column cannot be forgotten.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...SEALED_TABLES.map((t): SealedColumn => ({ table: t.table, column: t.sealedCol, userCol: t.userCol, offset: 0, reseal: { by: 'data-key' } })),
  { table: 'attachment_chunks', column: 'sealed', userCol: 'user_id', offset: 0, reseal: { by: 'file-chunk' } },
  { table: 'webhooks', column: 'sealed_target', userCol: 'user_id', offset: 0, reseal: { by: 'webhook-target' } },
  { table: 'users', column: 'pw_wrapped_key', userCol: 'id', offset: 0, reseal: { by: 'password-wrap' } },
  // An import link's source id (routers/imports/links.ts): under the data key, AAD by the link's id.
  { table: 'import_links', column: 'sealed', userCol: 'user_id', offset: 0, reseal: { by: 'import-link' } },
  ...(
    [
      ['credentials', 'wrapped_key', 0, "a session's or personal token's wrap: only its secret re-makes it; it ends with the credential"],
      ['oauth_tokens', 'wrapped_key', 0, "an OAuth token's wrap: only its secret re-makes it; it ends with the token (1 hour) or its grant"],
      ['oauth_requests', 'wrapped_key', 0, "an authorization code's wrap: only the code re-makes it; it is dropped at redemption or in the purge"],
      ['oauth_requests', 'sealed_code', 32, 'the code sealed to the waiting page (minutes); deleted once the page fetches it'],
      ['oauth_requests', 'started_context', 0, 'under a server key, not the account\'s; cleared once the request is decided'],
    ] as const
  ).map(([table, column, offset, why]): SealedColumn => ({ table, column, userCol: 'user_id', offset, reseal: { by: 'none', why } })),
];

/** The password wrap's purpose (routers/auth/model.ts PASSWORD_PURPOSE: the AAD of that wrap). */
const PASSWORD_PURPOSE = 'password';

export type Unlocked = { userId: string; dek: Buffer; kek: Buffer; passwordWrap: Buffer };

/**
 * The account's data key from its email and password, checked as login checks them (an unknown
 * email costs the same scrypt work and gets the same answer). No session is made.
 */
export async function unlockAccount(deps: Deps, email: string, password: string): Promise<Unlocked> {
  // The email's lookup index (routers/auth/model.ts emailIndex; the bucket subject is that index).
  const index = Buffer.from(accountKeyForEmail(deps, email), 'base64url');
  const row = deps.db.select().from(users).where(eq(users.emailIndex, index)).get();
  const record: PasswordRecord = row
    ? { salt: row.pwSalt, params: JSON.parse(row.pwParams) as PasswordRecord['params'], verifier: row.pwVerifier }
    : decoyRecord(decoyLogN(deps));
  const kek = await verifyPassword(password, record);
  if (!row || !kek) throw new AppError('unauthorized', 'The email or password is wrong.');
  return { userId: row.id, dek: unwrapDataKey(kek, row.id, PASSWORD_PURPOSE, row.pwWrappedKey), kek, passwordWrap: row.pwWrappedKey };
}

/** Zeroes the keys `unlockAccount` returned (libsodium's memzero: not optimised away). */
export function forgetKeys(u: Unlocked): void {
  sodium.sodium_memzero(u.dek);
  sodium.sodium_memzero(u.kek);
}

export type ResealOptions = {
  /** Values per transaction (default 500). */
  batchRows?: number;
  /** Sealed bytes per transaction (default 4 MiB: 64 file chunks). */
  batchBytes?: number;
  /**
   * Pause between transactions (default 120 ms). Longer than the longest wait step of SQLite's busy
   * handler (100 ms), so a server write that found the file locked gets it before the next batch.
   */
  pauseMs?: number;
  /** Called after each committed batch (progress lines; the tests write through the server here). */
  onBatch?: (p: { batch: number; done: number; total: number; ms: number }) => void | Promise<void>;
};

export type ResealReport = {
  /** v1 values re-sealed as v2, by `table.column`. */
  resealed: Record<string, number>;
  /** v1 values this command cannot re-make (credential and OAuth wraps), by `table.column`. */
  left: Record<string, number>;
  /** Values that did not open (damaged or moved); left as they are. */
  unopened: { table: string; id: string }[];
  batches: number;
  /** The longest batch, in ms: the time it held the write lock (waiting for it included). */
  longestBatchMs: number;
  /** Whether the final checkpoint emptied and truncated the WAL (no v1 page image left in it). */
  walTruncated: boolean;
};

/** One v1 value to re-seal: where it is, how big, and how it is re-made. */
type Item = { key: string; bytes: number; run: (sqlite: Database.Database) => 'done' | 'skipped' | 'unopened' };

const colName = (c: Pick<SealedColumn, 'table' | 'column'>) => `${c.table}.${c.column}`;
const V1_BYTE = "x'01'";

/**
 * Re-seals every v1 value of the account as v2 under the same data key. Values the server rewrites
 * meanwhile are written v2 by it; each batch re-reads its rows inside its transaction and skips
 * what is no longer v1. A password change or key rotation committed meanwhile stops the run
 * (409): the key in hand is no longer the account's; run it again.
 */
export async function resealAccount(deps: Deps, u: Unlocked, opts: ResealOptions = {}): Promise<ResealReport> {
  const sqlite = deps.db.$client;
  const batchRows = opts.batchRows ?? 500;
  const batchBytes = opts.batchBytes ?? 4 * 1024 * 1024;
  const pauseMs = opts.pauseMs ?? 120;
  const report: ResealReport = { resealed: {}, left: {}, unopened: [], batches: 0, longestBatchMs: 0, walTruncated: false };
  const items = plan(deps, u, report);
  let expectedWrap = u.passwordWrap;

  const check = () => {
    const row = sqlite.prepare('SELECT pw_wrapped_key AS w FROM users WHERE id = ?').get(u.userId) as { w: Buffer } | undefined;
    if (!row) throw new AppError('not_found', 'The account was deleted while reseal ran.');
    if (!row.w.equals(expectedWrap)) throw new AppError('conflict', "The account's password or key changed while reseal ran; run it again.");
  };
  // The password wrap goes first, in the first batch: from then on it is the one to expect.
  const passwordItem: Item | null = sealedVersion(u.passwordWrap) === 1
    ? {
        key: 'users.pw_wrapped_key',
        bytes: u.passwordWrap.length,
        run: (db) => {
          const wrap = wrapDataKey(u.kek, u.userId, PASSWORD_PURPOSE, u.dek);
          db.prepare('UPDATE users SET pw_wrapped_key = ? WHERE id = ?').run(wrap, u.userId);
          expectedWrap = wrap;
          return 'done';
        },
      }
    : null;
  if (passwordItem) items.unshift(passwordItem);

  let i = 0;
  while (i < items.length) {
    const batch: Item[] = [];
    let bytes = 0;
    while (i < items.length && batch.length < batchRows && (batch.length === 0 || bytes + items[i]!.bytes <= batchBytes)) {
      bytes += items[i]!.bytes;
      batch.push(items[i++]!);
    }
    const t0 = performance.now();
    const before = expectedWrap;
    try {
      // Bounded, so its statement journal stays in memory (db/client.ts smallWrites): no temporary
      // file holds page images of the v1 values.
      smallWrites(sqlite, () =>
        sqlite
          .transaction(() => {
            check();
            for (const item of batch) {
              const r = item.run(sqlite);
              if (r === 'done') report.resealed[item.key] = (report.resealed[item.key] ?? 0) + 1;
            }
          })
          .immediate(),
      );
    } catch (e) {
      expectedWrap = before; // the transaction rolled back, the re-made wrap with it
      throw e;
    }
    const ms = performance.now() - t0;
    report.batches++;
    report.longestBatchMs = Math.max(report.longestBatchMs, ms);
    await opts.onBatch?.({ batch: report.batches, done: i, total: items.length, ms });
    if (i < items.length) await new Promise((r) => setTimeout(r, pauseMs));
  }

  report.left = countLeft(sqlite, u.userId);
  report.walTruncated = await truncateWal(deps, pauseMs);
  return report;
}

/** The v1 values of the account, read once (a read transaction; the server goes on writing). */
function plan(deps: Deps, u: Unlocked, report: ResealReport): Item[] {
  const sqlite = deps.db.$client;
  const items: Item[] = [];
  const userId = u.userId;
  const unopened = (table: string, id: string): 'unopened' => {
    report.unopened.push({ table, id });
    return 'unopened';
  };
  sqlite.transaction(() => {
    for (const t of SEALED_TABLES) {
      const key = `${t.table}.${t.sealedCol}`;
      const rows = sqlite
        .prepare(`SELECT "${t.idCol}" AS id, length("${t.sealedCol}") AS n FROM "${t.table}" WHERE "${t.userCol}" = ? AND substr("${t.sealedCol}", 1, 1) = ${V1_BYTE}`)
        .all(userId) as { id: string; n: number }[];
      const get = `SELECT "${t.sealedCol}" AS v FROM "${t.table}" WHERE "${t.idCol}" = ? AND "${t.userCol}" = ?`;
      const put = `UPDATE "${t.table}" SET "${t.sealedCol}" = ? WHERE "${t.idCol}" = ? AND "${t.userCol}" = ?`;
      for (const r of rows) {
        items.push({
          key,
          bytes: r.n,
          run: (db) => {
            const v = (db.prepare(get).get(r.id, userId) as { v: Buffer | null } | undefined)?.v;
            if (!v || sealedVersion(v) !== 1) return 'skipped';
            const aad = rowAad(userId, t.table, r.id);
            let plain: Buffer;
            try {
              plain = open(u.dek, aad, v);
            } catch (e) {
              if (e instanceof SealError) return unopened(t.table, r.id);
              throw e;
            }
            db.prepare(put).run(seal(u.dek, aad, plain), r.id, userId);
            return 'done';
          },
        });
      }
    }

    // File chunks: the AAD carries the index and the last-chunk flag. Chunks of uploads still
    // streaming are the server's (written v2 by it) and left alone.
    const chunks = sqlite
      .prepare(
        `SELECT c.attachment_id AS id, c.idx AS idx, length(c.sealed) AS n FROM attachment_chunks c
          WHERE c.user_id = ? AND substr(c.sealed, 1, 1) = ${V1_BYTE}
            AND c.attachment_id NOT IN (SELECT id FROM pending_uploads WHERE user_id = ?)
          ORDER BY c.attachment_id, c.idx`,
      )
      .all(userId, userId) as { id: string; idx: number; n: number }[];
    for (const c of chunks) {
      items.push({
        key: 'attachment_chunks.sealed',
        bytes: c.n,
        run: (db) => {
          const row = db
            .prepare(
              `SELECT sealed AS v, idx = (SELECT max(idx) FROM attachment_chunks m WHERE m.attachment_id = c.attachment_id) AS last
                 FROM attachment_chunks c WHERE attachment_id = ? AND idx = ? AND user_id = ?`,
            )
            .get(c.id, c.idx, userId) as { v: Buffer; last: number } | undefined;
          if (!row || sealedVersion(row.v) !== 1) return 'skipped';
          const aad = chunkAad(userId, c.id, c.idx, row.last === 1);
          let plain: Buffer;
          try {
            plain = open(u.dek, aad, row.v);
          } catch (e) {
            if (e instanceof SealError) return unopened('attachment_chunks', `${c.id}#${c.idx}`);
            throw e;
          }
          db.prepare('UPDATE attachment_chunks SET sealed = ? WHERE attachment_id = ? AND idx = ? AND user_id = ?').run(seal(u.dek, aad, plain), c.id, c.idx, userId);
          return 'done';
        },
      });
    }

    // Import links' sealed source ids (their blind index stays: the key is the same).
    for (const l of v1Links(sqlite, userId)) {
      items.push({
        key: 'import_links.sealed',
        bytes: l.bytes,
        run: (db) => {
          const r = resealV1Link(db, u.dek, userId, l.id);
          return r === 'unopened' ? unopened('import_links', l.id) : r;
        },
      });
    }

    // Webhook targets: under the master key's unattended key (routers/webhooks/v1-targets.ts).
    const hooks = sqlite.prepare(`SELECT id, length(sealed_target) AS n FROM webhooks WHERE user_id = ? AND substr(sealed_target, 1, 1) = ${V1_BYTE}`).all(userId) as { id: string; n: number }[];
    for (const h of hooks) {
      items.push({
        key: 'webhooks.sealed_target',
        bytes: h.n,
        run: () => {
          try {
            return resealV1Target(deps, userId, h.id);
          } catch (e) {
            if (e instanceof SealError) return unopened('webhooks', h.id);
            throw e;
          }
        },
      });
    }
  })();
  return items;
}

/** v1 values of the account in the columns reseal cannot re-make. */
function countLeft(sqlite: Database.Database, userId: string): Record<string, number> {
  const left: Record<string, number> = {};
  for (const c of SEALED_COLUMNS) {
    if (c.reseal.by !== 'none') continue;
    const n = (
      sqlite
        .prepare(`SELECT count(*) AS n FROM "${c.table}" WHERE "${c.userCol}" = ? AND substr("${c.column}", ${c.offset + 1}, 1) = ${V1_BYTE}`)
        .get(userId) as { n: number }
    ).n;
    if (n) left[colName(c)] = n;
  }
  return left;
}

/**
 * docs/sealed-format.md "What a reseal leaves on disk": the WAL is checkpointed into the main file
 * and truncated, so no page image of a v1 value stays in it (secure_delete zeroes the space the
 * v1 cells left in the main file). A server reading at that moment holds the checkpoint back: it
 * is retried a few times (each waits up to the busy timeout).
 */
async function truncateWal(deps: Deps, pauseMs: number): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    // What flushDeleted (db/client.ts) runs, with its answer read: busy = 0 and no frame left.
    const r = deps.db.$client.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    if (r[0] && r[0].busy === 0 && r[0].log <= 0) return true;
    await new Promise((res) => setTimeout(res, pauseMs));
  }
  return false;
}
