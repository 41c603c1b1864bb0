import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam } from '../common.js';
import { Todo } from '../todos/schema.js';
import * as m from './model.js';
import { CreateFilterInput, Filter, FilterTodosInput, ListFiltersInput, UpdateFilterInput } from './schema.js';

const tags = ['filters'];
const read = ['filters:read' as const];
const write = ['filters:write' as const];

// Static sub-paths (…/todos) before the bare `{id}` routes they share a prefix with.
export const filtersRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/filters', tags, summary: 'List saved filters in app order' } })
    .input(ListFiltersInput)
    .output(pageSchema(Filter))
    .query(({ ctx, input }) => m.listFilters(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({ scopes: [...write], successStatus: 201, idempotent: true, openapi: { method: 'POST', path: '/v1/filters', tags, summary: 'Create a saved filter' } })
    .input(CreateFilterInput)
    .output(Filter)
    .mutation(atomic(({ ctx, input }) => m.createFilter(ctx.deps, ctx.principal, input))),

  todos: authedProcedure
    .meta({ scopes: [...read, 'todos:read'], openapi: { method: 'GET', path: '/v1/filters/{id}/todos', tags, summary: 'Evaluate a saved filter over live open to-dos, in app order' } })
    .input(FilterTodosInput)
    .output(pageSchema(Todo))
    .query(({ ctx, input }) => m.filterTodos(ctx.deps, ctx.principal, input)),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/filters/{id}', tags, summary: 'Read a saved filter' } })
    .input(z.object(IdParam).strict())
    .output(Filter)
    .query(({ ctx, input }) => m.getFilter(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/filters/{id}', tags, summary: 'Change a saved filter' } })
    .input(UpdateFilterInput)
    .output(Filter)
    .mutation(atomic(({ ctx, input }) => m.updateFilter(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/filters/{id}', tags, summary: 'Delete a saved filter' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteFilter(ctx.deps, ctx.principal, input.id), ERASES)),
});
