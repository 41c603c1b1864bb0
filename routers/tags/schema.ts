import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId } from '../../core/ids.js';
import { ColorHex, Timestamp, PathId, noControlChars, NO_CONTROL_CHARS } from '../common.js';

/** Also the names a to-do's `tags` list takes (routers/todos/schema.ts). */
export const TagName = z.string().trim().min(1).max(LIMITS.tag.name).refine(noControlChars, NO_CONTROL_CHARS);

export const CreateTagInput = z
  .object({ name: TagName, colorHex: ColorHex.nullable().optional(), id: ClientId.optional() })
  .strict();

/** Spec §2.9: `colorHex` is the only field a PATCH may change, and it is required there. */
export const UpdateTagInput = z.strictObject(
  { id: PathId, colorHex: ColorHex.nullable() },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys' && iss.keys.includes('name')
        ? 'tags cannot be renamed; only colorHex can change'
        : undefined,
  },
);

export const Tag = z.object({
  id: z.string(),
  name: z.string(),
  colorHex: z.string().nullable(),
  sortKey: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
