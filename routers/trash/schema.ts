// The trash (DECISIONS §6): a paged list of trashed notes, note folders, to-dos and containers.
import { z } from 'zod';
import { ListQueryShape } from '../../db/paging.js';
import { Timestamp } from '../common.js';

export const TRASH_TYPES = ['note', 'note_folder', 'todo', 'container'] as const;
export type TrashType = (typeof TRASH_TYPES)[number];

export const ListTrashInput = z.object(ListQueryShape).strict();

export const TrashItem = z.object({
  type: z.enum(TRASH_TYPES),
  id: z.string(),
  title: z.string().meta({ description: "A note's title, or the first line of its body when it has none; a folder's or container's name; a to-do's title." }),
  trashedAt: Timestamp,
});
export type TrashItemOut = z.infer<typeof TrashItem>;

export const TrashEmptied = z.object({
  deleted: z
    .object({ notes: z.number().int(), noteFolders: z.number().int(), todos: z.number().int(), containers: z.number().int() })
    .meta({ description: 'How many trash entries of each type were deleted for good (their contents went with them).' }),
});
