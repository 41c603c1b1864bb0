import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema, ListQueryShape } from '../../db/paging.js';
import { IdParam } from '../common.js';
import * as m from './model.js';
import { CreatedKey, CreateKeyInput, Key } from './schema.js';

const tags = ['keys'];

export const keysRouter = router({
  list: authedProcedure
    .meta({ scopes: ['sessions:read'], openapi: { method: 'GET', path: '/v1/keys', tags, summary: 'List active personal access tokens (never their secrets)' } })
    .input(z.object(ListQueryShape).strict())
    .output(pageSchema(Key))
    .query(({ ctx, input }) => m.listKeys(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({ secretInAnswer: true, firstPartyOnly: true, successStatus: 201, idempotent: 'no-replay', rateLimits: ['keyCreate'], openapi: { method: 'POST', path: '/v1/keys', tags, summary: 'Create a personal access token (first-party sessions only); the token is shown once' } })
    .input(CreateKeyInput)
    .output(CreatedKey)
    .mutation(atomic(({ ctx, input }) => m.createKey(ctx.deps, ctx.principal, input))),

  revoke: authedProcedure
    .meta({ scopes: ['sessions:write'], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/keys/{id}', tags, summary: 'Revoke a personal access token' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.revokeKey(ctx.deps, ctx.principal, input.id), ERASES)),
});
