import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic } from '../middleware/atomic.js';
import { Timestamp } from '../common.js';
import * as m from './model.js';

const tags = ['settings'];

const Settings = z.object({
  weekStart: z.enum(m.WEEK_DAYS),
  updatedAt: Timestamp.nullable().meta({ description: 'null until the settings are first written' }),
});

export const settingsRouter = router({
  get: authedProcedure
    .meta({ scopes: ['settings:read'], openapi: { method: 'GET', path: '/v1/settings', tags, summary: 'Read settings (platform blobs are never exposed)' } })
    .input(z.object({}).strict().optional())
    .output(Settings)
    .query(({ ctx }) => m.getSettings(ctx.deps, ctx.principal)),

  update: authedProcedure
    .meta({ scopes: ['settings:write'], openapi: { method: 'PATCH', path: '/v1/settings', tags, summary: 'Set the first day of the week' } })
    .input(z.object({ weekStart: z.enum(m.WEEK_DAYS) }).strict())
    .output(Settings)
    .mutation(atomic(({ ctx, input }) => m.updateSettings(ctx.deps, ctx.principal, input))),

  /** tRPC only: first-party apps store opaque per-platform state; never readable back. */
  putPlatformBlob: authedProcedure
    .meta({ firstPartyOnly: true, scopes: ['settings:write'] })
    .input(z.object({ platform: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/), blob: z.string().max(100_000) }).strict())
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.putPlatformBlob(ctx.deps, ctx.principal, input))),
});
