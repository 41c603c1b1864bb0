// The REST route table, read from procedure meta: success statuses, scopes, and the method/path
// patterns behind 405 answers.
import { appRouter } from '../routers/index.js';
import type { Meta } from '../routers/trpc.js';

export type RouteInfo = {
  procedurePath: string;
  method: string;
  path: string;
  pattern: RegExp;
  meta: Meta;
};

function collect(): RouteInfo[] {
  const out: RouteInfo[] = [];
  const procs = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>;
  for (const [procedurePath, proc] of Object.entries(procs)) {
    const meta = proc._def.meta;
    if (!meta?.openapi || meta.openapi.enabled === false) continue;
    const path = meta.openapi.path;
    const pattern = new RegExp('^' + path.replace(/\{[^}]+\}/g, '[^/]+') + '/?$', 'i');
    out.push({ procedurePath, method: meta.openapi.method, path, pattern, meta });
  }
  return out;
}

export const REST_ROUTES: RouteInfo[] = collect();

export const ROUTE_BY_PROCEDURE = new Map(REST_ROUTES.map((r) => [r.procedurePath, r]));

/** The plain (non-procedure) /v1 routes of server/app.ts: rest/files.ts. */
const PLAIN_V1: { method: string; pattern: RegExp }[] = [
  { method: 'POST', pattern: /^\/v1\/attachments\/files\/?$/i },
  { method: 'GET', pattern: /^\/v1\/attachments\/[^/]+\/file\/?$/i },
];

/** Methods that some route serves at this path (for 405 and Allow). */
export function methodsAt(pathname: string): string[] {
  return [...new Set([...REST_ROUTES, ...PLAIN_V1].filter((r) => r.pattern.test(pathname)).map((r) => r.method))];
}
