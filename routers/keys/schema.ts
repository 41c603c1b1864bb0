import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ScopeSchema } from '../../core/scopes.js';
import { Timestamp } from '../common.js';

export const CreateKeyInput = z
  .object({
    name: z.string().trim().min(1).max(256),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(64)
      .refine((a) => new Set(a).size === a.length, 'scopes must not repeat'),
    expiresInDays: z.literal([...LIMITS.personalTokens.expiryDays]).meta({
      description: 'Mandatory expiry (spec §5.1 rule 3): 30, 90, 180 or 365 days.',
    }),
  })
  .strict();

export const Key = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});

export const CreatedKey = Key.omit({ lastUsedAt: true }).extend({
  token: z.string().meta({ description: 'Shown once; the server cannot show it again.' }),
});
