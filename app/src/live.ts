// Live updates (issue 32 item 5; docs/app.md "Live updates"): a change made elsewhere (another
// tab, REST, CalDAV, MCP) reaches the views without a reload.
//
// 1. The stream: the `live.events` subscription over Server-Sent Events, fed by the server's
//    outbox. Every message (the first one included: it marks where the stream starts, so nothing
//    that happened while the views loaded is missed) refetches the views. The EventSource is the
//    `eventsource` package's, given a fetch that sends the session in the `Authorization` header:
//    the browser's own EventSource cannot send headers, and the token never goes into a URL.
// 2. The fallback: while the stream is not connected (refused, cut, reconnecting, the server
//    restarting) the app polls `todos.list` and `containers.list` with `updated_since` (trashed
//    included) every 2 s, and refetches the views when a (id, updatedAt, status, title, trash)
//    tuple it has not seen appears. A failed stream is tried again after RETRY_MS, or at once when
//    the token changes (a password change answers a fresh session).
import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { EventSource } from 'eventsource';
import type { Unsubscribable } from '@trpc/server/observable';
import { createCairnClient } from '../../client/index.js';
import { api, getToken, onToken, status } from './api.js';

export const POLL_MS = 2_000;
export const RETRY_MS = 15_000;

/** Only for the stream (api.ts's client has no EventSource); the same origin and token. */
const streams = createCairnClient({ url: location.origin, token: () => getToken(), EventSource });

type Row = { id: string; updatedAt: string; title?: string; name?: string; status?: string; trashedAt: string | null };
const sig = (r: Row) => `${r.id}|${r.updatedAt}|${r.status ?? ''}|${r.title ?? r.name ?? ''}|${r.trashedAt ?? ''}`;

export function useLive(): void {
  const qc = useQueryClient();
  useEffect(() => {
    let stopped = false;
    let streaming = false;
    let sub: Unsubscribable | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const refresh = () => void qc.invalidateQueries();
    const connect = () => {
      clearTimeout(retry);
      sub?.unsubscribe();
      streaming = false;
      const again = () => {
        streaming = false;
        if (!stopped) retry = setTimeout(connect, RETRY_MS);
      };
      sub = streams.live.events.subscribe(undefined, {
        onConnectionStateChange: (s) => {
          streaming = s.state === 'pending';
        },
        onData: refresh,
        onError: (err) => {
          // The session ended (signed out elsewhere, password changed): the views' own 401 returns
          // to the sign-in form (App.tsx), or a fresh token reconnects at once (onToken below).
          if (status(err) === 401 || (err as { data?: { code?: string } }).data?.code === 'UNAUTHORIZED') refresh();
          again();
        },
        onComplete: again,
      });
    };

    let since: string | undefined;
    const seen = new Set<string>();
    let first = true;
    const tick = async () => {
      if (!streaming) {
        try {
          const q = { limit: 200, include_trashed: true, ...(since ? { updated_since: since } : {}) } as const;
          const [todos, containers] = await Promise.all([api.todos.list.query(q), api.containers.list.query(q)]);
          let changed = false;
          for (const r of [...todos.data, ...containers.data] as Row[]) {
            const s = sig(r);
            if (!seen.has(s)) {
              seen.add(s);
              changed = true;
            }
            if (!since || r.updatedAt > since) since = r.updatedAt;
          }
          if (changed && !first) refresh();
          first = false;
        } catch {
          // Offline or signed out: the views say so; try again on the next tick.
        }
      }
      if (!stopped) timer = setTimeout(() => void tick(), POLL_MS);
    };

    connect();
    void tick();
    const offToken = onToken(() => {
      if (getToken()) connect();
    });
    return () => {
      stopped = true;
      offToken();
      clearTimeout(retry);
      clearTimeout(timer);
      sub?.unsubscribe();
    };
  }, [qc]);
}
