// Note folders (spec §2.4, §4.7): inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape, boolParam } from '../../db/paging.js';
import { ColorHex, Timestamp, PathId } from '../common.js';

const Name = z
  .string()
  .min(1)
  .max(LIMITS.noteFolderName)
  .refine((s) => s.trim().length > 0, 'must not be blank');

/** Spec §2 rule 4: for note folders, lowercase letters and digits in segments separated by single dots. */
export const FolderSymbol = z
  .string()
  .max(LIMITS.symbol)
  .regex(/^[a-z0-9]+(\.[a-z0-9]+)*$/, 'must be lowercase letters and digits in segments separated by single dots, e.g. folder.fill');

export const CreateNoteFolderInput = z
  .object({
    name: Name,
    colorHex: ColorHex.nullable().optional(),
    symbol: FolderSymbol.nullable().optional(),
    parentId: IdRef.nullable().optional().meta({ description: 'A top-level folder; null or omitted = top level.' }),
    id: ClientId.optional(),
  })
  .strict();

/** Spec §4.7: `name`, `colorHex`, `symbol` (null clears the last two); `parentId` refused. */
export const UpdateNoteFolderInput = z.strictObject(
  {
    id: PathId,
    name: Name.optional(),
    colorHex: ColorHex.nullable().optional(),
    symbol: FolderSymbol.nullable().optional(),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys' && iss.keys.includes('parentId') ? 'parentId is changed through POST /v1/note-folders/{id}/move' : undefined,
  },
);

export const MoveNoteFolderInput = z
  .object({
    id: PathId,
    parentId: IdRef.nullable().meta({ description: 'A top-level folder, or null for the top level.' }),
    after: IdRef.nullable().optional().meta({ description: 'A sibling folder to follow.' }),
    before: IdRef.nullable().optional().meta({ description: 'A sibling folder to precede.' }),
  })
  .strict();

export const ListNoteFoldersInput = z
  .object({
    ...ListQueryShape,
    parent_id: IdRef.optional().meta({ description: 'Only subfolders of this folder; the literal `null` for top-level folders.' }),
    include_trashed: boolParam.meta({ description: 'Include trashed folders and the subfolders of trashed folders (default false).' }),
  })
  .strict();

export const NoteFolder = z.object({
  id: z.string(),
  name: z.string(),
  colorHex: z.string().nullable(),
  symbol: z.string().nullable(),
  parentId: z.string().nullable(),
  noteCount: z.number().int().meta({ description: 'Live (untrashed) notes directly in the folder.' }),
  sortKey: z.string(),
  trashedAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type NoteFolderOut = z.infer<typeof NoteFolder>;

export const NoteFolderDeleted = z.object({
  id: z.string(),
  deletedFolderIds: z.array(z.string()).meta({ description: 'The folder and its subfolders.' }),
  deletedNoteIds: z.array(z.string()).meta({ description: 'Every note that was in them, trashed or not.' }),
});
