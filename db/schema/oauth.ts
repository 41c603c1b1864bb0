// OAuth 2.1 for third-party apps (spec §5.2, DECISIONS §7; routers/oauth/). Plaintext here is only
// what the protocol needs: client metadata (public, shown as unverified), hashes of secrets and
// codes, wrapped data keys, scopes, resources and times (DECISIONS §3).
import { sqliteTable, text, integer, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';

/** RFC 7591 registrations: open and unreviewed. The secret of a confidential client is stored hashed. */
export const oauthClients = sqliteTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  redirectUris: text('redirect_uris').notNull(),
  authMethod: text('auth_method', { enum: ['none', 'client_secret_post', 'client_secret_basic'] }).notNull(),
  secretHash: blob('secret_hash', { mode: 'buffer' }),
  createdAt: integer('created_at').notNull(),
});

/**
 * One authorization request: the page's nine-digit code (HMAC under the server key), the browser's
 * wait handle (SHA-256; its X25519 public key receives the authorization code once approved), and,
 * after approval, the code's hash and the data key wrapped under a key derived from the code.
 */
export const oauthRequests = sqliteTable(
  'oauth_requests',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    scopes: text('scopes').notNull(),
    resource: text('resource').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    state: text('state'),
    userCodeHash: blob('user_code_hash', { mode: 'buffer' }).notNull(),
    waitHash: blob('wait_hash', { mode: 'buffer' }).notNull(),
    waitPublicKey: blob('wait_public_key', { mode: 'buffer' }).notNull(),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'delivered', 'redeemed'] }).notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    grantedScopes: text('granted_scopes'),
    /** The authorization code, sealed to the wait handle's public key until the page fetches it. */
    sealedCode: blob('sealed_code', { mode: 'buffer' }),
    codeHash: blob('code_hash', { mode: 'buffer' }),
    wrappedKey: blob('wrapped_key', { mode: 'buffer' }),
    codeExpiresAt: integer('code_expires_at'),
    grantId: text('grant_id'),
    /**
     * Where the request started (issue 28 item 1): the client address and user agent seen at
     * /oauth/authorize, sealed under a server key bound to the row (routers/oauth/request-context.ts).
     * Cleared once the request is decided; the row itself goes with the purge.
     */
    startedContext: blob('started_context', { mode: 'buffer' }),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('oauth_requests_user_code').on(t.userCodeHash),
    uniqueIndex('oauth_requests_wait').on(t.waitHash),
    uniqueIndex('oauth_requests_code').on(t.codeHash),
    index('oauth_requests_expires').on(t.expiresAt),
  ],
);

/** A user's consent to one client: scopes and resource fixed, re-approval after 365 days. */
export const oauthGrants = sqliteTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    scopes: text('scopes').notNull(),
    resource: text('resource').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('oauth_grants_user').on(t.userId, t.createdAt)],
);

/**
 * Access and refresh tokens of a grant, found by SHA-256 of the secret; the data key wrapped under
 * a key derived from the secret. A refresh token that was rotated keeps its wrap for the 30 s grace
 * only; a revoked grant's tokens keep their rows (so a client learns `grant_revoked`) without wraps.
 */
export const oauthTokens = sqliteTable(
  'oauth_tokens',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    secretHash: blob('secret_hash', { mode: 'buffer' }).notNull(),
    wrappedKey: blob('wrapped_key', { mode: 'buffer' }),
    audience: text('audience').notNull(),
    predecessorId: text('predecessor_id'),
    rotatedAt: integer('rotated_at'),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [uniqueIndex('oauth_tokens_secret_hash').on(t.secretHash), index('oauth_tokens_grant').on(t.grantId, t.kind)],
);
