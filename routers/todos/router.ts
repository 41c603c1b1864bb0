import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { EmptyBody, IdParam } from '../common.js';
import * as m from './model.js';
import {
  AddChecklistItemInput,
  ChecklistItemRef,
  CreateTodoInput,
  ListTodosInput,
  MoveChecklistItemInput,
  MoveTodoInput,
  TodayInput,
  Todo,
  TodoDone,
  UpdateChecklistItemInput,
  UpdateTodoInput,
} from './schema.js';

const tags = ['todos'];
const read = ['todos:read'] as const;
const write = ['todos:write'] as const;
const IdOnly = EmptyBody.extend(IdParam).strict();

export const todosRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/todos', tags, summary: 'List to-dos in app order' } })
    .input(ListTodosInput)
    .output(pageSchema(Todo))
    .query(({ ctx, input }) => m.listTodos(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({ scopes: [...write], successStatus: 201, idempotent: true, openapi: { method: 'POST', path: '/v1/todos', tags, summary: 'Create a to-do at the end of its band' } })
    .input(CreateTodoInput)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.createTodo(ctx.deps, ctx.principal, input))),

  complete: authedProcedure
    .meta({ scopes: [...write], idempotent: true, queryInput: ['today'], openapi: { method: 'POST', path: '/v1/todos/{id}/complete', tags, summary: 'Complete a to-do (a recurring one logs a copy and rolls on)' } })
    .input(TodayInput)
    .output(TodoDone)
    .mutation(atomic(({ ctx, input }) => m.finishTodo(ctx.deps, ctx.principal, input.id, 'completed', input.today))),

  cancel: authedProcedure
    .meta({ scopes: [...write], idempotent: true, queryInput: ['today'], openapi: { method: 'POST', path: '/v1/todos/{id}/cancel', tags, summary: 'Cancel a to-do (a recurring one logs a canceled copy and rolls on)' } })
    .input(TodayInput)
    .output(TodoDone)
    .mutation(atomic(({ ctx, input }) => m.finishTodo(ctx.deps, ctx.principal, input.id, 'canceled', input.today))),

  reopen: authedProcedure
    .meta({ scopes: [...write], queryInput: ['today'], openapi: { method: 'POST', path: '/v1/todos/{id}/reopen', tags, summary: 'Reopen a completed or canceled to-do' } })
    .input(TodayInput)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.reopenTodo(ctx.deps, ctx.principal, input.id))),

  move: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/todos/{id}/move', tags, summary: 'Move a to-do to another container, heading or position' } })
    .input(MoveTodoInput)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.moveTodo(ctx.deps, ctx.principal, input))),

  trash: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/todos/{id}/trash', tags, summary: 'Move a to-do to the trash' } })
    .input(IdOnly)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.trashTodo(ctx.deps, ctx.principal, input.id, true))),

  restore: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/todos/{id}/restore', tags, summary: 'Restore a to-do from the trash' } })
    .input(IdOnly)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.trashTodo(ctx.deps, ctx.principal, input.id, false))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/todos/{id}', tags, summary: 'Read a to-do' } })
    .input(z.object(IdParam).strict())
    .output(Todo)
    .query(({ ctx, input }) => m.getTodo(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/todos/{id}', tags, summary: 'Change a to-do (placement via /move, status via the actions)' } })
    .input(UpdateTodoInput)
    .output(Todo)
    .mutation(atomic(({ ctx, input }) => m.updateTodo(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/todos/{id}', tags, summary: 'Delete a to-do for good' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteTodo(ctx.deps, ctx.principal, input.id), ERASES)),

  // One checklist item at a time (issue 13 item 9), so a client ticking one item cannot drop the
  // others. Each answers the whole to-do, as the to-do's other actions do (docs/api.md).
  checklist: router({
    add: authedProcedure
      .meta({ scopes: [...write], successStatus: 201, idempotent: true, openapi: { method: 'POST', path: '/v1/todos/{id}/checklist', tags, summary: 'Add one checklist item (at the end, or after/before an item); answers the to-do' } })
      .input(AddChecklistItemInput)
      .output(Todo)
      .mutation(atomic(({ ctx, input }) => m.addChecklistItem(ctx.deps, ctx.principal, input))),

    update: authedProcedure
      .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/todos/{id}/checklist/{itemId}', tags, summary: 'Change one checklist item (title, done); answers the to-do' } })
      .input(UpdateChecklistItemInput)
      .output(Todo)
      .mutation(atomic(({ ctx, input }) => m.updateChecklistItem(ctx.deps, ctx.principal, input))),

    delete: authedProcedure
      .meta({ scopes: [...write], openapi: { method: 'DELETE', path: '/v1/todos/{id}/checklist/{itemId}', tags, summary: 'Remove one checklist item; answers the to-do' } })
      .input(ChecklistItemRef)
      .output(Todo)
      .mutation(atomic(({ ctx, input }) => m.deleteChecklistItem(ctx.deps, ctx.principal, input.id, input.itemId))),

    move: authedProcedure
      .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/todos/{id}/checklist/{itemId}/move', tags, summary: 'Reorder one checklist item (after/before an item, else to the end); answers the to-do' } })
      .input(MoveChecklistItemInput)
      .output(Todo)
      .mutation(atomic(({ ctx, input }) => m.moveChecklistItem(ctx.deps, ctx.principal, input))),
  }),
});
