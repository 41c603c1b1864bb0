// Headings (spec §2.2, §4.5).
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape } from '../../db/paging.js';
import { DateOnly, Timestamp, PathId } from '../common.js';
import { Container } from '../containers/schema.js';
import { Todo } from '../todos/schema.js';

const Name = z.string().min(1).max(LIMITS.headingName);
const After = IdRef.nullable().meta({ description: 'Ordering hint: null = first, a heading id = right after it; omitted = last (create) or unchanged (PATCH).' });

export const CreateHeadingInput = z
  .object({
    projectId: IdRef.meta({ description: 'A live project or subproject; an area is refused.' }),
    name: Name,
    after: After.optional(),
    id: ClientId.optional(),
  })
  .strict();

export const UpdateHeadingInput = z.strictObject(
  { id: PathId, name: Name.optional(), after: After.optional() },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys' && iss.keys.includes('projectId') ? 'a heading never changes project' : undefined,
  },
);

export const ListHeadingsInput = z
  .object({
    ...ListQueryShape,
    project_id: IdRef.optional().meta({ description: "Only this project's headings, in order." }),
    projectId: IdRef.optional().meta({ description: 'Same as project_id.' }),
  })
  .strict();

/** The path names the heading `{headingId}` so the body's own `id` (the new subproject's) stays free. */
export const ConvertHeadingInput = z
  .object({ headingId: PathId, id: ClientId.optional().meta({ description: 'Id for the new subproject; omitted = derived from the heading, so a retry finds it.' }) })
  .strict();

export const CompleteHeadingInput = z
  .object({ id: PathId, today: DateOnly.optional().meta({ description: "YYYY-MM-DD; defaults to the server's UTC date." }) })
  .strict();

export const Heading = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  sortKey: z.string(),
  openCount: z.number().int().meta({ description: 'Open, untrashed to-dos under the heading.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type HeadingOut = z.infer<typeof Heading>;

export const HeadingDeleted = z.object({
  id: z.string(),
  projectId: z.string(),
  clearedTodoIds: z.array(z.string()).meta({ description: 'To-dos that lost the heading (now in the project, in their order).' }),
});

export const HeadingConverted = z.object({
  headingId: z.string(),
  subproject: Container,
  todos: z.array(Todo).meta({ description: 'The moved to-dos, in order.' }),
});

export const HeadingCompleted = z.object({
  heading: Heading,
  completed: z.array(Todo).meta({ description: 'What was completed: the to-do itself, or the logged copy of a recurring one.' }),
  rolled: z.array(Todo).meta({ description: 'Recurring to-dos rolled to their next occurrence (still open).' }),
});
