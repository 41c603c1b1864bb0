import { authedProcedure, router } from '../trpc.js';
import * as m from './model.js';
import { LinkTitle, LinkTitleInput } from './schema.js';

const tags = ['link-title'];

export const linkTitleRouter = router({
  // Spec §4.16: first-party sessions only (a personal token or OAuth token is forbidden_scope
  // whatever its scopes); nothing is written, so no transaction and no idempotency.
  fetch: authedProcedure
    .meta({
      firstPartyOnly: true,
      openapi: {
        method: 'POST',
        path: '/v1/link-title',
        tags,
        summary: 'Fetch a page title for a link (first-party sessions only)',
        description:
          'Fetches the page once through the outbound door: public addresses only, https only, at most 5 redirects, 8 s, 256 KB, text/html only. Answers og:title, else <title>; a page that cannot be read gives title null. Nothing is stored, cached or logged.',
      },
    })
    .input(LinkTitleInput)
    .output(LinkTitle)
    .mutation(({ ctx, input }) => m.fetchLinkTitle(ctx.deps, input.url)),
});
