import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, BULK_ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam, EmptyBody } from '../common.js';
import * as m from './model.js';
import { Container, CreateContainerInput, ListContainersInput, MoveContainerInput, UpdateContainerInput } from './schema.js';

const tags = ['containers'];
const read = ['containers:read'] as const;
const write = ['containers:write'] as const;
const IdOnly = EmptyBody.extend(IdParam).strict();

// Static paths (…/move, …/archive) are registered before the bare `{id}` routes they share a
// prefix with (trpc-to-openapi: first registered route wins).
export const containersRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/containers', tags, summary: 'List areas, projects and subprojects in app order' } })
    .input(ListContainersInput)
    .output(pageSchema(Container))
    .query(({ ctx, input }) => m.listContainers(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({ scopes: [...write], successStatus: 200, idempotent: true, openapi: { method: 'POST', path: '/v1/containers', tags, summary: 'Create an area, project or subproject (200, not 201: docs/api.md "Containers")' } })
    .input(CreateContainerInput)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.createContainer(ctx.deps, ctx.principal, input))),

  move: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/containers/{id}/move', tags, summary: 'Move a container to another parent and/or position' } })
    .input(MoveContainerInput)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.moveContainer(ctx.deps, ctx.principal, input))),

  archive: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/containers/{id}/archive', tags, summary: 'Set status archived' } })
    .input(IdOnly)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.setContainerStatus(ctx.deps, ctx.principal, input.id, 'archived'))),

  unarchive: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/containers/{id}/unarchive', tags, summary: 'Set status active' } })
    .input(IdOnly)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.setContainerStatus(ctx.deps, ctx.principal, input.id, 'active'))),

  trash: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/containers/{id}/trash', tags, summary: 'Move a container to the trash; its contents leave live views with it' } })
    .input(IdOnly)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.trashContainer(ctx.deps, ctx.principal, input.id, true))),

  restore: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/containers/{id}/restore', tags, summary: 'Restore a container and its contents from the trash' } })
    .input(IdOnly)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.trashContainer(ctx.deps, ctx.principal, input.id, false))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/containers/{id}', tags, summary: 'Read a container (trashed ones too)' } })
    .input(z.object(IdParam).strict())
    .output(Container)
    .query(({ ctx, input }) => m.getContainer(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/containers/{id}', tags, summary: 'Change content fields (parentId and kind are refused)' } })
    .input(UpdateContainerInput)
    .output(Container)
    .mutation(atomic(({ ctx, input }) => m.updateContainer(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/containers/{id}', tags, summary: 'Delete a trashed container and everything in it (conflict when live)' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteContainer(ctx.deps, ctx.principal, input.id), BULK_ERASES)),
});
