import { authedProcedure, router } from '../trpc.js';
import * as m from './model.js';
import { SearchInput, SearchResult } from './schema.js';

export const searchRouter = router({
  search: authedProcedure
    .meta({
      // No fixed scope: each kind of hit needs its own read scope (routers/search/model.ts).
      openapi: { method: 'GET', path: '/v1/search', tags: ['search'], summary: 'Search to-dos, notes, containers and headings (case- and accent-insensitive)' },
    })
    .input(SearchInput)
    .output(SearchResult)
    .query(({ ctx, input }) => m.search(ctx.deps, ctx.principal, input)),
});
