// Notes (spec §2.3, §4.6): inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape, boolParam } from '../../db/paging.js';
import { Timestamp, PathId } from '../common.js';

/** Spec §2.3: 1..100000 and never blank (whitespace only is refused). */
export const NoteBody = z
  .string()
  .min(1)
  .max(LIMITS.note.body)
  .refine((s) => s.trim().length > 0, 'must not be blank');

export const NoteTitle = z.string().max(LIMITS.note.title);

export const CreateNoteInput = z
  .object({
    body: NoteBody,
    title: NoteTitle.nullable().optional(),
    parentId: IdRef.nullable().optional().meta({ description: 'A project or subproject; null or omitted = standalone.' }),
    folderId: IdRef.nullable().optional().meta({ description: 'A note folder (standalone notes only); null or omitted = no folder.' }),
    id: ClientId.optional(),
  })
  .strict();

/** Spec §4.6: `title` (null clears) and `body`; `parentId` is refused. */
export const UpdateNoteInput = z.strictObject(
  { id: PathId, title: NoteTitle.nullable().optional(), body: NoteBody.optional() },
  {
    error: (iss) => {
      if (iss.code !== 'unrecognized_keys') return undefined;
      if (iss.keys.some((k) => k === 'parentId' || k === 'folderId')) return 'parentId and folderId are changed through POST /v1/notes/{id}/move';
      return undefined;
    },
  },
);

export const MoveNoteInput = z
  .object({
    id: PathId,
    parentId: IdRef.nullable().meta({ description: 'Destination project or subproject; null = standalone.' }),
    folderId: IdRef.nullable().optional().meta({
      description: 'Destination folder for a standalone note; null = no folder; omitted = the current folder (none when parentId is a container).',
    }),
    after: IdRef.nullable().optional().meta({ description: 'A to-do or note of the destination band to follow.' }),
    before: IdRef.nullable().optional().meta({ description: 'A to-do or note of the destination band to precede.' }),
  })
  .strict();

export const ListNotesInput = z
  .object({
    ...ListQueryShape,
    parent_id: IdRef.optional().meta({ description: 'A container id, or the literal `null` for standalone notes; omitted = all.' }),
    folder_id: IdRef.optional().meta({ description: 'Only notes directly in this folder.' }),
    include_trashed: boolParam.meta({ description: 'Include trashed notes and notes inside trashed containers or folders (default false).' }),
  })
  .strict();

export const Note = z.object({
  id: z.string(),
  title: z.string().nullable(),
  body: z.string(),
  parentId: z.string().nullable(),
  folderId: z.string().nullable(),
  sortKey: z.string(),
  trashedAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type NoteOut = z.infer<typeof Note>;
