// OAuth grants and their tokens (spec §5.2 rules 3, 5, 7, 8; DECISIONS §3, §7).
// Each token is 32 random bytes, found by SHA-256; the user's data key is wrapped under a key
// derived from it (HKDF), so an OAuth token carries the key like every other credential. The
// unwrapped key never leaves the request that unwrapped it.
import { and, eq, isNull, isNotNull, lte, or, sql } from 'drizzle-orm';
import { oauthGrants, oauthTokens } from '../../db/schema/index.js';
import { flushDeleted, type Db, type Tx } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';
import type { Deps } from '../deps.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import { credentialKek, unwrapDataKey, wrapDataKey } from '../../core/crypto/keywrap.js';
import { fromB64u, newSecret, sha256, toB64u } from '../../core/crypto/secrets.js';
import { SealError } from '../../core/crypto/seal.js';
import { expandScopes } from '../../core/scopes.js';
import { OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX, unauthorized, type Principal } from '../auth/principal.js';

const DAY = 86_400_000;

/** Lifetimes the spec leaves open (§5.2 rule 9), decided in docs/oauth.md. */
export const OAUTH_TTL = {
  accessMs: 3_600_000,
  codeMs: 60_000,
  /** A pending request (its nine-digit code): 5 minutes, short for approval phishing (issue 28 item 1). */
  requestMs: 5 * 60_000,
  graceMs: LIMITS.refresh.graceSeconds * 1000,
  grantMs: LIMITS.refresh.grantLifeDays * DAY,
} as const;

export const tokenKind = (kind: 'access' | 'refresh' | 'code') => `oauth_${kind}`;
export const tokenPurpose = (id: string) => `oauth:${id}`;

/** A protocol error of the token endpoint (RFC 6749 §5.2), answered as JSON by rest/oauth.ts. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

type Grant = typeof oauthGrants.$inferSelect;

export type MintedPair = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string; scope: string };

/** Inserts an access token and a refresh token for the grant, each with its own wrap of the key. */
export function mintPair(tx: Tx | Db, deps: Deps, grant: Grant, dek: Buffer, predecessorId: string | null): MintedPair {
  const now = deps.clock();
  const access = newSecret();
  const refresh = newSecret();
  const accessId = newId();
  const refreshId = newId();
  const accessExpires = Math.min(now + OAUTH_TTL.accessMs, grant.expiresAt);
  tx.insert(oauthTokens)
    .values([
      {
        id: accessId,
        grantId: grant.id,
        userId: grant.userId,
        kind: 'access',
        secretHash: sha256(access),
        wrappedKey: wrapDataKey(credentialKek(access, tokenKind('access')), grant.userId, tokenPurpose(accessId), dek),
        audience: grant.resource,
        createdAt: now,
        expiresAt: accessExpires,
      },
      {
        id: refreshId,
        grantId: grant.id,
        userId: grant.userId,
        kind: 'refresh',
        secretHash: sha256(refresh),
        wrappedKey: wrapDataKey(credentialKek(refresh, tokenKind('refresh')), grant.userId, tokenPurpose(refreshId), dek),
        audience: grant.resource,
        predecessorId,
        createdAt: now,
        expiresAt: grant.expiresAt,
      },
    ])
    .run();
  return {
    access_token: OAUTH_ACCESS_PREFIX + toB64u(access),
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.round((accessExpires - now) / 1000)),
    refresh_token: OAUTH_REFRESH_PREFIX + toB64u(refresh),
    scope: (JSON.parse(grant.scopes) as string[]).join(' '),
  };
}

function secretOf(token: string, prefix: string): Buffer | null {
  if (!token.startsWith(prefix)) return null;
  const s = fromB64u(token.slice(prefix.length));
  return s && s.length === 32 && toB64u(s) === token.slice(prefix.length) ? s : null;
}

function grantById(deps: Deps, id: string): Grant | undefined {
  return prepared(deps.db, 'oauth.grantById', (db) => db.select().from(oauthGrants).where(eq(oauthGrants.id, sql.placeholder('id'))).prepare()).get({ id });
}

/** The /v1 answer for a grant that no longer stands (spec §7), or null. */
function grantRefusal(deps: Deps, grant: Grant | undefined): AppError | null {
  if (!grant) return unauthorized(deps, 'The credential is not valid.', true);
  if (grant.revokedAt != null) return new AppError('grant_revoked', 'The grant behind this token was revoked; send the user through approval again.', { headers: wwwAuth(deps, 'The grant was revoked.') });
  if (grant.expiresAt <= deps.clock()) return new AppError('grant_expired', 'The grant is older than 365 days and needs approval again.', { headers: wwwAuth(deps, 'The grant expired.') });
  return null;
}

function wwwAuth(deps: Deps, detail: string): Record<string, string> {
  return unauthorized(deps, detail, true).headers;
}

const TOUCH_EVERY_MS = 60_000;

/** An OAuth access token at a resource (credentials.ts `authenticate`). */
export function authenticateOAuth(deps: Deps, token: string, audience: string): Principal {
  const secret = secretOf(token, OAUTH_ACCESS_PREFIX);
  if (!secret) throw unauthorized(deps, 'The credential is not valid.', true);
  const row = prepared(deps.db, 'oauth.tokenByHash', (db) => db.select().from(oauthTokens).where(eq(oauthTokens.secretHash, sql.placeholder('hash'))).prepare()).get({ hash: sha256(secret) });
  if (!row || row.kind !== 'access') throw unauthorized(deps, 'The credential is not valid.', true);
  const grant = grantById(deps, row.grantId);
  const refusal = grantRefusal(deps, grant);
  if (refusal) throw refusal;
  // Spec §5.2 rule 3: minted for one audience, refused at every other.
  if (row.audience !== audience) throw unauthorized(deps, 'The token was minted for another resource.', true);
  const now = deps.clock();
  if (row.expiresAt <= now) throw unauthorized(deps, 'The credential has expired.', true);
  if (!row.wrappedKey) throw unauthorized(deps, 'The credential is not valid.', true);
  let dek: Buffer;
  try {
    dek = unwrapDataKey(credentialKek(secret, tokenKind('access')), row.userId, tokenPurpose(row.id), row.wrappedKey);
  } catch (e) {
    if (e instanceof SealError) throw unauthorized(deps, 'The credential is not valid.', true);
    throw e;
  }
  if (grant!.lastUsedAt == null || now - grant!.lastUsedAt >= TOUCH_EVERY_MS) {
    deps.db.update(oauthGrants).set({ lastUsedAt: now }).where(eq(oauthGrants.id, grant!.id)).run();
  }
  const granted = JSON.parse(grant!.scopes) as string[];
  return { userId: row.userId, credentialId: row.id, kind: 'oauth', granted, scopes: expandScopes(granted), dek, expiresAt: row.expiresAt, grantId: grant!.id };
}

/** Inside a write's transaction: the access token and its grant still stand. */
export function assertOAuthLive(deps: Deps, p: Principal): void {
  const row = deps.db.select({ wrappedKey: oauthTokens.wrappedKey, grantId: oauthTokens.grantId, expiresAt: oauthTokens.expiresAt }).from(oauthTokens).where(and(eq(oauthTokens.id, p.credentialId), eq(oauthTokens.userId, p.userId))).get();
  const refusal = grantRefusal(deps, row ? grantById(deps, row.grantId) : undefined);
  if (refusal) throw refusal;
  if (!row?.wrappedKey || row.expiresAt <= deps.clock()) throw unauthorized(deps, 'The credential was revoked or replaced while this request ran.', true);
}

/** Ends one grant: revoked, and every wrap of its tokens dropped (rows stay: `grant_revoked`). */
export function revokeGrant(tx: Tx | Db, grantId: string, now: number): void {
  tx.update(oauthGrants).set({ revokedAt: now }).where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt))).run();
  tx.update(oauthTokens).set({ wrappedKey: null }).where(eq(oauthTokens.grantId, grantId)).run();
}

/** Spec §5.4: every grant of the user ends (and so does every code waiting for redemption). */
export function revokeAllGrants(tx: Tx | Db, userId: string, now: number): void {
  tx.update(oauthGrants).set({ revokedAt: now }).where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt))).run();
  tx.update(oauthTokens).set({ wrappedKey: null }).where(and(eq(oauthTokens.userId, userId), isNotNull(oauthTokens.wrappedKey))).run();
  revokeUserCodes(tx, userId);
}

// Set by routers/oauth/model.ts (it owns the request table); avoids a module cycle.
let revokeUserCodes: (tx: Tx | Db, userId: string) => void = () => {};
export function setRevokeUserCodes(fn: typeof revokeUserCodes): void {
  revokeUserCodes = fn;
}

/**
 * grant_type=refresh_token (spec §5.2 rule 7). One IMMEDIATE transaction: parallel uses of one
 * token are serialised, so exactly one rotates it; the others find it rotated and are answered by
 * the grace rule (a fresh pair from the newest) within 30 s, or are reuse.
 */
export function refreshGrant(deps: Deps, clientId: string, refreshToken: string, requested: { scope?: string | undefined; resource?: string | undefined }): MintedPair {
  const secret = secretOf(refreshToken, OAUTH_REFRESH_PREFIX);
  if (!secret) throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
  const now = deps.clock();
  let reuse = false;
  const out = deps.db.transaction(
    (tx) => {
      const row = tx.select().from(oauthTokens).where(eq(oauthTokens.secretHash, sha256(secret))).get();
      if (!row || row.kind !== 'refresh') throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
      const grant = tx.select().from(oauthGrants).where(eq(oauthGrants.id, row.grantId)).get();
      if (!grant || grant.clientId !== clientId) throw new OAuthError('invalid_grant', 'The refresh token was not issued to this client.');
      if (grant.revokedAt != null) throw new OAuthError('invalid_grant', 'grant_revoked: the grant was revoked; send the user through approval again.');
      if (grant.expiresAt <= now) throw new OAuthError('invalid_grant', 'grant_expired: the grant is older than 365 days; send the user through approval again.');
      // Bound to the grant's resource and scopes: `scope`, when sent, must be the granted list
      // (RFC 6749 §6 forbids widening; Cairn does not narrow per token either: docs/oauth.md).
      if (requested.resource !== undefined && requested.resource !== grant.resource) throw new OAuthError('invalid_target', 'The refresh token is bound to another resource.');
      const grantedScopes = JSON.parse(grant.scopes) as string[];
      if (requested.scope !== undefined) {
        const asked = new Set(requested.scope.split(' ').filter(Boolean));
        if (asked.size !== grantedScopes.length || grantedScopes.some((s) => !asked.has(s))) {
          throw new OAuthError('invalid_scope', `A refresh keeps the granted scopes (${grantedScopes.join(' ')}); omit scope or send exactly those.`);
        }
      }
      const newest = tx
        .select()
        .from(oauthTokens)
        .where(and(eq(oauthTokens.grantId, grant.id), eq(oauthTokens.kind, 'refresh'), isNull(oauthTokens.rotatedAt)))
        .get();
      let predecessorId: string;
      if (row.rotatedAt == null && row.wrappedKey) {
        predecessorId = row.id;
        tx.update(oauthTokens).set({ rotatedAt: now }).where(eq(oauthTokens.id, row.id)).run();
      } else if (row.rotatedAt != null && row.wrappedKey && now - row.rotatedAt <= OAUTH_TTL.graceMs && newest && newest.predecessorId === row.id) {
        // The immediate predecessor within the grace: a lost response. A fresh pair; the newest
        // token is superseded (its later use is reuse) and the chain continues from the new one.
        predecessorId = row.id;
        tx.update(oauthTokens).set({ rotatedAt: now, wrappedKey: null }).where(eq(oauthTokens.id, newest.id)).run();
      } else {
        reuse = true;
        revokeGrant(tx, grant.id, now);
        return null;
      }
      let dek: Buffer;
      try {
        dek = unwrapDataKey(credentialKek(secret, tokenKind('refresh')), row.userId, tokenPurpose(row.id), row.wrappedKey);
      } catch (e) {
        if (e instanceof SealError) throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
        throw e;
      }
      // Wraps of tokens rotated before the grace window are dropped now (the purge job also does).
      tx.update(oauthTokens)
        .set({ wrappedKey: null })
        .where(and(eq(oauthTokens.grantId, grant.id), isNotNull(oauthTokens.wrappedKey), or(lte(oauthTokens.rotatedAt, now - OAUTH_TTL.graceMs), and(eq(oauthTokens.kind, 'access'), lte(oauthTokens.expiresAt, now)))))
        .run();
      const pair = mintPair(tx, deps, grant, dek, predecessorId);
      dek.fill(0);
      tx.update(oauthGrants).set({ lastUsedAt: now }).where(eq(oauthGrants.id, grant.id)).run();
      return pair;
    },
    { behavior: 'immediate' },
  );
  // Wraps dropped above (the rotated token past its grace, or the whole grant) leave the WAL too.
  flushDeleted(deps.db);
  if (reuse || !out) throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked (reuse detection).');
  return out;
}
