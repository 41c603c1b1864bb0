// Inbox items (spec §2.7, §4.11, §8.2): inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape } from '../../db/paging.js';
import { Todo } from '../todos/schema.js';
import { DateOnly, DateOut, PathId, Timestamp, checkHttpUrl } from '../common.js';

export const INBOX_KINDS = ['text', 'url', 'file', 'image'] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];
export const INBOX_STATUSES = ['open', 'archived', 'someday', 'moved'] as const;
export type InboxStatus = (typeof INBOX_STATUSES)[number];

export const CaptureInboxInput = z
  .object({
    kind: z.enum(['text', 'url']).meta({ description: 'File and image captures come in through POST /v1/inbox/files.' }),
    text: z
      .string()
      .min(1)
      .max(LIMITS.inbox.text)
      .refine((s) => s.trim().length > 0, 'must not be blank')
      .optional()
      .meta({ description: 'Required for kind `text`; optional with a url capture.' }),
    url: z
      .string()
      .min(1)
      .max(LIMITS.inbox.url)
      .superRefine((value, ctx) => checkHttpUrl(value, ctx))
      .optional()
      .meta({ description: 'Required for kind `url`; refused for kind `text`.' }),
    whenDate: DateOnly.nullable().optional(),
    id: ClientId.optional(),
  })
  .strict();

export const ListInboxInput = z
  .object({
    ...ListQueryShape,
    status: z.enum(INBOX_STATUSES).optional(),
    kind: z.enum(INBOX_KINDS).optional(),
  })
  .strict();

export const InboxIdInput = z.object({ id: PathId }).strict();

export const InboxItem = z.object({
  id: z.string(),
  kind: z.enum(INBOX_KINDS),
  text: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable().meta({ description: 'A url capture: the page title, fetched after the capture answers; null until then, or when the page could not be read.' }),
  whenDate: DateOut.nullable(),
  status: z.enum(INBOX_STATUSES),
  attachmentId: z.string().nullable().meta({ description: 'File and image captures: the attachment holding the file (GET /v1/attachments/{id}/file); moved with the item to its to-do.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type InboxItemOut = z.infer<typeof InboxItem>;

export const MoveInboxInput = z
  .object({
    id: PathId,
    parentId: IdRef.nullable().optional().meta({ description: 'A project or subproject of the caller; absent or null: a standalone to-do.' }),
  })
  .strict();

export const MovedInbox = z.object({ item: InboxItem, todo: Todo });

/** POST /v1/inbox/files query (the body is the file). */
export const FileCaptureQuery = z
  .object({
    title: z.string().max(LIMITS.attachment.title).optional(),
    whenDate: DateOnly.optional(),
  })
  .strict();
