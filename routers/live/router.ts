// `live.events` (issue 32 item 5; docs/app.md "Live updates"): a tRPC subscription over SSE for
// first-party sessions only (meta firstPartyOnly, as POST /v1/keys: requireGrants in
// routers/trpc.ts refuses personal tokens and OAuth tokens with forbidden_scope). No REST route:
// third-party clients have webhooks and `updated_since`.
import { authedProcedure, router } from '../trpc.js';
import { LiveEventsInput } from './schema.js';
import { liveEvents } from './model.js';

export const liveRouter = router({
  events: authedProcedure
    .meta({ firstPartyOnly: true })
    .input(LiveEventsInput)
    .subscription(({ ctx, input, signal }) => liveEvents(ctx.deps, ctx.principal, input?.lastEventId, signal)),
});
