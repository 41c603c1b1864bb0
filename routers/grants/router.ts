// Connected apps (spec §5.2, issue 17 item 7): OAuth grants, listed and revoked like personal tokens.
// The list is paged in the common envelope, `{data, next_cursor}` (spec §4.1, issue 28 item 10).
import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema, ListQueryShape } from '../../db/paging.js';
import { IdParam, Timestamp } from '../common.js';
import * as m from '../oauth/model.js';
import { listGrants } from './model.js';

const tags = ['grants'];

const Grant = z.object({
  id: z.string(),
  client: z.object({ id: z.string(), name: z.string(), verified: z.literal(false) }),
  scopes: z.array(z.string()),
  resource: z.string(),
  createdAt: Timestamp,
  expiresAt: Timestamp.meta({ description: 'Re-approval is needed after 365 days (grant_expired).' }),
  lastUsedAt: Timestamp.nullable(),
});

export const grantsRouter = router({
  list: authedProcedure
    .meta({ scopes: ['sessions:read'], openapi: { method: 'GET', path: '/v1/grants', tags, summary: 'List connected apps (OAuth grants) with scopes, created and last used, oldest first' } })
    // Optional, so a call without a query (the console's) still lists the first page.
    .input(z.object(ListQueryShape).strict().optional())
    .output(pageSchema(Grant))
    .query(({ ctx, input }) => listGrants(ctx.deps, ctx.principal, input ?? {})),

  revoke: authedProcedure
    .meta({ scopes: ['sessions:write'], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/grants/{id}', tags, summary: 'Revoke a connected app; its tokens then get grant_revoked' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.revokeGrantById(ctx.deps, ctx.deps.db, ctx.principal, input.id), ERASES)),
});
