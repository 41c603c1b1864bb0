// Accounts and credentials. Plaintext here is only what authentication needs: ids, hashes of
// secrets, wrapped keys, scopes and times (DECISIONS §3). The email is sealed under the user's
// data key and found through an HMAC index under the server key.
import { sqliteTable, text, integer, blob, index, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    emailIndex: blob('email_index', { mode: 'buffer' }).notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    pwSalt: blob('pw_salt', { mode: 'buffer' }).notNull(),
    pwParams: text('pw_params').notNull(),
    pwVerifier: blob('pw_verifier', { mode: 'buffer' }).notNull(),
    pwWrappedKey: blob('pw_wrapped_key', { mode: 'buffer' }).notNull(),
    webhooksDisabledAt: integer('webhooks_disabled_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_index').on(t.emailIndex)],
);

/**
 * Every credential that carries a user's key: first-party sessions, personal access tokens
 * (and, later, OAuth tokens). Found by SHA-256 of the secret; the data key is wrapped under a
 * key derived from the secret. A revoked token keeps its row (for the daily creation count) but
 * loses its wrapped key, so it can never unwrap again.
 */
export const credentials = sqliteTable(
  'credentials',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['session', 'pat'] }).notNull(),
    /**
     * The door the credential opens (DECISIONS §8): `rest` (/v1 and /trpc; every session), `dav`
     * (/dav, app passwords) or `mcp` (/mcp). Personal tokens choose it at creation.
     */
    audience: text('audience', { enum: ['rest', 'dav', 'mcp'] }).notNull().default('rest'),
    secretHash: blob('secret_hash', { mode: 'buffer' }).notNull(),
    wrappedKey: blob('wrapped_key', { mode: 'buffer' }),
    scopes: text('scopes').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [
    uniqueIndex('credentials_secret_hash').on(t.secretHash),
    index('credentials_user_kind').on(t.userId, t.kind, t.createdAt),
  ],
);
