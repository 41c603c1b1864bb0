// Views (spec §4.12, DECISIONS §6): query inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { intParam } from '../../db/paging.js';
import { DateOnly, DateOut } from '../common.js';
import { Todo } from '../todos/schema.js';
import { Container, ContainerKind } from '../containers/schema.js';

const today = DateOnly.optional().meta({ description: "YYYY-MM-DD; defaults to the server's UTC date." });
const paging = {
  limit: intParam(1, LIMITS.page.maxLimit).meta({ description: 'To-dos per page, 1..200, default 50.' }),
  cursor: z.string().max(LIMITS.cursorMax).optional().meta({ description: 'Opaque cursor from next_cursor.' }),
};

export const ViewInput = z.object({ today }).strict();
export const PagedViewInput = z.object({ today, ...paging }).strict();
export const LogbookInput = z
  .object({
    today,
    from: DateOnly.optional().meta({ description: 'First completion day (UTC) to include, YYYY-MM-DD.' }),
    to: DateOnly.optional().meta({ description: 'Last completion day (UTC) to include, YYYY-MM-DD.' }),
    ...paging,
  })
  .strict();

export const TodayView = z.object({
  date: DateOut,
  todos: z.array(Todo.extend({ overdue: z.boolean().meta({ description: 'The deadline is before today.' }) })),
  evening: z.array(Todo.extend({ overdue: z.boolean() })),
});

export const UpcomingView = z.object({
  days: z.array(
    z.object({
      date: DateOut,
      todos: z.array(
        Todo.extend({
          projected: z.boolean().meta({ description: "A recurring to-do's further occurrence on this day (not stored)." }),
          // Issue 28 item 15: a projected entry's whenDate and deadline are the stored to-do's (its
          // next real occurrence), not this day's; occursOn is the day this entry stands for.
          occursOn: DateOut.meta({
            description:
              'The day this entry occurs on: the day it is listed under (`date`). For a projected occurrence it is later than the stored `whenDate`/`deadline`, which describe the to-do as stored (its next occurrence); show this date.',
          }),
        }),
      ),
    }),
  ),
});

export const GroupedView = z.object({
  groups: z.array(z.object({ container: Container.nullable(), todos: z.array(Todo) })),
  next_cursor: z.string().nullable(),
});

export const LogbookView = z.object({
  days: z.array(z.object({ date: DateOut, todos: z.array(Todo) })),
  next_cursor: z.string().nullable(),
});

export const OverviewView = z.object({
  date: DateOut,
  counts: z.object({ today: z.number(), upcoming: z.number(), anytime: z.number(), someday: z.number(), logbook: z.number() }),
  containers: z.array(z.object({ id: z.string(), kind: ContainerKind, parentId: z.string().nullable(), openCount: z.number() })),
});
