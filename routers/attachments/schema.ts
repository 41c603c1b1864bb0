// Attachments (spec §2.6, §4.9): inputs and answers. `file` attachments come in through the raw
// upload route only; the JSON create takes the url, text and note kinds.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape } from '../../db/paging.js';
import { Timestamp, PathId, checkHttpUrl } from '../common.js';
import { ATTACHMENT_PARENTS } from '../../db/schema/attachments.js';

export const ATTACHMENT_KINDS = ['url', 'text', 'note'] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];

/** An absolute http(s) URL (clients render it as a link, so no `javascript:` and the like). */
export const AttachmentUrl = z
  .string()
  .min(1)
  .max(LIMITS.attachment.url)
  .superRefine((value, ctx) => checkHttpUrl(value, ctx));

export const AttachmentText = z
  .string()
  .min(1)
  .max(LIMITS.attachment.text)
  .refine((s) => s.trim().length > 0, 'must not be blank');

export const AttachmentTitle = z.string().max(LIMITS.attachment.title);

export const CreateAttachmentInput = z
  .object({
    parentType: z.enum(ATTACHMENT_PARENTS).meta({ description: 'A to-do, a container or an inbox item of the caller.' }),
    parentId: IdRef,
    kind: z.enum(ATTACHMENT_KINDS).meta({ description: 'File attachments are uploaded through POST /v1/attachments/files.' }),
    url: AttachmentUrl.optional().meta({ description: 'Required for kind `url`; refused for the other kinds.' }),
    text: AttachmentText.optional().meta({ description: 'Required for kind `text`; refused for the other kinds.' }),
    noteId: IdRef.optional().meta({ description: 'Required for kind `note`: a note of the caller; refused for the other kinds.' }),
    title: AttachmentTitle.nullable().optional(),
    id: ClientId.optional(),
  })
  .strict();

/** Spec §4.9: `title`, `url`, `text`; `url` only on a url attachment, `text` only on a text one. */
export const UpdateAttachmentInput = z.strictObject(
  { id: PathId, title: AttachmentTitle.nullable().optional(), url: AttachmentUrl.optional(), text: AttachmentText.optional() },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys' && iss.keys.some((k) => k === 'parentId' || k === 'parentType' || k === 'kind' || k === 'noteId')
        ? 'only title, url and text can change; delete and recreate to change the parent, kind or note'
        : undefined,
  },
);

export const ListAttachmentsInput = z
  .object({
    ...ListQueryShape,
    parent_id: IdRef.optional().meta({ description: 'Only the attachments of this to-do or container.' }),
  })
  .strict();

export const Attachment = z.object({
  id: z.string(),
  parentType: z.enum(ATTACHMENT_PARENTS),
  parentId: z.string(),
  kind: z.enum([...ATTACHMENT_KINDS, 'file']),
  title: z.string().nullable(),
  url: z.string().nullable(),
  text: z.string().nullable(),
  noteId: z.string().nullable(),
  contentType: z.string().nullable().meta({ description: 'File attachments: the Content-Type the file was uploaded with.' }),
  size: z.number().int().nullable().meta({ description: 'File attachments: the size in bytes.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type AttachmentOut = z.infer<typeof Attachment>;
