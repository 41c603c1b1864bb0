// Approving an OAuth authorization on a trusted device (spec §5.2 rule 4, DECISIONS §7): first-party
// sessions only; every call looks a nine-digit code up, so each counts against the approval-lookup
// buckets (spec §8.1: 10/min per user, 30/min per IP).
import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic } from '../middleware/atomic.js';
import { ScopeSchema } from '../../core/scopes.js';
import { Timestamp } from '../common.js';
import * as m from '../oauth/model.js';

const tags = ['approvals'];
const CodeParam = z.object({ code: z.string().max(16).meta({ description: 'The nine-digit code the authorize page shows (dashes and spaces ignored).' }) }).strict();

const Approval = z.object({
  code: z.string(),
  redirectUri: z.string().meta({ description: 'Where the browser goes next: show it first.' }),
  client: z.object({ id: z.string(), name: z.string(), verified: z.literal(false).meta({ description: 'Names are self-asserted at registration; never verified.' }) }),
  scopes: z.array(ScopeSchema),
  resource: z.string(),
  expiresAt: Timestamp,
});
const Decided = Approval.extend({ decision: z.enum(['approved', 'denied']) });

const meta = { firstPartyOnly: true, rateLimits: ['approvalLookupUser', 'approvalLookupIp'] } as const;

export const approvalsRouter = router({
  get: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'GET', path: '/v1/approvals/{code}', tags, summary: 'Look up a pending OAuth authorization by its nine-digit code (first-party sessions only)' } })
    .input(CodeParam)
    .output(Approval)
    .query(({ ctx, input }) => m.lookupApproval(ctx.deps, ctx.principal, input.code)),

  approve: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'POST', path: '/v1/approvals/{code}/approve', tags, summary: 'Approve with the requested scopes or a subset; the waiting page then redirects with a code' } })
    .input(
      CodeParam.extend({
        scopes: z
          .array(ScopeSchema)
          .min(1)
          .max(64)
          .refine((a) => new Set(a).size === a.length, 'scopes must not repeat'),
      }).strict(),
    )
    .output(Decided)
    .mutation(atomic(({ ctx, input }) => m.approve(ctx.deps, ctx.deps.db, ctx.principal, input.code, input.scopes))),

  deny: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'POST', path: '/v1/approvals/{code}/deny', tags, summary: 'Deny; the waiting page redirects with error=access_denied' } })
    .input(CodeParam)
    .output(Decided)
    .mutation(atomic(({ ctx, input }) => m.deny(ctx.deps, ctx.deps.db, ctx.principal, input.code))),
});
