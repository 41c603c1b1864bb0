// Search (DECISIONS §6, issue 14): query and answer.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { boolParam, intParam } from '../../db/paging.js';

export const SEARCH_TYPES = ['todo', 'note', 'container', 'heading', 'inbox'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const SearchInput = z
  .object({
    q: z
      .string()
      .min(1)
      .max(LIMITS.search.q)
      .refine((s) => s.trim().length > 0, 'must contain a search term')
      .meta({ description: 'Words to find (1..256 chars); every word must match, case- and accent-insensitively.' }),
    types: z
      .string()
      .max(100)
      .refine((s) => s.split(',').every((t) => (SEARCH_TYPES as readonly string[]).includes(t.trim())), `a comma-separated list of ${SEARCH_TYPES.join(', ')}`)
      .optional()
      .meta({ description: 'Comma-separated kinds to search; default all.' }),
    limit: intParam(1, LIMITS.page.maxLimit),
    cursor: z.string().max(LIMITS.cursorMax).optional(),
    include_trashed: boolParam.meta({ description: 'Also search trashed items and items in trashed containers (default false).' }),
  })
  .strict();

export const SearchHit = z.object({
  type: z.enum(SEARCH_TYPES),
  id: z.string(),
  title: z.string(),
  snippet: z.string().meta({ description: 'Text around the first match outside the title (or the start of the text).' }),
});

export const SearchResult = z.object({ data: z.array(SearchHit), next_cursor: z.string().nullable() });
