// The authentication and buckets of an authenticated procedure, for the plain routes that are
// not procedures (raw file bodies, the streamed export, the import upload): the credential bucket,
// the credential itself, its grants (scopes, or first-party only) and the route's buckets, counted
// up front (a write counts whatever its outcome, as the procedures count it).
import type { Request } from 'express';
import type { Deps } from '../routers/deps.js';
import { authenticate, type Principal } from '../routers/auth/credentials.js';
import { requireGrants, type Meta } from '../routers/trpc.js';
import { limitCredential, limitRoute } from '../routers/middleware/rate-limit.js';
import { requestExtras } from './rate-limit.js';
import { requestState } from './state.js';

export async function plainPrincipal(deps: Deps, req: Request, grants: Pick<Meta, 'scopes' | 'firstPartyOnly'>, write: boolean): Promise<Principal> {
  const state = requestState(req);
  const ctx = { deps, authorization: req.headers.authorization, ip: state.ip, rate: requestExtras(req).rate };
  limitCredential(ctx);
  const principal = await authenticate(deps, ctx.authorization);
  requireGrants(principal, grants);
  limitRoute(ctx, { mutation: write, userId: principal.userId })(true);
  return principal;
}
