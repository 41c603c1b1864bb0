// The app's data layer (docs/app.md "Stack"): TanStack Query 5 driving the project's own typed
// client (client/index.ts). @trpc/tanstack-react-query lags the core packages, so queries are
// plain `queryOptions` whose queryFn calls the vanilla client: the types still come end to end
// from the routers, and every @trpc/* package stays on the one version the server runs.
import { QueryClient } from '@tanstack/react-query';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { createCairnClient, type AppRouter } from '../../client/index.js';

export type Out = inferRouterOutputs<AppRouter>;
export type In = inferRouterInputs<AppRouter>;
export type Todo = Out['todos']['get'];
export type Container = Out['containers']['get'];
export type Heading = Out['headings']['get'];

/**
 * The session token lives in localStorage (docs/app.md "Staying signed in"): it must survive a
 * reload and a browser restart; the strict CSP (no inline or third-party script) is what keeps
 * other script away from it. It never goes into a URL.
 */
const KEY = 'cairn.session';
let token: string | undefined = localStorage.getItem(KEY) ?? undefined;
const listeners = new Set<() => void>();
export function getToken(): string | undefined {
  return token;
}
export function setToken(t: string | undefined): void {
  token = t;
  if (t) localStorage.setItem(KEY, t);
  else localStorage.removeItem(KEY);
  for (const l of listeners) l();
}
export function onToken(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
// Another tab signed in or out.
addEventListener('storage', (e) => {
  if (e.key === KEY) {
    token = e.newValue ?? undefined;
    for (const l of listeners) l();
  }
});

export const api = createCairnClient({ url: location.origin, token: () => token });

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 2_000,
      retry: (n, err) => n < 2 && status(err) >= 500,
    },
  },
});

export function status(err: unknown): number {
  return (err as { data?: { httpStatus?: number } })?.data?.httpStatus ?? 0;
}

/** A problem's words (RFC 9457 detail, or its field errors). */
export function message(err: unknown): string {
  const p = (err as { data?: { problem?: { detail?: string; title?: string; errors?: { pointer: string; message: string }[] } } })?.data?.problem;
  if (p?.errors?.length) return p.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ');
  return p?.detail ?? p?.title ?? (err instanceof Error ? err.message : String(err));
}

export { ymd, localToday } from './dates.js';
