import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ScopeSchema } from '../../core/scopes.js';
import { DOORS } from '../auth/principal.js';
import { Timestamp } from '../common.js';

/** What an app password (`audience: "dav"`) is granted: the to-dos and the lists they sit in. */
export const DAV_SCOPES = ['todos:read', 'todos:write', 'containers:read', 'containers:write'] as const;

export const KeyAudience = z.enum(DOORS).meta({
  description:
    'The door the token opens (docs/security.md "One credential, one door"): `rest` (/v1 and /trpc, the default), `dav` (/dav: an app password for CalDAV clients, granted the to-do and container scopes) or `mcp` (/mcp, for assistants).',
});

export const CreateKeyInput = z
  .object({
    name: z.string().trim().min(1).max(256),
    audience: KeyAudience.optional(),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(64)
      .refine((a) => new Set(a).size === a.length, 'scopes must not repeat')
      .optional()
      .meta({ description: 'Required for `rest` and `mcp` tokens; left out for `dav` tokens, which are granted todos:read, todos:write, containers:read and containers:write.' }),
    expiresInDays: z.literal([...LIMITS.personalTokens.expiryDays]).meta({
      description: 'Mandatory expiry (docs/api.md "Personal access tokens"): 30, 90, 180 or 365 days.',
    }),
  })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.audience ?? 'rest') === 'dav') {
      if (v.scopes !== undefined) ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'an app password (audience "dav") is granted the to-do and container scopes: leave scopes out' });
    } else if (v.scopes === undefined) ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'scopes are required' });
  });

export const Key = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  audience: KeyAudience,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});

export const CreatedKey = Key.omit({ lastUsedAt: true }).extend({
  token: z.string().meta({ description: 'Shown once; the server cannot show it again.' }),
});
