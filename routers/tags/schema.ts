import { z } from 'zod';
import { LIMITS } from '../../server/config.js';
import { ClientId } from '../../server/ids.js';
import { ColorHex, Timestamp, PathId } from '../common.js';

const TagName = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.tag.name)
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters');

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
