import { z } from 'zod';
import { eq, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import { users } from '../../db/schema/index.js';
import { authedProcedure, router } from '../trpc.js';
import { Timestamp } from '../common.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';

const Me = z.object({
  sub: z.string().meta({ description: 'The user id the credential acts for.' }),
  credential: z.object({
    id: z.string(),
    kind: z.enum(['session', 'personal_token', 'oauth_token']),
    expiresAt: Timestamp,
  }),
  scopes: z.array(z.string()).meta({ description: 'The granted scope list.' }),
  webhooks: z.object({ disabled: z.boolean(), disabledAt: Timestamp.nullable() }),
});

export const meRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/me', tags: ['identity'], summary: 'The calling credential, its subject and granted scopes (docs/api.md "Identity")' } })
    .input(z.object({}).strict().optional())
    .output(Me)
    .query(({ ctx }) => {
      const p = ctx.principal;
      const q = prepared(ctx.deps.db, 'users.webhooksDisabledAt', (db) =>
        db.select({ disabledAt: users.webhooksDisabledAt }).from(users).where(eq(users.id, sql.placeholder('id'))).prepare(),
      );
      const row = q.get({ id: p.userId });
      if (!row) throw new AppError('unauthorized', 'The account no longer exists.');
      return {
        sub: p.userId,
        credential: { id: p.credentialId, kind: p.kind === 'pat' ? 'personal_token' : p.kind === 'oauth' ? 'oauth_token' : 'session', expiresAt: iso(p.expiresAt) },
        scopes: p.granted,
        webhooks: { disabled: row.disabledAt != null, disabledAt: isoOrNull(row.disabledAt) },
      } as const;
    }),
});
