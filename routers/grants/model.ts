// Connected apps (docs/api.md "OAuth 2.1: approvals and connected apps"): the active grants of the
// caller, paged like every list (spec §4.1, issue 28 item 10: `{data, next_cursor}`), oldest
// first as personal tokens are (routers/keys/model.ts). Revoking stays in ../oauth/model.ts.
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import { oauthClients, oauthGrants } from '../../db/schema/index.js';
import { finishPage, pageConditions, type ListQuery, type PageSpec } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import { iso, isoOrNull } from '../../core/clock.js';
import type { Principal } from '../auth/credentials.js';

export function listGrants(deps: Deps, p: Principal, query: ListQuery) {
  const spec: PageSpec = {
    key: deps.keys.cursor,
    scope: `${p.userId}:grants`,
    query,
    sortCol: oauthGrants.createdAt,
    idCol: oauthGrants.id,
    // A grant changes only by being revoked (then it leaves the list): its creation is its last change.
    updatedCol: oauthGrants.createdAt,
    numericSort: true,
  };
  const { where, fetch, limit } = pageConditions(spec);
  const rows = deps.db
    .select({ g: oauthGrants, clientName: oauthClients.name })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthGrants.userId, p.userId), isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, deps.clock()), ...where))
    .orderBy(asc(oauthGrants.createdAt), asc(oauthGrants.id))
    .limit(fetch)
    .all();
  return finishPage(spec, rows, limit, ({ g }) => ({ k: String(g.createdAt), i: g.id }), ({ g, clientName }) => ({
    id: g.id,
    client: { id: g.clientId, name: clientName, verified: false as const },
    scopes: JSON.parse(g.scopes) as string[],
    resource: g.resource,
    createdAt: iso(g.createdAt),
    expiresAt: iso(g.expiresAt),
    lastUsedAt: isoOrNull(g.lastUsedAt),
  }));
}
