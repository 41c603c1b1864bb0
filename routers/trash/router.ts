import { authedProcedure, router } from '../trpc.js';
import { atomic, BULK_ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { EmptyBody } from '../common.js';
import * as m from './model.js';
import { ListTrashInput, TrashEmptied, TrashItem } from './schema.js';

const tags = ['trash'];

// The trash spans notes, to-dos and containers, so it needs the scopes of all three (an umbrella
// `tasks:*` token holds them).
export const trashRouter = router({
  list: authedProcedure
    .meta({
      scopes: ['notes:read', 'todos:read', 'containers:read'],
      openapi: { method: 'GET', path: '/v1/trash', tags, summary: 'Trashed notes, note folders, to-dos and containers, newest first' },
    })
    .input(ListTrashInput)
    .output(pageSchema(TrashItem))
    .query(({ ctx, input }) => m.listTrash(ctx.deps, ctx.principal, input)),

  empty: authedProcedure
    .meta({
      scopes: ['notes:write', 'todos:write', 'containers:write'],
      openapi: { method: 'POST', path: '/v1/trash/empty', tags, summary: 'Delete everything in the trash for good' },
    })
    .input(EmptyBody)
    .output(TrashEmptied)
    .mutation(atomic(({ ctx }) => m.emptyTrash(ctx.deps, ctx.principal), BULK_ERASES)),
});
