// Live updates (issue 32 item 5; docs/app.md "Live"): this first version polls `updated_since`
// every 2 s for to-dos and containers (trashed ones included) and refetches the views when
// something changed elsewhere (another tab, REST, CalDAV, MCP). The tRPC SSE subscription the
// issue prefers is not built yet. A change is a (id, updatedAt, status, title, trash) tuple not
// seen before, so a write landing in the same millisecond as the last one is still noticed.
import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api } from './api.js';

export const POLL_MS = 2_000;

type Row = { id: string; updatedAt: string; title?: string; name?: string; status?: string; trashedAt: string | null };
const sig = (r: Row) => `${r.id}|${r.updatedAt}|${r.status ?? ''}|${r.title ?? r.name ?? ''}|${r.trashedAt ?? ''}`;

export function useLive(): void {
  const qc = useQueryClient();
  useEffect(() => {
    let since: string | undefined;
    const seen = new Set<string>();
    let first = true;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
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
        if (changed && !first) await qc.invalidateQueries();
        first = false;
      } catch {
        // Offline or signed out: the views say so; try again on the next tick.
      }
      if (!stopped) timer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [qc]);
}
