import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import { IdParam } from '../common.js';
import * as m from './model.js';
import { Attachment, CreateAttachmentInput, ListAttachmentsInput, UpdateAttachmentInput } from './schema.js';

const tags = ['attachments'];
const read = ['attachments:read'] as const;
const write = ['attachments:write'] as const;

export const attachmentsRouter = router({
  list: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/attachments', tags, summary: 'List attachments in creation order' } })
    .input(ListAttachmentsInput)
    .output(pageSchema(Attachment))
    .query(({ ctx, input }) => m.listAttachments(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes: [...write],
      successStatus: 201,
      idempotent: true,
      openapi: { method: 'POST', path: '/v1/attachments', tags, summary: 'Attach a url, a text or a note to a to-do or container' },
    })
    .input(CreateAttachmentInput)
    .output(Attachment)
    .mutation(atomic(({ ctx, input }) => m.createAttachment(ctx.deps, ctx.principal, input))),

  get: authedProcedure
    .meta({ scopes: [...read], openapi: { method: 'GET', path: '/v1/attachments/{id}', tags, summary: 'Read an attachment' } })
    .input(z.object(IdParam).strict())
    .output(Attachment)
    .query(({ ctx, input }) => m.getAttachment(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes: [...write], openapi: { method: 'PATCH', path: '/v1/attachments/{id}', tags, summary: 'Change title, url (url kind) or text (text kind)' } })
    .input(UpdateAttachmentInput)
    .output(Attachment)
    .mutation(atomic(({ ctx, input }) => m.updateAttachment(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes: [...write], successStatus: 204, openapi: { method: 'DELETE', path: '/v1/attachments/{id}', tags, summary: 'Delete an attachment for good' } })
    .input(z.object(IdParam).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteAttachment(ctx.deps, ctx.principal, input.id), ERASES)),
});
