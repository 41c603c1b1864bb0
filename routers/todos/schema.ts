// To-dos (DECISIONS §5): fields, inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape, boolParam } from '../../db/paging.js';
import { DateOnly, DateOut, Timestamp, PathId, noControlChars, NO_CONTROL_CHARS } from '../common.js';
import { TagName } from '../tags/schema.js';
import { Priority } from '../containers/schema.js';
import { Recurrence } from './recurrence.js';

export const TodoStatus = z.enum(['open', 'completed', 'canceled']);

// Issue 13.7: one line of text, as tag names are.
const Title = z.string().min(1).max(LIMITS.todo.title).refine(noControlChars, NO_CONTROL_CHARS);
const Notes = z.string().max(LIMITS.todo.notes);

/** Tag names; an unknown name creates the tag (DECISIONS §5). */
const TagNames = z.array(TagName).max(LIMITS.todo.tags);

const ChecklistItemInput = z
  .object({
    id: IdRef.optional().meta({ description: 'Keeps an existing item; omitted = a new item.' }),
    title: z.string().min(1).max(LIMITS.todo.checklistTitle),
    done: z.boolean().optional(),
  })
  .strict();
const ChecklistInput = z.array(ChecklistItemInput).max(LIMITS.todo.checklist);

/**
 * Item routes (docs/api.md "Checklist items"): `id` is the to-do (path; an UPPERCASE UUID like every
 * resource id), `itemId` the item: checklist item ids are the client's own strings (≤ 64), as in
 * the to-do's `checklist` field, so they are not held to the UUID shape.
 */
const ChecklistTitle = z.string().min(1).max(LIMITS.todo.checklistTitle);
const ItemPlacement = {
  after: IdRef.nullable().optional().meta({ description: 'An item of this checklist to follow.' }),
  before: IdRef.nullable().optional().meta({ description: 'An item of this checklist to precede. Neither: the end of the list.' }),
};
export const AddChecklistItemInput = z
  .object({
    id: PathId,
    itemId: IdRef.optional().meta({ description: 'The new item\'s id (≤ 64 characters); omitted = a new UUID.' }),
    title: ChecklistTitle,
    done: z.boolean().optional(),
    ...ItemPlacement,
  })
  .strict();
export const UpdateChecklistItemInput = z.object({ id: PathId, itemId: IdRef, title: ChecklistTitle.optional(), done: z.boolean().optional() }).strict();
export const ChecklistItemRef = z.object({ id: PathId, itemId: IdRef }).strict();
export const MoveChecklistItemInput = z.object({ id: PathId, itemId: IdRef, ...ItemPlacement }).strict();

const contentFields = {
  notes: Notes.nullable().optional(),
  whenDate: DateOnly.nullable().optional(),
  evening: z.boolean().optional(),
  someday: z.boolean().optional(),
  deadline: DateOnly.nullable().optional(),
  priority: Priority.nullable().optional(),
  tags: TagNames.optional(),
  checklist: ChecklistInput.optional(),
  recurrence: Recurrence.nullable().optional(),
};

export const CreateTodoInput = z
  .object({
    title: Title,
    ...contentFields,
    parentId: IdRef.nullable().optional().meta({ description: 'A project or subproject; null or omitted = standalone.' }),
    headingId: IdRef.nullable().optional().meta({ description: 'A heading of parentId (parentId may be omitted: it is the heading\'s project).' }),
    id: ClientId.optional(),
  })
  .strict();

export const UpdateTodoInput = z.strictObject(
  { id: PathId, title: Title.optional(), ...contentFields },
  {
    error: (iss) => {
      if (iss.code !== 'unrecognized_keys') return undefined;
      if (iss.keys.some((k) => k === 'parentId' || k === 'headingId')) return 'parentId and headingId are changed through POST /v1/todos/{id}/move';
      if (iss.keys.some((k) => k === 'status' || k === 'completedAt')) return 'status changes through /complete, /cancel and /reopen';
      return undefined;
    },
  },
);

export const MoveTodoInput = z
  .object({
    id: PathId,
    parentId: IdRef.nullable().meta({ description: 'Destination project or subproject; null = standalone.' }),
    headingId: IdRef.nullable().optional().meta({ description: 'A heading of the destination; omitted or null = no heading.' }),
    after: IdRef.nullable().optional().meta({ description: 'A to-do or note of the destination band to follow.' }),
    before: IdRef.nullable().optional().meta({ description: 'A to-do or note of the destination band to precede.' }),
  })
  .strict();

/** `today` (spec §4.5) for completion: the date a `completion`-basis recurrence counts from. */
export const TodayInput = z
  .object({ id: PathId, today: DateOnly.optional().meta({ description: 'YYYY-MM-DD; defaults to the server\'s UTC date.' }) })
  .strict();

export const ListTodosInput = z
  .object({
    ...ListQueryShape,
    parent_id: IdRef.optional().meta({ description: 'A container id, or the literal `null` for standalone to-dos.' }),
    heading_id: IdRef.optional().meta({ description: 'A heading id, or the literal `null` for to-dos under no heading.' }),
    status: TodoStatus.optional().meta({ description: 'Filters on the sealed status: decrypts inside the request (may be account_too_large).' }),
    include_trashed: boolParam.meta({ description: 'Include trashed to-dos and those in trashed containers (default false).' }),
  })
  .strict();

export const ChecklistItem = z.object({ id: z.string(), title: z.string(), done: z.boolean() });

export const Todo = z.object({
  id: z.string(),
  title: z.string(),
  notes: z.string().nullable(),
  status: TodoStatus,
  completedAt: Timestamp.nullable(),
  whenDate: DateOut.nullable(),
  evening: z.boolean(),
  someday: z.boolean(),
  deadline: DateOut.nullable(),
  priority: Priority.nullable(),
  tags: z.array(z.string()),
  checklist: z.array(ChecklistItem),
  recurrence: z.object({ rule: z.string(), basis: z.enum(['schedule', 'completion']) }).nullable(),
  parentId: z.string().nullable(),
  headingId: z.string().nullable(),
  sortKey: z.string(),
  trashedAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type TodoOut = z.infer<typeof Todo>;

/** complete/cancel: the to-do, and the id of the completed copy logged when it recurred. */
export const TodoDone = Todo.extend({
  loggedCopyId: z.string().nullable().meta({ description: 'A recurring to-do logs a completed (or canceled) copy with this id and rolls on; null otherwise.' }),
});
