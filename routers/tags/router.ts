import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, BULK_ERASES } from '../middleware/atomic.js';
import { pageSchema, ListQueryShape } from '../../db/paging.js';
import { IdParam } from '../common.js';
import * as m from './model.js';
import { CreateTagInput, Tag, UpdateTagInput } from './schema.js';

const tags = ['tags'];

export const tagsRouter = router({
  list: authedProcedure
    .meta({ scopes: ['tags:read'], openapi: { method: 'GET', path: '/v1/tags', tags, summary: 'List tags in app order' } })
    .input(z.object(ListQueryShape).strict())
    .output(pageSchema(Tag))
    .query(({ ctx, input }) => m.listTags(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes: ['tags:write'],
      successStatus: 201,
      idempotent: true,
      openapi: { method: 'POST', path: '/v1/tags', tags, summary: 'Create a tag, or return the existing one with that name (200)' },
    })
    .input(CreateTagInput)
    .output(Tag)
    .mutation(
      atomic(({ ctx, input }) => {
        const { created, tag } = m.createTag(ctx.deps, ctx.principal, input);
        ctx.http.status = created ? 201 : 200;
        return tag;
      }),
    ),

  get: authedProcedure
    .meta({ scopes: ['tags:read'], openapi: { method: 'GET', path: '/v1/tags/{id}', tags, summary: 'Read a tag' } })
    .input(z.object(IdParam).strict())
    .output(Tag)
    .query(({ ctx, input }) => m.getTag(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: ['tags:write'], openapi: { method: 'PATCH', path: '/v1/tags/{id}', tags, summary: 'Change a tag colour (renaming is refused)' } })
    .input(UpdateTagInput)
    .output(Tag)
    .mutation(atomic(({ ctx, input }) => m.updateTag(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: ['tags:write'], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/tags/{id}', tags, summary: 'Delete a tag and remove it from every to-do' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteTag(ctx.deps, ctx.principal, input.id), BULK_ERASES)),
});
