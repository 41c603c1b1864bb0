import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, BULK, BULK_ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam } from '../common.js';
import * as m from './model.js';
import {
  CompleteHeadingInput,
  ConvertHeadingInput,
  CreateHeadingInput,
  Heading,
  HeadingCompleted,
  HeadingConverted,
  HeadingDeleted,
  ListHeadingsInput,
  UpdateHeadingInput,
} from './schema.js';

const tags = ['headings'];

// The action paths (…/convert, …/complete) come before the bare `{id}` routes (trpc-to-openapi:
// the first registered route whose pattern matches wins).
export const headingsRouter = router({
  list: authedProcedure
    .meta({ scopes: ['containers:read'], openapi: { method: 'GET', path: '/v1/headings', tags, summary: "List headings: a project's in order, or all grouped by project" } })
    .input(ListHeadingsInput)
    .output(pageSchema(Heading))
    .query(({ ctx, input }) => m.listHeadings(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({ scopes: ['containers:write'], successStatus: 201, idempotent: true, openapi: { method: 'POST', path: '/v1/headings', tags, summary: 'Create a heading in a project or subproject' } })
    .input(CreateHeadingInput)
    .output(Heading)
    .mutation(atomic(({ ctx, input }) => m.createHeading(ctx.deps, ctx.principal, input))),

  convert: authedProcedure
    .meta({
      scopes: ['containers:write', 'todos:write'],
      successStatus: 201,
      idempotent: true,
      openapi: { method: 'POST', path: '/v1/headings/{headingId}/convert', tags, summary: 'Convert a heading into a subproject holding its to-dos' },
    })
    .input(ConvertHeadingInput)
    .output(HeadingConverted)
    .mutation(atomic(({ ctx, input }) => m.convertHeading(ctx.deps, ctx.principal, input.headingId, input.id), BULK)),

  complete: authedProcedure
    .meta({
      scopes: ['todos:write'],
      idempotent: true,
      queryInput: ['today'],
      openapi: { method: 'POST', path: '/v1/headings/{id}/complete', tags, summary: 'Complete every open to-do under the heading' },
    })
    .input(CompleteHeadingInput)
    .output(HeadingCompleted)
    .mutation(atomic(({ ctx, input }) => m.completeHeading(ctx.deps, ctx.principal, input.id, input.today), BULK)),

  get: authedProcedure
    .meta({ scopes: ['containers:read'], openapi: { method: 'GET', path: '/v1/headings/{id}', tags, summary: 'Read a heading (also of a trashed project)' } })
    .input(z.object(IdParam).strict())
    .output(Heading)
    .query(({ ctx, input }) => m.getHeading(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: ['containers:write'], openapi: { method: 'PATCH', path: '/v1/headings/{id}', tags, summary: 'Rename or reorder a heading' } })
    .input(UpdateHeadingInput)
    .output(Heading)
    .mutation(atomic(({ ctx, input }) => m.updateHeading(ctx.deps, ctx.principal, input), BULK)),

  delete: authedProcedure
    .meta({
      scopes: ['containers:write', 'todos:write'],
      openapi: { method: 'DELETE', path: '/v1/headings/{id}', tags, summary: 'Delete a heading; its to-dos stay in the project in their order' },
    })
    .input(z.object(IdParam).strict())
    .output(HeadingDeleted)
    .mutation(atomic(({ ctx, input }) => m.deleteHeading(ctx.deps, ctx.principal, input.id), BULK_ERASES)),
});
