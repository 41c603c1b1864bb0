// `cairn/client` (issue 13 item 5; docs/client.md): a typed tRPC client for a Cairn server.
// Its declarations name only @trpc/client, @trpc/server and superjson types (the router's
// declarations use routers/api-types.ts), so a user's project type-checks without the server's
// dependencies. Runtime imports: @trpc/client and superjson only (AppRouter is a type).
import { createTRPCClient, httpBatchLink, type TRPCClient } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '../routers/index.js';

export type { AppRouter };
export type { ApiProblem, ApiFieldError } from '../routers/api-types.js';
export type CairnClient = TRPCClient<AppRouter>;

export type CairnClientOptions = {
  /** The server's address, e.g. `http://127.0.0.1:8080` (`/trpc` is appended). */
  url: string;
  /** A bearer credential: a personal access token, a session or an OAuth access token; or a function read per request (a token that changes). */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  /** Calls made in the same tick go in one HTTP request, at most this many (default 10). */
  maxItems?: number;
  /** A fetch implementation (default: the global one); typed by @trpc/client, so no DOM or Node types are needed. */
  fetch?: Parameters<typeof httpBatchLink>[0]['fetch'];
};

/** A client whose procedures, inputs and outputs are the server's (`client.todos.list.query({ limit: 20 })`). */
export function createCairnClient(opts: CairnClientOptions): CairnClient {
  const base = opts.url.replace(/\/+$/, '');
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${base}/trpc`,
        transformer: superjson,
        maxItems: opts.maxItems ?? 10,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
        async headers() {
          const token = typeof opts.token === 'function' ? await opts.token() : opts.token;
          return token ? { Authorization: `Bearer ${token}` } : {};
        },
      }),
    ],
  });
}
