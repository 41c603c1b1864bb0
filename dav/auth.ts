// Who a CalDAV request is (issue 30 item 1, docs/caldav.md "App passwords"): HTTP Basic with the
// account's email and an app password (a personal token created with audience `dav`), resolved by
// routers/auth/credentials.ts `authenticateBasic`. A Bearer credential (a session, an OAuth token,
// a `rest` token) is refused here with 401 and the Basic challenge (dav/errors.ts).
//
// Rate limits: the same per-credential buckets as /v1 and /trpc (routers/middleware/rate-limit.ts):
// `credential` (600 requests per 5 minutes) before the lookup, keyed by SHA-256 of the token's
// secret, so every spelling of the header (the email's case) counts in one bucket; and
// `credentialWrites` (120 per 5 minutes) for each write. docs/caldav.md "Rate limits" has the
// arithmetic of a client syncing 100 lists every 15 minutes.
import { createHash } from 'node:crypto';
import type { Deps } from '../routers/deps.js';
import { authenticateBasic, parseBasicHeader, type Principal } from '../routers/auth/credentials.js';
import { limitCredential, limitRoute, type RateContext, type RateTracker } from '../routers/middleware/rate-limit.js';

export type DavAuth = { principal: Principal; rate: RateContext };

export async function authenticateDav(deps: Deps, authorization: string | undefined, rate: RateTracker | undefined, ip: string): Promise<DavAuth> {
  const basic = parseBasicHeader(authorization);
  const subject = basic?.bearer?.subject ?? (authorization?.trim() ? createHash('sha256').update(authorization.trim(), 'utf8').digest('base64url') : undefined);
  // `bearer: null` keeps the procedure layer's parser off this header: the subject is set here.
  const ctx: RateContext = { deps, authorization, ip, rate, credentialSubject: subject, bearer: null };
  limitCredential(ctx);
  const principal = await authenticateBasic(deps, basic);
  return { principal, rate: ctx };
}

/** The write bucket, once per write request (before the write is queued). */
export function limitWrite(auth: DavAuth): void {
  limitRoute(auth.rate, { mutation: true, userId: auth.principal.userId })(true);
}
