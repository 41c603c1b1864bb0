// Approving an OAuth authorization on a trusted device (spec §5.2 rule 4, DECISIONS §7): first-party
// sessions only; every call looks a nine-digit code up, so each counts against the approval-lookup
// buckets (spec §8.1: 10/min per user, 30/min per IP). Each answer says where and when the request
// started and warns against approving a code someone else gave you; a request started on another
// network than the caller's needs `confirmOtherNetwork: true` (issue 28 item 1, docs/oauth.md
// "Approval phishing"). The caller's address is the HTTP request's (ctx.ip); an in-process caller
// (the CLI, on the server's own machine) has none and counts as loopback.
import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic } from '../middleware/atomic.js';
import { ScopeSchema } from '../../core/scopes.js';
import { Timestamp } from '../common.js';
import * as m from '../oauth/model.js';

const tags = ['approvals'];
const CodeParam = z.object({ code: z.string().max(16).meta({ description: 'The nine-digit code the authorize page shows (dashes and spaces ignored).' }) }).strict();

const StartedFrom = z
  .object({
    startedAt: Timestamp,
    ageSeconds: z.number().int().min(0).meta({ description: 'Seconds since the authorize page was opened, by the server clock.' }),
    network: z.string().meta({ description: 'The network the authorize page was opened from: an IPv4 /24 (`203.0.113.0/24`), an IPv6 /64 (`2001:db8:1:2::/64`), `loopback`, or `unknown`.' }),
    address: z.string().nullable().meta({ description: 'The client address seen (behind a proxy only with CAIRN_TRUST_PROXY).' }),
    userAgent: z.string().nullable().meta({ description: 'The User-Agent header sent, cut to 200 characters; self-reported.' }),
    device: z.string().meta({ description: 'A rough reading of the user agent, such as "Firefox on Linux".' }),
    sameNetworkAsYou: z.boolean().meta({ description: 'Whether `network` is the network of this request (same IPv4 /24, same IPv6 /64, or both loopback).' }),
    summary: z.string().meta({ description: 'One sentence for people: "Started 40 s ago from 203.0.113.0/24 (address 203.0.113.7), Firefox on Linux. …"' }),
  })
  .meta({ description: 'Where and when the request started. Show it, with `warning`, before asking for a decision.' });

const Approval = z.object({
  code: z.string(),
  client: z.object({ id: z.string(), name: z.string(), verified: z.literal(false).meta({ description: 'Names are self-asserted at registration; never verified.' }) }),
  scopes: z.array(ScopeSchema),
  resource: z.string(),
  redirectUri: z.string().meta({ description: "Where the authorize page's browser goes next. It says nothing about who started the request: for a public client anyone can start one with its real callback." }),
  expiresAt: Timestamp,
  startedFrom: StartedFrom,
  yourNetwork: z.string().meta({ description: 'The network of this request, in the same form as `startedFrom.network`.' }),
  confirmOtherNetworkRequired: z.boolean().meta({ description: 'True when the request started on another network: approving then needs `confirmOtherNetwork: true`.' }),
  warning: z.string().meta({ description: 'Show it as it is: never approve a code someone else gave you.' }),
});
const Decided = Approval.extend({ decision: z.enum(['approved', 'denied']) });

const meta = { firstPartyOnly: true, rateLimits: ['approvalLookupUser', 'approvalLookupIp'] } as const;

export const approvalsRouter = router({
  get: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'GET', path: '/v1/approvals/{code}', tags, summary: 'Look up a pending OAuth authorization by its nine-digit code (first-party sessions only)' } })
    .input(CodeParam)
    .output(Approval)
    .query(({ ctx, input }) => m.lookupApproval(ctx.deps, ctx.principal, input.code, ctx.ip ?? null)),

  approve: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'POST', path: '/v1/approvals/{code}/approve', tags, summary: 'Approve with the requested scopes or a subset; the waiting page then redirects with a code' } })
    .input(
      CodeParam.extend({
        scopes: z
          .array(ScopeSchema)
          .min(1)
          .max(64)
          .refine((a) => new Set(a).size === a.length, 'scopes must not repeat'),
        confirmOtherNetwork: z
          .boolean()
          .optional()
          .meta({ description: 'Required (true) when the request started on another network than this one (`confirmOtherNetworkRequired`); without it such an approval is refused with 422 at `/confirmOtherNetwork`.' }),
      }).strict(),
    )
    .output(Decided)
    .mutation(atomic(({ ctx, input }) => m.approve(ctx.deps, ctx.deps.db, ctx.principal, input.code, input.scopes, ctx.ip ?? null, input.confirmOtherNetwork === true))),

  deny: authedProcedure
    .meta({ ...meta, rateLimits: [...meta.rateLimits], openapi: { method: 'POST', path: '/v1/approvals/{code}/deny', tags, summary: 'Deny; the waiting page redirects with error=access_denied' } })
    .input(CodeParam)
    .output(Decided)
    .mutation(atomic(({ ctx, input }) => m.deny(ctx.deps, ctx.deps.db, ctx.principal, input.code, ctx.ip ?? null))),
});
