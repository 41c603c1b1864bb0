// First-party accounts and sessions (DECISIONS §2, spec §5.4). Transport-agnostic.
import { and, eq } from 'drizzle-orm';
import { users } from '../../db/schema/index.js';
import { resealUser } from '../../db/sealed.js';
import { flushDeleted, type Tx } from '../../db/client.js';
import type { Deps } from '../deps.js';
import { AppError, invalid } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { hmacSha256 } from '../../core/crypto/secrets.js';
import { newDataKey, unwrapDataKey, wrapDataKey } from '../../core/crypto/keywrap.js';
import { decoyRecord, hashPassword, verifyPassword, type PasswordRecord } from '../../core/crypto/password.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { resealV1Targets } from '../webhooks/v1-targets.js';
import { rekeyImportLinks } from '../imports/links.js';
import {
  assertCredentialLive,
  deleteCredential,
  insertSession,
  issueSession,
  revokeAllCredentials,
  sessionToken,
  type Principal,
} from './credentials.js';

const PASSWORD_PURPOSE = 'password';

export function normaliseEmail(email: string): string {
  return email.trim().normalize('NFC').toLowerCase();
}

function emailIndex(deps: Deps, email: string): Buffer {
  return hmacSha256(deps.keys.emailIndex, normaliseEmail(email));
}

type UserRow = typeof users.$inferSelect;

function recordOf(row: UserRow): PasswordRecord {
  return { salt: row.pwSalt, params: JSON.parse(row.pwParams) as PasswordRecord['params'], verifier: row.pwVerifier };
}

function sealUser(dek: Buffer, userId: string, email: string): Buffer {
  return sealJson(dek, rowAad(userId, 'users', userId), { email });
}

export function userEmail(dek: Buffer, row: Pick<UserRow, 'id' | 'sealed'>): string {
  return openJson<{ email: string }>(dek, rowAad(row.id, 'users', row.id), row.sealed).email;
}

export async function register(deps: Deps, input: { email: string; password: string }) {
  if (!deps.config.allowSignup) throw new AppError('forbidden', 'Sign-up is turned off on this server.');
  const email = normaliseEmail(input.email);
  const index = emailIndex(deps, email);
  const taken = () => new AppError('conflict', 'An account with this email already exists.', { pointer: '/email' });
  if (deps.db.select({ id: users.id }).from(users).where(eq(users.emailIndex, index)).get()) throw taken();
  const { record, kek } = await hashPassword(input.password, deps.config.scryptLogN);
  const userId = newId();
  const dek = newDataKey();
  const now = deps.clock();
  const session = deps.db.transaction(
    (tx) => {
      // Issue 10: a twin registration may have committed while this one hashed the password.
      if (tx.select({ id: users.id }).from(users).where(eq(users.emailIndex, index)).get()) throw taken();
      tx.insert(users)
        .values({
          id: userId,
          emailIndex: index,
          sealed: sealUser(dek, userId, email),
          pwSalt: record.salt,
          pwParams: JSON.stringify(record.params),
          pwVerifier: record.verifier,
          pwWrappedKey: wrapDataKey(kek, userId, PASSWORD_PURPOSE, dek),
          createdAt: now,
          updatedAt: now,
        })
        .run();
      return insertSession(tx, deps, userId, dek);
    },
    { behavior: 'immediate' },
  );
  DECOY_COST.delete(deps.db);
  return { user: { id: userId, email }, ...(await sessionToken(deps, session)) };
}

/**
 * The cost an unknown email's decoy check spends (issue 11.7): the scrypt cost most existing
 * accounts have, so a wrong email and a wrong password take the same time even while accounts
 * still carry an older CAIRN_SCRYPT_LOG_N (they move to the current one as they log in). Cached per
 * database; refreshed after a rehash.
 */
const DECOY_COST = new WeakMap<object, number>();

export function decoyLogN(deps: Deps): number {
  let logN = DECOY_COST.get(deps.db);
  if (logN === undefined) {
    const common = deps.db.$client.prepare('SELECT pw_params AS p FROM users GROUP BY pw_params ORDER BY count(*) DESC LIMIT 1').get() as { p: string } | undefined;
    logN = common ? (JSON.parse(common.p) as PasswordRecord['params']).logN : deps.config.scryptLogN;
    DECOY_COST.set(deps.db, logN);
  }
  return logN;
}

/** The per-account subject of the wrong-password bucket: the email's index, known account or not. */
export function accountKeyForEmail(deps: Deps, email: string): string {
  return emailIndex(deps, email).toString('base64url');
}

export function accountKeyForUser(deps: Deps, userId: string): string {
  const row = deps.db.select({ emailIndex: users.emailIndex }).from(users).where(eq(users.id, userId)).get();
  return row ? row.emailIndex.toString('base64url') : `user:${userId}`;
}

/** A wrong password and an unknown email answer alike, after the same scrypt work. */
export async function login(deps: Deps, input: { email: string; password: string }) {
  const row = deps.db.select().from(users).where(eq(users.emailIndex, emailIndex(deps, input.email))).get();
  const kek = await verifyPassword(input.password, row ? recordOf(row) : decoyRecord(decoyLogN(deps)));
  if (!row || !kek) throw new AppError('unauthorized', 'The email or password is wrong.');
  const dek = unwrapDataKey(kek, row.id, PASSWORD_PURPOSE, row.pwWrappedKey);
  if (recordOf(row).params.logN !== deps.config.scryptLogN) await rehash(deps, row, input.password, dek);
  return issueSession(deps, row.id, dek);
}

/**
 * Issue 11.7: an account hashed at another cost than CAIRN_SCRYPT_LOG_N is re-hashed at the current
 * cost on a successful login (the data key re-wrapped under the new password key), unless its
 * password record changed meanwhile.
 */
async function rehash(deps: Deps, row: UserRow, password: string, dek: Buffer): Promise<void> {
  const { record, kek } = await hashPassword(password, deps.config.scryptLogN);
  deps.db.transaction(
    (tx) => {
      tx.update(users)
        .set({
          pwSalt: record.salt,
          pwParams: JSON.stringify(record.params),
          pwVerifier: record.verifier,
          pwWrappedKey: wrapDataKey(kek, row.id, PASSWORD_PURPOSE, dek),
          updatedAt: deps.clock(),
        })
        .where(and(eq(users.id, row.id), eq(users.pwVerifier, row.pwVerifier), eq(users.pwWrappedKey, row.pwWrappedKey)))
        .run();
    },
    { behavior: 'immediate' },
  );
  DECOY_COST.delete(deps.db);
  flushDeleted(deps.db);
}

export function logout(deps: Deps, principal: Principal): void {
  deleteCredential(deps.db, principal.userId, principal.credentialId);
}

/** Verifies the account's current password; returns the row it was checked against and the password KEK. */
async function checkPassword(deps: Deps, userId: string, password: string, pointer: string): Promise<{ row: UserRow; kek: Buffer }> {
  const row = deps.db.select().from(users).where(eq(users.id, userId)).get();
  if (!row) throw new AppError('unauthorized', 'The account no longer exists.');
  const kek = await verifyPassword(password, recordOf(row));
  if (!kek) throw invalid(pointer, 'The password is wrong.');
  return { row, kek };
}

/**
 * Issue 10: a credential change re-reads, inside its IMMEDIATE transaction, what it decided on
 * while it awaited password hashing. Its own session must still stand (a concurrent password
 * change, rotation or revoke-all ends it: 401), and the password record must be the one it
 * verified (else 409): it never wraps a data key that another operation has since replaced.
 */
function assertUnchanged(deps: Deps, tx: Tx, principal: Principal, checked: UserRow): void {
  assertCredentialLive(deps, principal);
  const now = tx.select({ pwVerifier: users.pwVerifier, pwWrappedKey: users.pwWrappedKey }).from(users).where(eq(users.id, principal.userId)).get();
  if (!now || !now.pwVerifier.equals(checked.pwVerifier) || !now.pwWrappedKey.equals(checked.pwWrappedKey)) {
    throw new AppError('conflict', "The account's password or key changed while this request ran; sign in again and retry.");
  }
}

/** Spec §5.4: a password change disconnects everything; the caller gets a fresh session. */
export async function changePassword(deps: Deps, principal: Principal, input: { currentPassword: string; newPassword: string }) {
  const { row } = await checkPassword(deps, principal.userId, input.currentPassword, '/currentPassword');
  const { record, kek } = await hashPassword(input.newPassword, deps.config.scryptLogN);
  const now = deps.clock();
  const session = deps.db.transaction(
    (tx) => {
      assertUnchanged(deps, tx, principal, row);
      tx.update(users)
        .set({
          pwSalt: record.salt,
          pwParams: JSON.stringify(record.params),
          pwVerifier: record.verifier,
          pwWrappedKey: wrapDataKey(kek, principal.userId, PASSWORD_PURPOSE, principal.dek),
          updatedAt: now,
        })
        .where(eq(users.id, principal.userId))
        .run();
      revokeAllCredentials(tx, principal.userId, now);
      return insertSession(tx, deps, principal.userId, principal.dek);
    },
    { behavior: 'immediate' },
  );
  flushDeleted(deps.db);
  return sessionToken(deps, session);
}

/**
 * Spec §5.4: an encryption-key change. A new data key re-seals every row of the user in one
 * transaction; every credential is disconnected (their wraps hold the old key anyway).
 */
export async function rotateKey(deps: Deps, principal: Principal, input: { password: string }) {
  const { row, kek } = await checkPassword(deps, principal.userId, input.password, '/password');
  const newDek = newDataKey();
  const now = deps.clock();
  const session = deps.db.transaction(
    (tx) => {
      assertUnchanged(deps, tx, principal, row);
      resealUser(deps.db.$client, principal.userId, principal.dek, newDek);
      // Import links' blind indexes are written again under the new key (their sealed source ids
      // opened with the old one), so a re-run of an import still finds what it made.
      rekeyImportLinks(deps.db.$client, principal.userId, principal.dek, newDek);
      // Issue 29: webhook targets (under a server key) still in format v1 become v2 too, so a
      // rotation leaves nothing of the account in v1 (docs/sealed-format.md).
      resealV1Targets(deps, principal.userId);
      tx.update(users)
        .set({ pwWrappedKey: wrapDataKey(kek, principal.userId, PASSWORD_PURPOSE, newDek), updatedAt: now })
        .where(eq(users.id, principal.userId))
        .run();
      revokeAllCredentials(tx, principal.userId, now);
      return insertSession(tx, deps, principal.userId, newDek);
    },
    { behavior: 'immediate' },
  );
  flushDeleted(deps.db);
  return sessionToken(deps, session);
}

export function revokeAll(deps: Deps, principal: Principal): void {
  revokeAllCredentials(deps.db, principal.userId, deps.clock());
}
