// OAuth 2.1 authorization server (spec §5.2, DECISIONS §7): registration, authorization requests
// approved on a trusted device, the authorization code and its redemption. Tokens: ./tokens.ts.
import { createHash, randomInt } from 'node:crypto';
import { and, eq, gt, inArray, isNull } from 'drizzle-orm';
import { oauthClients, oauthGrants, oauthRequests, oauthTokens } from '../../db/schema/index.js';
import { flushDeleted, type Db, type Tx } from '../../db/client.js';
import type { Deps } from '../deps.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { credentialKek, unwrapDataKey, wrapDataKey } from '../../core/crypto/keywrap.js';
import { constantTimeEqual, fromB64u, hmacSha256, newSecret, sha256, toB64u } from '../../core/crypto/secrets.js';
import { SealError } from '../../core/crypto/seal.js';
import { SCOPES, type Scope } from '../../core/scopes.js';
import type { Principal } from '../auth/credentials.js';
import { openWithHandle, sealToWait, waitPublicKey } from './code-box.js';
import { MAX_REDIRECT_URIS, landsOnUsersDevice, matchRedirectUri, redirectUriProblem } from './redirect-uris.js';
import { PHISHING_WARNING, ageWords, describeUserAgent, displayAddress, networkOf, openContext, sameNetwork, sealContext, type StartContext } from './request-context.js';
import { OAUTH_TTL, OAuthError, mintPair, revokeGrant, setRevokeUserCodes, tokenKind, tokenPurpose, type MintedPair } from './tokens.js';

export type Client = typeof oauthClients.$inferSelect;
type Request = typeof oauthRequests.$inferSelect;

export const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/**
 * The resources this server issues tokens for (RFC 8707): the REST API is PUBLIC_URL exactly
 * (DECISIONS §1), the MCP server PUBLIC_URL/mcp (issue 31, DECISIONS §8). A token takes its
 * grant's resource as its audience and is refused at every other (tokens.ts authenticateOAuth).
 */
export function servedResources(deps: Deps): string[] {
  return [deps.config.publicUrl, `${deps.config.publicUrl}/mcp`];
}

// ---- Registration (RFC 7591) ------------------------------------------------------------------

export type RegisterBody = Record<string, unknown>;

export function registerClient(deps: Deps, body: RegisterBody) {
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array.');
  if (uris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `At most ${MAX_REDIRECT_URIS} redirect_uris.`);
  uris.forEach((u, i) => {
    const p = redirectUriProblem(u);
    if (p) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${i}] ${p}.`);
  });
  const name = body.client_name;
  if (typeof name !== 'string' || !name.trim() || name.length > 256) throw new OAuthError('invalid_client_metadata', 'client_name must be a string of 1 to 256 characters.');
  const method = body.token_endpoint_auth_method ?? 'none';
  if (typeof method !== 'string' || !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`);
  }
  const gt = body.grant_types;
  if (gt !== undefined && (!Array.isArray(gt) || gt.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold only authorization_code and refresh_token.');
  }
  const rt = body.response_types;
  if (rt !== undefined && (!Array.isArray(rt) || rt.some((r) => r !== 'code'))) throw new OAuthError('invalid_client_metadata', 'response_types may hold only code.');
  const id = 'cl_' + toB64u(newSecret().subarray(0, 18));
  const secret = method === 'none' ? null : newSecret();
  const now = deps.clock();
  const redirectUris = [...new Set(uris as string[])];
  deps.db
    .insert(oauthClients)
    .values({ id, name, redirectUris: JSON.stringify(redirectUris), authMethod: method as AuthMethod, secretHash: secret ? sha256(secret) : null, createdAt: now })
    .run();
  return {
    client_id: id,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: name,
    redirect_uris: redirectUris,
    token_endpoint_auth_method: method,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(secret ? { client_secret: toB64u(secret), client_secret_expires_at: 0 } : {}),
  };
}

export function clientById(deps: Deps, id: string): Client | undefined {
  return deps.db.select().from(oauthClients).where(eq(oauthClients.id, id)).get();
}

/**
 * Token endpoint client authentication per the registered method (RFC 6749 §2.3). A secret is
 * compared by its SHA-256 in constant time.
 */
export function authenticateClient(deps: Deps, form: URLSearchParams, authorization: string | undefined): Client {
  let id: string | null = null;
  let secret: string | null = null;
  let method: AuthMethod;
  const basic = authorization && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (authorization && !basic) throw new OAuthError('invalid_client', 'Unsupported Authorization header.', 401, { 'WWW-Authenticate': 'Basic realm="oauth"' });
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401, { 'WWW-Authenticate': 'Basic realm="oauth"' });
    try {
      id = decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401, { 'WWW-Authenticate': 'Basic realm="oauth"' });
    }
    if (form.has('client_secret')) throw new OAuthError('invalid_request', 'Use one client authentication method.');
    method = 'client_secret_basic';
  } else if (form.has('client_secret')) {
    id = form.get('client_id');
    secret = form.get('client_secret');
    method = 'client_secret_post';
  } else {
    id = form.get('client_id');
    method = 'none';
  }
  if (form.has('client_id') && id !== form.get('client_id')) throw new OAuthError('invalid_client', 'client_id does not match the authenticated client.', 401);
  const client = id ? clientById(deps, id) : undefined;
  const fail = () => new OAuthError('invalid_client', 'Client authentication failed.', 401, method === 'client_secret_basic' ? { 'WWW-Authenticate': 'Basic realm="oauth"' } : {});
  if (!client) throw fail();
  if (client.authMethod !== method) throw fail();
  if (method !== 'none') {
    const presented = secret ? fromB64u(secret) : null;
    const hash = presented ? sha256(presented) : sha256('');
    if (!client.secretHash || !presented || !constantTimeEqual(hash, client.secretHash)) throw fail();
  }
  return client;
}

// ---- Authorization requests -------------------------------------------------------------------

/** The page's nine-digit code, stored as an HMAC under a server key (not guessable from the DB). */
function userCodeHash(deps: Deps, code: string): Buffer {
  return hmacSha256(deps.keys.cursor, `oauth user code\0${code}`);
}

export function normaliseUserCode(raw: string): string | null {
  const digits = raw.replace(/[\s-]/g, '');
  return /^\d{9}$/.test(digits) ? digits : null;
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 3)}-${code.slice(3, 6)}-${code.slice(6)}`;
}

export type AuthorizeParams = { client: Client; redirectUri: string; scopes: Scope[]; resource: string; codeChallenge: string; state: string | null; started: StartContext };

/** Stores a pending request; returns the nine-digit code and the page's wait handle. */
export function createAuthorizationRequest(deps: Deps, p: AuthorizeParams): { id: string; userCode: string; waitHandle: string; expiresAt: number } {
  const now = deps.clock();
  const handle = newSecret();
  const id = newId();
  for (let attempt = 0; ; attempt++) {
    const userCode = String(randomInt(0, 1_000_000_000)).padStart(9, '0');
    const hash = userCodeHash(deps, userCode);
    const taken = deps.db.select({ id: oauthRequests.id }).from(oauthRequests).where(eq(oauthRequests.userCodeHash, hash)).get();
    if (taken && attempt < 5) continue;
    if (taken) throw new Error('could not draw a free user code');
    deps.db
      .insert(oauthRequests)
      .values({
        id,
        clientId: p.client.id,
        redirectUri: p.redirectUri,
        scopes: JSON.stringify(p.scopes),
        resource: p.resource,
        codeChallenge: p.codeChallenge,
        state: p.state,
        userCodeHash: hash,
        waitHash: sha256(handle),
        waitPublicKey: waitPublicKey(handle),
        status: 'pending',
        startedContext: sealContext(deps.keys.unattended, id, p.started),
        createdAt: now,
        expiresAt: now + OAUTH_TTL.requestMs,
      })
      .run();
    return { id, userCode, waitHandle: toB64u(handle), expiresAt: now + OAUTH_TTL.requestMs };
  }
}

function pendingByCode(deps: Deps, tx: Tx | Db, rawCode: string): { req: Request; client: Client } {
  const code = normaliseUserCode(rawCode);
  if (!code) throw new AppError('not_found', 'No pending approval has this code.');
  const req = tx
    .select()
    .from(oauthRequests)
    .where(and(eq(oauthRequests.userCodeHash, userCodeHash(deps, code)), eq(oauthRequests.status, 'pending'), gt(oauthRequests.expiresAt, deps.clock())))
    .get();
  if (!req) throw new AppError('not_found', `No pending approval has this code (codes expire after ${OAUTH_TTL.requestMs / 60_000} minutes and are decided once).`);
  const client = tx.select().from(oauthClients).where(eq(oauthClients.id, req.clientId)).get()!;
  return { req, client };
}

/**
 * The address of the request deciding: null for an in-process call (the CLI, which runs on the
 * server's own machine, so it counts as loopback); '' when HTTP gave none (an unknown network).
 */
export type ApproverAddress = string | null;

/** Where the request started and how that compares with the approver's network (docs/oauth.md "Approval phishing"). */
function startedFrom(deps: Deps, req: Request, approver: ApproverAddress) {
  const ctx = openContext(deps.keys.unattended, req.id, req.startedContext);
  const network = networkOf(ctx?.ip);
  const yours = approver === null ? 'loopback' : networkOf(approver);
  const address = ctx ? displayAddress(ctx.ip) : null;
  const device = describeUserAgent(ctx?.userAgent ?? null);
  const ageSeconds = Math.max(0, Math.round((deps.clock() - req.createdAt) / 1000));
  const same = sameNetwork(network, yours);
  const where = network === 'loopback' ? "the server's own machine (loopback)" : network === 'unknown' ? 'an unknown network' : `${network}${address ? ` (address ${address})` : ''}`;
  return {
    startedFrom: {
      startedAt: iso(req.createdAt),
      ageSeconds,
      network,
      address,
      userAgent: ctx?.userAgent ?? null,
      device,
      sameNetworkAsYou: same,
      summary: `Started ${ageWords(ageSeconds)} from ${where}, ${device}. ${same ? 'That is your network too.' : `You are on ${yours === 'loopback' ? 'loopback' : yours === 'unknown' ? 'an unknown network' : yours}: another network.`}`,
    },
    yourNetwork: yours,
    confirmOtherNetworkRequired: !same,
    warning: PHISHING_WARNING,
  };
}

function approvalView(deps: Deps, req: Request, client: Client, code: string, approver: ApproverAddress) {
  return {
    code: normaliseUserCode(code)!,
    client: { id: client.id, name: client.name, verified: false as const },
    scopes: JSON.parse(req.scopes) as Scope[],
    resource: req.resource,
    redirectUri: req.redirectUri,
    expiresAt: iso(req.expiresAt),
    ...startedFrom(deps, req, approver),
  };
}

/** GET /v1/approvals/{code}. */
export function lookupApproval(deps: Deps, _p: Principal, code: string, approver: ApproverAddress) {
  const { req, client } = pendingByCode(deps, deps.db, code);
  return approvalView(deps, req, client, code, approver);
}

/**
 * POST /v1/approvals/{code}/approve (inside atomic's transaction). The session's data key is wrapped
 * under a key derived from a fresh authorization code; the code itself is sealed to the waiting
 * page's public key, so neither is readable from the database alone.
 */
export function approve(deps: Deps, tx: Tx | Db, p: Principal, code: string, scopes: string[], approver: ApproverAddress, confirmOtherNetwork: boolean) {
  const { req, client } = pendingByCode(deps, tx, code);
  const requested = JSON.parse(req.scopes) as string[];
  const extra = scopes.filter((s) => !requested.includes(s));
  if (extra.length) throw new AppError('validation_failed', `Only requested scopes can be granted; not requested: ${extra.join(', ')}.`, { pointer: '/scopes' });
  const view = approvalView(deps, req, client, code, approver);
  // Issue 28 item 1 (docs/oauth.md "Approval phishing"): a request started on another network than
  // the approver's is the shape of a phished code, so approving it takes an explicit second yes.
  if (view.confirmOtherNetworkRequired && !confirmOtherNetwork) {
    const from = view.startedFrom.network === 'unknown' ? 'an unknown network' : view.startedFrom.network;
    throw new AppError(
      'validation_failed',
      `This request was started from ${from}, not from your network (${view.yourNetwork}). If someone gave you this code, deny it: whoever started the request gets the access. ` +
        'Approve only if you started it yourself on that other network (for example a phone on mobile data, or a VPN), by sending confirmOtherNetwork: true.',
      { pointer: '/confirmOtherNetwork' },
    );
  }
  const now = deps.clock();
  const authCode = newSecret();
  tx.update(oauthRequests)
    .set({
      status: 'approved',
      userId: p.userId,
      grantedScopes: JSON.stringify(requested.filter((s) => scopes.includes(s))),
      codeHash: sha256(authCode),
      wrappedKey: wrapDataKey(credentialKek(authCode, tokenKind('code')), p.userId, tokenPurpose(req.id), p.dek),
      sealedCode: sealToWait(req.waitPublicKey, req.id, authCode),
      codeExpiresAt: now + OAUTH_TTL.codeMs,
      startedContext: null,
    })
    .where(and(eq(oauthRequests.id, req.id), eq(oauthRequests.status, 'pending')))
    .run();
  return { ...view, scopes: requested.filter((s) => scopes.includes(s)) as Scope[], decision: 'approved' as const };
}

/** Denied is final: only a pending request can be approved (pendingByCode), so a denied one never is. */
export function deny(deps: Deps, tx: Tx | Db, _p: Principal, code: string, approver: ApproverAddress) {
  const { req, client } = pendingByCode(deps, tx, code);
  const view = approvalView(deps, req, client, code, approver);
  tx.update(oauthRequests)
    .set({ status: 'denied', startedContext: null })
    .where(and(eq(oauthRequests.id, req.id), eq(oauthRequests.status, 'pending')))
    .run();
  return { ...view, decision: 'denied' as const };
}

/**
 * Issue 28 item 3: whether any grant was ever completed for this client (a code redeemed). Until
 * one was, /oauth/authorize answers its errors with a page instead of redirecting to an https
 * callback, so a fresh registration is not an open redirect (rest/oauth.ts).
 */
export function clientHasCompletedGrant(deps: Deps, clientId: string): boolean {
  return !!deps.db.select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.clientId, clientId)).limit(1).get();
}

export type WaitResult = { status: 'pending'; expiresAt: string } | { status: 'done'; redirect: string } | { status: 'gone' };

function withParams(uri: string, params: Record<string, string | null>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.append(k, v);
  return u.href;
}

export function errorRedirect(deps: Deps, uri: string, error: string, description: string, state: string | null): string {
  return withParams(uri, { error, error_description: description, state, iss: deps.config.publicUrl });
}

/** The page's poll: once decided, where to send the browser (the code is handed over once). */
export function waitFor(deps: Deps, rawHandle: string): WaitResult {
  const handle = fromB64u(rawHandle);
  if (!handle || handle.length !== 32) return { status: 'gone' };
  return deps.db.transaction(
    (tx) => {
      const req = tx.select().from(oauthRequests).where(eq(oauthRequests.waitHash, sha256(handle))).get();
      if (!req) return { status: 'gone' } as const;
      const now = deps.clock();
      if (req.status === 'pending') {
        if (req.expiresAt <= now) return { status: 'done', redirect: errorRedirect(deps, req.redirectUri, 'access_denied', 'The approval code expired.', req.state) } as const;
        return { status: 'pending', expiresAt: iso(req.expiresAt) } as const;
      }
      if (req.status === 'denied') {
        tx.update(oauthRequests).set({ status: 'delivered' }).where(eq(oauthRequests.id, req.id)).run();
        return { status: 'done', redirect: errorRedirect(deps, req.redirectUri, 'access_denied', 'The user denied the request.', req.state) } as const;
      }
      if (req.status !== 'approved' || !req.sealedCode) return { status: 'gone' } as const;
      let code: Buffer;
      try {
        code = openWithHandle(handle, req.id, req.sealedCode);
      } catch (e) {
        if (e instanceof SealError) return { status: 'gone' } as const;
        throw e;
      }
      tx.update(oauthRequests).set({ status: 'delivered', sealedCode: null }).where(eq(oauthRequests.id, req.id)).run();
      return { status: 'done', redirect: withParams(req.redirectUri, { code: toB64u(code), state: req.state, iss: deps.config.publicUrl }) } as const;
    },
    { behavior: 'immediate' },
  );
}

/** Cancels codes not yet redeemed (spec §5.4): their wrapped keys go. */
function revokeUserCodes(tx: Tx | Db, userId: string): void {
  tx.update(oauthRequests)
    .set({ wrappedKey: null, sealedCode: null, status: 'denied' })
    .where(and(eq(oauthRequests.userId, userId), inArray(oauthRequests.status, ['approved', 'delivered'])))
    .run();
}
setRevokeUserCodes(revokeUserCodes);

// ---- Token endpoint: authorization_code --------------------------------------------------------

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export function exchangeCode(deps: Deps, client: Client, form: URLSearchParams): MintedPair {
  const codeRaw = form.get('code');
  const verifier = form.get('code_verifier');
  if (!codeRaw) throw new OAuthError('invalid_request', 'code is required.');
  if (!verifier || !VERIFIER.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier is required (43 to 128 unreserved characters; PKCE S256).');
  const code = fromB64u(codeRaw);
  if (!code || code.length !== 32) throw new OAuthError('invalid_grant', 'The authorization code is not valid.');
  const now = deps.clock();
  let replay = false;
  const out = deps.db.transaction(
    (tx) => {
      const req = tx.select().from(oauthRequests).where(eq(oauthRequests.codeHash, sha256(code))).get();
      if (!req || req.clientId !== client.id) throw new OAuthError('invalid_grant', 'The authorization code is not valid.');
      if (req.status === 'redeemed') {
        // A second redemption: the code leaked; what the first minted is revoked (RFC 6749 §4.1.2).
        replay = true;
        if (req.grantId) revokeGrant(tx, req.grantId, now);
        return null;
      }
      if ((req.status !== 'delivered' && req.status !== 'approved') || !req.wrappedKey || !req.userId) throw new OAuthError('invalid_grant', 'The authorization code is not valid.');
      if ((req.codeExpiresAt ?? 0) <= now) throw new OAuthError('invalid_grant', 'The authorization code expired (codes live 60 seconds).');
      const redirectUri = form.get('redirect_uri');
      if (redirectUri !== null && redirectUri !== req.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
      const resource = form.get('resource');
      if (resource !== null && resource !== req.resource) throw new OAuthError('invalid_target', 'resource does not match the one authorized.');
      if (!constantTimeEqual(Buffer.from(s256(verifier)), Buffer.from(req.codeChallenge))) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
      let dek: Buffer;
      try {
        dek = unwrapDataKey(credentialKek(code, tokenKind('code')), req.userId, tokenPurpose(req.id), req.wrappedKey);
      } catch (e) {
        if (e instanceof SealError) throw new OAuthError('invalid_grant', 'The authorization code is not valid.');
        throw e;
      }
      const grantId = newId();
      tx.insert(oauthGrants)
        .values({ id: grantId, userId: req.userId, clientId: client.id, scopes: req.grantedScopes ?? '[]', resource: req.resource, createdAt: now, expiresAt: now + OAUTH_TTL.grantMs, lastUsedAt: now })
        .run();
      tx.update(oauthRequests).set({ status: 'redeemed', wrappedKey: null, sealedCode: null, grantId }).where(eq(oauthRequests.id, req.id)).run();
      const grant = tx.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get()!;
      const pair = mintPair(tx, deps, grant, dek, null);
      dek.fill(0);
      return pair;
    },
    { behavior: 'immediate' },
  );
  // The code's wrap (or, on a replay, the grant's) is gone: out of the WAL too.
  flushDeleted(deps.db);
  if (replay || !out) throw new OAuthError('invalid_grant', 'The authorization code was already used; the tokens minted with it are revoked.');
  return out;
}

// ---- Grants (/v1/grants) ----------------------------------------------------------------------

// Listing lives in ../grants/model.ts (paged like every list); revoking stays here.

export function revokeGrantById(deps: Deps, tx: Tx | Db, p: Principal, id: string): void {
  const g = tx.select({ id: oauthGrants.id }).from(oauthGrants).where(and(eq(oauthGrants.userId, p.userId), eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt))).get();
  if (!g) throw notFound('Grant');
  revokeGrant(tx, id, deps.clock());
}

export function parseScopeParam(raw: string | null): { scopes: Scope[] } | { error: string } {
  if (!raw || !raw.trim()) return { error: 'scope is required.' };
  const list = raw.split(' ').filter(Boolean);
  const unknown = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) return { error: `Unknown scope: ${unknown.join(', ')}.` };
  return { scopes: [...new Set(list)] as Scope[] };
}

export { landsOnUsersDevice, matchRedirectUri };

/** For the purge job: rows of requests, codes and tokens that can no longer be used. */
export const _tables = { oauthRequests, oauthTokens, oauthGrants };
