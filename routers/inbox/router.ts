import { authedProcedure, router } from '../trpc.js';
import { atomic } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import * as m from './model.js';
import { CaptureInboxInput, InboxIdInput, InboxItem, ListInboxInput, MoveInboxInput, MovedInbox } from './schema.js';

const tags = ['inbox'];
const read = ['inbox:read'] as const;
const write = ['inbox:write'] as const;

export const inboxRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/inbox', tags, summary: 'List inbox items in capture order' } })
    .input(ListInboxInput)
    .output(pageSchema(InboxItem))
    .query(({ ctx, input }) => m.listInbox(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes: [...write],
      successStatus: 201,
      idempotent: true,
      openapi: {
        method: 'POST',
        path: '/v1/inbox',
        tags,
        summary: 'Capture a text or a url',
        description: 'A url capture answers with title null; its page title is fetched after the answer and lands with an inbox.updated event (docs/api.md "Inbox").',
      },
    })
    .input(CaptureInboxInput)
    .output(InboxItem)
    .mutation(
      atomic(({ ctx, input }) => {
        const item = m.captureInbox(ctx.deps, ctx.principal, input);
        // Scheduled only: the fetch starts once this transaction has committed and the answer is sent.
        if (item.url !== null) m.fetchTitleAfterAnswer(ctx.deps, ctx.principal, ctx, item.id, item.url);
        return item;
      }),
    ),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/inbox/{id}', tags, summary: 'Read an inbox item' } })
    .input(InboxIdInput)
    .output(InboxItem)
    .query(({ ctx, input }) => m.getInbox(ctx.deps, ctx.principal, input.id)),

  archive: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/inbox/{id}/archive', tags, summary: 'Archive an inbox item' } })
    .input(InboxIdInput)
    .output(InboxItem)
    .mutation(atomic(({ ctx, input }) => m.setInboxStatus(ctx.deps, ctx.principal, input.id, 'archived'))),

  someday: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'POST', path: '/v1/inbox/{id}/someday', tags, summary: 'Put an inbox item in someday' } })
    .input(InboxIdInput)
    .output(InboxItem)
    .mutation(atomic(({ ctx, input }) => m.setInboxStatus(ctx.deps, ctx.principal, input.id, 'someday'))),

  move: authedProcedure
    .meta({
      scopes: [...write, 'todos:write'],
      openapi: {
        method: 'POST',
        path: '/v1/inbox/{id}/move',
        tags,
        summary: 'Move an inbox item to a new to-do',
        description:
          'One transaction: a to-do titled from the text, else the fetched title, else the url; whenDate kept; a url kept as a url attachment of the to-do; a file or image capture\'s file re-parented to the to-do; the item becomes moved. Moving a moved item is 409 conflict.',
      },
    })
    .input(MoveInboxInput)
    .output(MovedInbox)
    .mutation(atomic(({ ctx, input }) => m.moveInbox(ctx.deps, ctx.principal, input))),
});
