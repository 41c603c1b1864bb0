import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam } from '../common.js';
import { Note } from '../notes/schema.js';
import * as m from './model.js';
import { ListNoteVersionsInput, NoteVersion, NoteVersionRef, NoteVersionText, RestoreNoteVersionInput } from './schema.js';

const tags = ['note-versions'];
const read = ['notes:read'] as const;
const write = ['notes:write'] as const;

export const noteVersionsRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/notes/{id}/versions', tags, summary: "A note's versions, newest first, without text" } })
    .input(ListNoteVersionsInput)
    .output(pageSchema(NoteVersion))
    .query(({ ctx, input }) => m.listVersions(ctx.deps, ctx.principal, input.id, input)),

  getText: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/notes/{noteId}/versions/{id}', tags, summary: 'One version of a note with its text' } })
    .input(NoteVersionRef)
    .output(NoteVersionText)
    .query(({ ctx, input }) => m.getVersionText(ctx.deps, ctx.principal, input.noteId, input.id)),

  restore: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/notes/{noteId}/versions/{id}/restore', tags, summary: "Put a version's title and body back on the note (records a restore version)" } })
    .input(RestoreNoteVersionInput)
    .output(Note)
    .mutation(atomic(({ ctx, input }) => m.restoreVersion(ctx.deps, ctx.principal, input.noteId, input.id))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/note-versions/{id}', tags, summary: 'Resolve a version id from a note_version.* event: noteId and what produced it, no text' } })
    .input(z.object(IdParam).strict())
    .output(NoteVersion)
    .query(({ ctx, input }) => m.getVersion(ctx.deps, ctx.principal, input.id)),
});
