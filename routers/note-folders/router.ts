import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, BULK_ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam, EmptyBody } from '../common.js';
import * as m from './model.js';
import { CreateNoteFolderInput, ListNoteFoldersInput, MoveNoteFolderInput, NoteFolder, NoteFolderDeleted, UpdateNoteFolderInput } from './schema.js';

const tags = ['note-folders'];
const read = ['notes:read'] as const;
const write = ['notes:write'] as const;
const IdOnly = EmptyBody.extend(IdParam).strict();

// Static sub-paths (…/move, …/trash, …/restore) come before the bare `{id}` routes
// (trpc-to-openapi: the first registered route wins).
export const noteFoldersRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/note-folders', tags, summary: 'List note folders in app order (each top-level folder, then its subfolders)' } })
    .input(ListNoteFoldersInput)
    .output(pageSchema(NoteFolder))
    .query(({ ctx, input }) => m.listFolders(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes: [...write],
      successStatus: 201,
      idempotent: true,
      openapi: { method: 'POST', path: '/v1/note-folders', tags, summary: 'Create a note folder at the end of its siblings' },
    })
    .input(CreateNoteFolderInput)
    .output(NoteFolder)
    .mutation(atomic(({ ctx, input }) => m.createFolder(ctx.deps, ctx.principal, input))),

  move: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/note-folders/{id}/move', tags, summary: 'Move a folder to another parent and/or position' } })
    .input(MoveNoteFolderInput)
    .output(NoteFolder)
    .mutation(atomic(({ ctx, input }) => m.moveFolder(ctx.deps, ctx.principal, input))),

  trash: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/note-folders/{id}/trash', tags, summary: 'Move a folder to the trash; its subfolders and notes leave live views with it' } })
    .input(IdOnly)
    .output(NoteFolder)
    .mutation(atomic(({ ctx, input }) => m.trashFolder(ctx.deps, ctx.principal, input.id, true))),

  restore: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/note-folders/{id}/restore', tags, summary: 'Restore a folder; its subfolders and notes return with it' } })
    .input(IdOnly)
    .output(NoteFolder)
    .mutation(atomic(({ ctx, input }) => m.trashFolder(ctx.deps, ctx.principal, input.id, false))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/note-folders/{id}', tags, summary: 'Read a note folder (trashed ones too)' } })
    .input(z.object(IdParam).strict())
    .output(NoteFolder)
    .query(({ ctx, input }) => m.getFolder(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/note-folders/{id}', tags, summary: 'Change name, colour or symbol (parentId is refused)' } })
    .input(UpdateNoteFolderInput)
    .output(NoteFolder)
    .mutation(atomic(({ ctx, input }) => m.updateFolder(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'DELETE', path: '/v1/note-folders/{id}', tags, summary: 'Delete a trashed folder, its subfolders and every note in them (conflict when live)' } })
    .input(z.object(IdParam).strict())
    .output(NoteFolderDeleted)
    .mutation(atomic(({ ctx, input }) => m.deleteFolder(ctx.deps, ctx.principal, input.id), BULK_ERASES)),
});
