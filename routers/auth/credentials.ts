// Credentials that carry a user's key (DECISIONS §3): issuing, resolving and revoking them.
// A credential is found by SHA-256 of its secret; the data key is unwrapped with a key derived
// from that secret, so only a request holding the credential can read the user's content.
import { and, eq, isNull, ne } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { webcrypto } from 'node:crypto';
import { fastSessionPayload } from './session-jwt.js';
import type Database from 'better-sqlite3';
import { credentials } from '../../db/schema/index.js';
import { instanceId, type Db, type Tx } from '../../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { credentialKek, unwrapDataKey, wrapDataKey } from '../../core/crypto/keywrap.js';
import { constantTimeEqual, fromB64u, hmacSha256, newSecret, sha256, toB64u } from '../../core/crypto/secrets.js';
import { ALL_SCOPES, expandScopes, type Scope } from '../../core/scopes.js';
import { SealError } from '../../core/crypto/seal.js';
import { assertOAuthLive, authenticateOAuth, revokeAllGrants } from '../oauth/tokens.js';
import { OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX, PAT_PREFIX, unauthorized, type CredentialKind, type Door, type Principal } from './principal.js';

// What callers have always imported from here; defined in ./principal.ts, which the OAuth tokens
// module shares, so the two modules do not import each other.
export { OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX, PAT_PREFIX, unauthorized, type CredentialKind, type Principal };

const PREFIXES = [PAT_PREFIX, OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX];
export const SESSION_AUDIENCE = 'cairn:first-party-session';

/**
 * DECISIONS §2: a session is bound to the instance (an id kept with its data), not to PUBLIC_URL
 * or the port, so changing either, or minting a session with the CLI under another environment,
 * logs nobody out. The signing key comes from the master key, which also stays with the data.
 */
export function sessionIssuer(deps: Deps): string {
  return `urn:cairn:instance:${instanceId(deps.db)}`;
}
const DAY = 86_400_000;

export function wrapPurpose(credentialId: string): string {
  return `credential:${credentialId}`;
}

type IssueInput = {
  userId: string;
  dek: Buffer;
  kind: Exclude<CredentialKind, 'oauth'>;
  scopes: readonly string[];
  expiresAt: number;
  sealedName?: Buffer | null;
  id?: string;
  /** The door it opens (DECISIONS §8); sessions are always `rest`. */
  audience?: Door;
};

/** Inserts a credential and returns its id and secret. The secret is never stored. */
export function insertCredential(tx: Tx | Db, deps: Deps, input: IssueInput): { id: string; secret: Buffer } {
  const id = input.id ?? newId();
  const secret = newSecret();
  const kek = credentialKek(secret, input.kind);
  tx.insert(credentials)
    .values({
      id,
      userId: input.userId,
      kind: input.kind,
      secretHash: sha256(secret),
      wrappedKey: wrapDataKey(kek, input.userId, wrapPurpose(id), input.dek),
      scopes: JSON.stringify(input.scopes),
      audience: input.kind === 'session' ? 'rest' : (input.audience ?? 'rest'),
      sealed: input.sealedName ?? null,
      createdAt: deps.clock(),
      expiresAt: input.expiresAt,
    })
    .run();
  return { id, secret };
}

export type NewSession = { id: string; userId: string; secret: Buffer; expiresAt: number };

/** Inserts a first-party session credential (synchronous, so it fits inside a transaction). */
export function insertSession(tx: Tx | Db, deps: Deps, userId: string, dek: Buffer): NewSession {
  const expiresAt = deps.clock() + LIMITS.session.lifeDays * DAY;
  const { id, secret } = insertCredential(tx, deps, { userId, dek, kind: 'session', scopes: ['*'], expiresAt });
  return { id, userId, secret, expiresAt };
}

const JWT_KEYS = new WeakMap<Buffer, Promise<webcrypto.CryptoKey>>();

/**
 * The session key as a WebCrypto key, imported once per server key. jose 6 runs on WebCrypto: given
 * the raw bytes it imports them on every sign and verify (~13-24 µs of CPU a session request,
 * measured; docs/performance.md "Session authentication"). Not extractable; like the bytes, it is
 * the server's key, not a user's.
 */
function jwtKey(raw: Buffer): Promise<webcrypto.CryptoKey> {
  let key = JWT_KEYS.get(raw);
  if (!key) {
    key = webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    JWT_KEYS.set(raw, key);
  }
  return key;
}

/** The session's wire form: a JWT (jose, HS256 under the server key) that carries the secret. */
export async function sessionToken(deps: Deps, s: NewSession): Promise<{ token: string; expiresAt: string }> {
  const token = await new SignJWT({ sid: s.id, sk: toB64u(s.secret) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(s.userId)
    .setIssuer(sessionIssuer(deps))
    .setAudience(SESSION_AUDIENCE)
    .setIssuedAt(Math.floor(deps.clock() / 1000))
    .setExpirationTime(Math.floor(s.expiresAt / 1000))
    .sign(await jwtKey(deps.keys.jwt));
  return { token, expiresAt: new Date(s.expiresAt).toISOString() };
}

export async function issueSession(deps: Deps, userId: string, dek: Buffer): Promise<{ token: string; expiresAt: string }> {
  return sessionToken(deps, insertSession(deps.db, deps, userId, dek));
}

export function patToken(secret: Buffer): string {
  return PAT_PREFIX + toB64u(secret);
}

type Presented = { kind: CredentialKind; secret: Buffer; secretHash?: Buffer | undefined; claimedUser?: string; claimedId?: string };

/** base64url in its one canonical spelling (no padding, unused trailing bits zero), or null. */
function canonicalB64u(part: string): string | null {
  const bytes = fromB64u(part);
  if (!bytes) return null;
  return toB64u(bytes);
}

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i;

/**
 * A presented `Authorization: Bearer …` credential, parsed once per request (issue 12): the
 * canonical token, whether the presented spelling was canonical, the rate-limit subject, and for a
 * personal token its secret bytes and their SHA-256 (the lookup hash, which is also its bucket
 * subject: one SHA-256 per request).
 */
export type BearerCredential = {
  token: string;
  canonical: boolean;
  /** Rate-limit subject (base64url of a SHA-256): the same for every spelling of one credential. */
  subject: string;
  /** Personal tokens: the decoded secret and SHA-256 of it. */
  patSecret?: Buffer | undefined;
  patSecretHash?: Buffer | undefined;
};

/**
 * The token of an `Authorization: Bearer …` header in canonical form: every base64url part
 * re-encoded (issue 11.4: the unused bits of a last character, or another spelling, must not make
 * another credential). `canonical` is false when the presented spelling differs; such a token is
 * refused, but still counted against the bucket of the credential it spells.
 */
export function parseBearerHeader(authorization: string | undefined): BearerCredential | null {
  const m = authorization ? BEARER.exec(authorization) : null;
  if (!m) return null;
  const presented = m[1]!;
  const prefix = PREFIXES.find((p) => presented.startsWith(p));
  if (prefix) {
    const bytes = fromB64u(presented.slice(prefix.length));
    if (!bytes) return { token: presented, canonical: false, subject: sha256(presented).toString('base64url') };
    const token = prefix + toB64u(bytes);
    // The subject of a prefixed token is SHA-256 of its secret bytes: every spelling of the token
    // decodes to the same bytes; for a personal token the lookup needs this hash anyway.
    const hash = sha256(bytes);
    const canonical = token === presented;
    if (prefix !== PAT_PREFIX) return { token, canonical, subject: hash.toString('base64url') };
    return { token, canonical, subject: hash.toString('base64url'), patSecret: bytes, patSecretHash: hash };
  }
  const parts = presented.split('.');
  if (parts.length === 3) {
    const canon = parts.map(canonicalB64u);
    if (canon.every((c) => c !== null)) {
      const token = canon.join('.');
      return { token, canonical: token === presented, subject: sha256(token).toString('base64url') };
    }
  }
  return { token: presented, canonical: false, subject: sha256(presented).toString('base64url') };
}

export function canonicalBearer(authorization: string | undefined): { token: string; canonical: boolean } | null {
  const b = parseBearerHeader(authorization);
  return b && { token: b.token, canonical: b.canonical };
}

/** The rate-limit subject of a presented credential (the same for every spelling of it). */
export function credentialBucketKey(authorization: string | undefined): string | undefined {
  return parseBearerHeader(authorization)?.subject;
}

async function parseBearer(deps: Deps, bearer: BearerCredential): Promise<Presented | null> {
  const token = bearer.token;
  if (token.startsWith(PAT_PREFIX)) {
    const secret = bearer.patSecret;
    return secret && secret.length === 32 ? { kind: 'pat', secret, secretHash: bearer.patSecretHash } : null;
  }
  if (token.startsWith('eyJ')) {
    try {
      // One HMAC for the sessions this server minted (routers/auth/session-jwt.ts); jose for the rest.
      const issuer = sessionIssuer(deps);
      const now = deps.clock();
      const payload =
        fastSessionPayload(token, deps.keys.jwt, issuer, SESSION_AUDIENCE, now) ??
        (await jwtVerify(token, await jwtKey(deps.keys.jwt), { issuer, audience: SESSION_AUDIENCE, algorithms: ['HS256'], currentDate: new Date(now) })).payload;
      const secret = typeof payload.sk === 'string' ? fromB64u(payload.sk) : null;
      if (!secret || secret.length !== 32 || toB64u(secret) !== payload.sk || typeof payload.sid !== 'string' || typeof payload.sub !== 'string' || !payload.sub) return null;
      return { kind: 'session', secret, claimedUser: payload.sub, claimedId: payload.sid };
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return null;
      throw e;
    }
  }
  return null;
}

const TOUCH_EVERY_MS = 60_000;

type CredentialRow = {
  id: string;
  userId: string;
  kind: CredentialKind;
  wrappedKey: Buffer | null;
  scopes: string;
  audience: Door;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
};

/** The credential lookup by secret hash: one raw prepared statement (no query builder per request). */
function credentialByHash(deps: Deps): Database.Statement<[Buffer], CredentialRow> {
  return prepared(deps.db, 'credentials.byHash.raw', (db) =>
    db.$client.prepare<[Buffer], CredentialRow>(
      `SELECT id, user_id AS userId, kind, wrapped_key AS wrappedKey, scopes, audience, expires_at AS expiresAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt
         FROM credentials WHERE secret_hash = ?`,
    ),
  );
}

const DOOR_PATHS: Record<Door, string> = { rest: '/v1 and /trpc', dav: '/dav (an app password)', mcp: '/mcp' };

let authentications = 0;

/** How many times `authenticate` has run in this process (the tests count a batch's). */
export function authenticationCount(): number {
  return authentications;
}

/**
 * Resolves `Authorization: Bearer …` to a principal holding the unwrapped data key. `parsed`: the
 * header already parsed by the rate-limit step of this request (the same header), so it is parsed
 * and hashed once. `audience`: the resource being called (spec §5.2 rule 3); OAuth access tokens
 * minted for another are refused. Every /v1 and /trpc route is the REST resource, PUBLIC_URL
 * exactly (DECISIONS §1). `door`: the door being called (DECISIONS §8); sessions and personal
 * tokens created for another door are refused.
 */
export async function authenticate(
  deps: Deps,
  authorization: string | undefined,
  parsed?: BearerCredential | null,
  audience: string = deps.config.publicUrl,
  door: Door = 'rest',
): Promise<Principal> {
  authentications++;
  if (!authorization) throw unauthorized(deps, 'A bearer credential is required.', false);
  const bearer = parsed === undefined ? parseBearerHeader(authorization) : parsed;
  if (!bearer) throw unauthorized(deps, 'The Authorization header must be "Bearer <token>".', true);
  if (!bearer.canonical) throw unauthorized(deps, 'The credential is not valid.', true);
  if (bearer.token.startsWith(OAUTH_ACCESS_PREFIX)) return authenticateOAuth(deps, bearer.token, audience);
  const presented = await parseBearer(deps, bearer);
  if (!presented) throw unauthorized(deps, 'The credential is not valid.', true);

  const row = credentialByHash(deps).get(presented.secretHash ?? sha256(presented.secret));
  const now = deps.clock();
  if (
    !row ||
    row.kind !== presented.kind ||
    (presented.claimedId !== undefined && (row.id !== presented.claimedId || row.userId !== presented.claimedUser)) ||
    row.revokedAt != null ||
    !row.wrappedKey
  ) {
    throw unauthorized(deps, 'The credential is not valid.', true);
  }
  if (row.expiresAt <= now) throw unauthorized(deps, 'The credential has expired.', true);
  // DECISIONS §8: one credential, one door. Refused before its key is unwrapped.
  if (row.audience !== door) throw unauthorized(deps, `This token was created for ${DOOR_PATHS[row.audience]} and is not accepted here.`, true);

  let dek: Buffer;
  try {
    dek = unwrapDataKey(credentialKek(presented.secret, row.kind), row.userId, wrapPurpose(row.id), row.wrappedKey);
  } catch (e) {
    if (e instanceof SealError) throw unauthorized(deps, 'The credential is not valid.', true);
    throw e;
  }
  if (row.lastUsedAt == null || now - row.lastUsedAt >= TOUCH_EVERY_MS) {
    deps.db.update(credentials).set({ lastUsedAt: now }).where(eq(credentials.id, row.id)).run();
  }
  const granted = JSON.parse(row.scopes) as string[];
  return {
    userId: row.userId,
    credentialId: row.id,
    kind: row.kind,
    granted: row.kind === 'session' ? [...ALL_SCOPES] : granted,
    scopes: row.kind === 'session' ? ALL_SCOPES : expandScopes(granted),
    dek,
    expiresAt: row.expiresAt,
  };
}

/**
 * Spec §5.4: disconnects every token, key, session and grant of the user. Sessions are deleted;
 * personal tokens keep their row (for the daily creation count) but lose their wrapped key.
 */
export function revokeAllCredentials(tx: Tx | Db, userId: string, now: number): void {
  revokeAllGrants(tx, userId, now);
  tx.update(credentials)
    .set({ wrappedKey: null, revokedAt: now })
    .where(and(eq(credentials.userId, userId), eq(credentials.kind, 'pat'), isNull(credentials.revokedAt)))
    .run();
  tx.delete(credentials).where(and(eq(credentials.userId, userId), ne(credentials.kind, 'pat'))).run();
}

export function deleteCredential(tx: Tx | Db, userId: string, credentialId: string): void {
  tx.delete(credentials).where(and(eq(credentials.userId, userId), eq(credentials.id, credentialId))).run();
}

/**
 * Inside a write's transaction: the credential that authenticated this request still stands
 * (issue 10: credential changes are serialised). A password change, a key rotation, revoke-all,
 * a logout or a revocation that committed while this request was on its way ends it; writing on
 * would seal content, or wrap a key, under a data key that is no longer the user's.
 */
export function assertCredentialLive(deps: Deps, p: Principal): void {
  if (p.kind === 'oauth') return assertOAuthLive(deps, p);
  const q = prepared(deps.db, 'credentials.liveById.raw', (db) =>
    db.$client.prepare<[string, string], { revokedAt: number | null; wrappedKey: Buffer | null; expiresAt: number }>(
      'SELECT revoked_at AS revokedAt, wrapped_key AS wrappedKey, expires_at AS expiresAt FROM credentials WHERE id = ? AND user_id = ?',
    ),
  );
  const row = q.get(p.credentialId, p.userId);
  if (!row || row.revokedAt != null || !row.wrappedKey || row.expiresAt <= deps.clock()) {
    throw unauthorized(deps, 'The credential was revoked or replaced while this request ran.', true);
  }
}

/** Whether the credential still stands (after a failure to open content: was the key replaced?). */
export function credentialIsLive(deps: Deps, p: Principal): boolean {
  try {
    assertCredentialLive(deps, p);
    return true;
  } catch {
    return false;
  }
}

/**
 * A presented `Authorization: Basic …` header (the CalDAV door, issue 30 item 1): the user name
 * (the account's email) and, when the password is a personal token in its canonical spelling, that
 * token parsed as `parseBearerHeader` would (its rate-limit subject and lookup hash). Anything else
 * as the password (an account password, an OAuth or session token) leaves `bearer` null.
 */
export type BasicCredential = { email: string; bearer: BearerCredential | null };

const BASIC = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i;

export function parseBasicHeader(authorization: string | undefined): BasicCredential | null {
  const m = authorization ? BASIC.exec(authorization) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const password = decoded.slice(colon + 1);
  const bearer = password.startsWith(PAT_PREFIX) ? parseBearerHeader(`Bearer ${password}`) : null;
  return { email: decoded.slice(0, colon), bearer: bearer?.patSecret ? bearer : null };
}

/**
 * HTTP Basic for the CalDAV door (issue 30 item 1, docs/caldav.md "App passwords"): the password is
 * a personal token created for the `dav` door, resolved exactly as `authenticate` resolves it with
 * door `dav` (revoked, expired, rotated-away and other doors' tokens refused before any unwrap), and
 * the user name must be its owner's email (case-insensitive; compared as the HMAC index under the
 * server key, in constant time). Account passwords are never accepted here: a scrypt run per
 * request would be a denial of service. The caller answers a 401 with the Basic challenge.
 */
export async function authenticateBasic(deps: Deps, basic: BasicCredential | null): Promise<Principal> {
  if (!basic) throw unauthorized(deps, 'HTTP Basic credentials are required: your email and an app password.', false);
  if (!basic.bearer || !basic.bearer.canonical) throw unauthorized(deps, 'The password must be an app password (a personal token created for CalDAV).', true);
  const principal = await authenticate(deps, `Bearer ${basic.bearer.token}`, basic.bearer, deps.config.publicUrl, 'dav');
  const row = prepared(deps.db, 'users.emailIndexById.raw', (db) => db.$client.prepare<[string], { emailIndex: Buffer }>('SELECT email_index AS emailIndex FROM users WHERE id = ?')).get(principal.userId);
  const presented = hmacSha256(deps.keys.emailIndex, basic.email.trim().normalize('NFC').toLowerCase());
  if (!row || !constantTimeEqual(row.emailIndex, presented)) throw unauthorized(deps, 'The user name is not the email of the app password\'s account.', true);
  return principal;
}
