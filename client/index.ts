// `cairn/client` (issue 13 item 5; docs/client.md): a typed tRPC client for a Cairn server.
// Its declarations name only @trpc/client, @trpc/server and superjson types (the router's
// declarations use routers/api-types.ts), so a user's project type-checks without the server's
// dependencies. Runtime imports: @trpc/client, @trpc/server's observable and superjson only
// (AppRouter is a type; the EventSource for subscriptions is the caller's, see `EventSource`).
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError, type TRPCClient, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
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
  /**
   * For subscriptions (`client.live.events.subscribe(…)`, docs/app.md "Live updates"): an
   * EventSource class that takes a custom `fetch` in its options, such as `EventSource` of the
   * `eventsource` package (v3 or later). The credential then goes in the `Authorization` header,
   * read per connection like every other call, never in the URL; the browser's own EventSource
   * cannot send headers, so it is not used. Without it, subscribing fails with a TRPCClientError.
   */
  EventSource?: StreamEventSource;
};

/** An EventSource class whose options take `fetch` (the `eventsource` package's shape). */
export type StreamEventSource = NonNullable<Parameters<typeof httpSubscriptionLink>[0]['EventSource']>;

/** What the `eventsource` package hands its `fetch`: the URL and plain request options. */
type StreamInit = { headers?: Record<string, string> } & Record<string, unknown>;
type StreamFetch = (url: string | URL, init: StreamInit) => Promise<unknown>;

/** A subscription without an EventSource class: a clear error instead of a credential-less stream. */
const noEventSource: TRPCLink<AppRouter> = () => () =>
  observable((o) => {
    o.error(new TRPCClientError('Subscriptions need createCairnClient({ EventSource }), e.g. the `eventsource` package: the credential goes in the Authorization header, which the built-in EventSource cannot send.'));
  });

/** A client whose procedures, inputs and outputs are the server's (`client.todos.list.query({ limit: 20 })`). */
export function createCairnClient(opts: CairnClientOptions): CairnClient {
  const base = opts.url.replace(/\/+$/, '');
  const readToken = async () => (typeof opts.token === 'function' ? await opts.token() : opts.token);
  const batch = httpBatchLink({
    url: `${base}/trpc`,
    transformer: superjson,
    maxItems: opts.maxItems ?? 10,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    async headers() {
      const token = await readToken();
      return token ? { Authorization: `Bearer ${token}` } : {};
    },
  });
  // Subscriptions: Server-Sent Events through the caller's EventSource class, whose every
  // connection (reconnections included) goes through this fetch, which adds the header.
  const streamFetch = (opts.fetch ?? globalThis.fetch) as unknown as StreamFetch;
  const stream = opts.EventSource
    ? httpSubscriptionLink({
        url: `${base}/trpc`,
        transformer: superjson,
        EventSource: opts.EventSource,
        eventSourceOptions: () => ({
          fetch: async (url: string | URL, init: StreamInit) => {
            const token = await readToken();
            return streamFetch(url, { ...init, headers: { ...init.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
          },
        }),
      })
    : noEventSource;
  return createTRPCClient<AppRouter>({
    links: [splitLink({ condition: (op) => op.type === 'subscription', true: stream, false: batch })],
  });
}
