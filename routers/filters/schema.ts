// Saved filters (spec §2.8, §4.10): inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId } from '../../core/ids.js';
import { ListQueryShape, intParam } from '../../db/paging.js';
import { DateOnly, IdParam, Symbol, Timestamp } from '../common.js';

const Name = z.string().min(1).max(LIMITS.filter.name);
const Criteria = z.string().min(1).max(LIMITS.filter.criteria).meta({ description: 'A boolean expression over tags and dates (docs/api.md "Saved filters").' });

export const CreateFilterInput = z.object({ name: Name, criteria: Criteria, symbol: Symbol.nullable().optional(), id: ClientId.optional() }).strict();
export const UpdateFilterInput = z.object({ ...IdParam, name: Name.optional(), criteria: Criteria.optional(), symbol: Symbol.nullable().optional() }).strict();
export const ListFiltersInput = z.object(ListQueryShape).strict();
export const FilterTodosInput = z
  .object({
    ...IdParam,
    limit: intParam(1, LIMITS.page.maxLimit),
    cursor: z.string().max(LIMITS.cursorMax).optional(),
    today: DateOnly.optional().meta({ description: "YYYY-MM-DD for `today` and `overdue`; defaults to the server's UTC date." }),
  })
  .strict();

export const Filter = z.object({
  id: z.string(),
  name: z.string(),
  criteria: z.string(),
  symbol: z.string().nullable(),
  sortKey: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type FilterOut = z.infer<typeof Filter>;
