import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam, EmptyBody } from '../common.js';
import * as m from './model.js';
import { CreateNoteInput, ListNotesInput, MoveNoteInput, Note, UpdateNoteInput } from './schema.js';

const tags = ['notes'];
const read = ['notes:read'] as const;
const write = ['notes:write'] as const;
const IdOnly = EmptyBody.extend(IdParam).strict();

// Static sub-paths (…/move, …/trash, …/restore) come before the bare `{id}` routes
// (trpc-to-openapi: the first registered route wins).
export const notesRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/notes', tags, summary: 'List notes in app order' } })
    .input(ListNotesInput)
    .output(pageSchema(Note))
    .query(({ ctx, input }) => m.listNotes(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes: [...write],
      successStatus: 201,
      idempotent: true,
      openapi: { method: 'POST', path: '/v1/notes', tags, summary: 'Create a note at the end of its band (to-dos and notes in one ordering)' },
    })
    .input(CreateNoteInput)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.createNote(ctx.deps, ctx.principal, input))),

  move: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/notes/{id}/move', tags, summary: 'Move a note to a container or folder and/or next to a to-do or note' } })
    .input(MoveNoteInput)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.moveNote(ctx.deps, ctx.principal, input))),

  trash: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/notes/{id}/trash', tags, summary: 'Move a note to the trash' } })
    .input(IdOnly)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.trashNote(ctx.deps, ctx.principal, input.id, true))),

  restore: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/notes/{id}/restore', tags, summary: 'Restore a note from the trash' } })
    .input(IdOnly)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.trashNote(ctx.deps, ctx.principal, input.id, false))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/notes/{id}', tags, summary: 'Read a note (trashed ones too)' } })
    .input(z.object(IdParam).strict())
    .output(Note)
    .query(({ ctx, input }) => m.getNote(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/notes/{id}', tags, summary: 'Change title or body (records a version); parentId is refused' } })
    .input(UpdateNoteInput)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.updateNote(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/notes/{id}', tags, summary: 'Delete a note for good (any state)' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteNote(ctx.deps, ctx.principal, input.id), ERASES)),
});
