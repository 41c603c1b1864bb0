// Note versions (spec §2.5, §4.6, §4.8): inputs and answers.
import { z } from 'zod';

import { ListQueryShape } from '../../db/paging.js';
import { Timestamp, PathId } from '../common.js';
import { VERSION_SOURCES } from './record.js';

export const ListNoteVersionsInput = z.object({ id: PathId, ...ListQueryShape }).strict();
export const NoteVersionRef = z.object({ noteId: PathId, id: PathId }).strict();
export const RestoreNoteVersionInput = NoteVersionRef;

/** A version without its text (lists, `GET /v1/note-versions/{id}`). */
export const NoteVersion = z.object({
  id: z.string(),
  noteId: z.string(),
  source: z.enum(VERSION_SOURCES).meta({ description: 'What produced the version: create, edit (rapid edits coalesce) or restore.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp.meta({ description: 'Later than createdAt when rapid edits coalesced into this version.' }),
});
export type NoteVersionOut = z.infer<typeof NoteVersion>;

/** One version with its sealed text opened. */
export const NoteVersionText = NoteVersion.extend({ title: z.string().nullable(), body: z.string() });
export type NoteVersionTextOut = z.infer<typeof NoteVersionText>;
