// OAuth 2.1 over HTTP (spec §5.2, DECISIONS §7; docs/oauth.md): discovery (RFC 8414, RFC 9728),
// registration (RFC 7591), the authorize page and its wait endpoint, and the token endpoint.
// Errors here are RFC 6749 JSON (`{error, error_description}`); a 429 stays the `rate_limited`
// problem every bucket answers (spec §8.1), with RFC 6749's `error: "temporarily_unavailable"` and
// `error_description` added as extension members so an OAuth client library reads it as an OAuth
// error too. Models: routers/oauth/.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Deps } from '../routers/deps.js';
import { SCOPES } from '../core/scopes.js';
import { AppError } from '../core/errors.js';
import { routeLimit } from './rate-limit.js';
import { sendProblem } from './send.js';
import { OAuthError, refreshGrant } from '../routers/oauth/tokens.js';
import * as m from '../routers/oauth/model.js';
import { AUTHORIZE_JS, FAVICON_ICO, OAUTH_CSP, OAUTH_CSS, authorizePage, errorPageHtml } from './oauth-pages.js';
import { requestState } from './state.js';
import { boundUserAgent } from '../routers/oauth/request-context.js';
import { ClientMetadataError, isMetadataClientId, resolveMetadataClient, type ClientMetadata } from '../routers/oauth/client-metadata.js';
import { sha256, toB64u } from '../core/crypto/secrets.js';

const FAVICON_ETAG = `"${toB64u(sha256(FAVICON_ICO)).slice(0, 16)}"`;

function pageHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', OAUTH_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}

function sendOAuthError(res: Response, e: OAuthError): void {
  res.status(e.status);
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  res.setHeader('Cache-Control', 'no-store');
  res.json({ error: e.error, error_description: e.description });
}

/** The raw form body as URLSearchParams, refusing repeated parameters (RFC 6749 §3.1, §3.2). */
function formOf(req: Request): URLSearchParams {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
  const seen = new Set<string>();
  for (const k of form.keys()) {
    if (seen.has(k)) throw new OAuthError('invalid_request', `Parameter ${k} is repeated.`);
    seen.add(k);
  }
  return form;
}

export function oauthMetadata(deps: Deps) {
  const base = deps.config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    // Issue 31: an https client_id names its metadata document (routers/oauth/client-metadata.ts).
    client_id_metadata_document_supported: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...m.AUTH_METHODS],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  };
}

export function oauthRoutes(deps: Deps): Router {
  const r = express.Router();
  const text = express.text({ type: () => true, limit: '16kb' });

  // RFC 9728: the REST API's resource identifier is PUBLIC_URL exactly (DECISIONS §1); §3.3 wants
  // the metadata at the root well-known path to carry that same value.
  r.get('/.well-known/oauth-protected-resource', (_req, res) => {
    res.json({
      resource: deps.config.publicUrl,
      authorization_servers: [deps.config.publicUrl],
      bearer_methods_supported: ['header'],
      scopes_supported: [...SCOPES],
      resource_documentation: `${deps.config.publicUrl}/docs`,
    });
  });
  r.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json(oauthMetadata(deps));
  });

  // Every page's favicon (issue 28 item 14): cached a day, revalidated by its ETag.
  r.get('/favicon.ico', (req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('ETag', FAVICON_ETAG);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.headers['if-none-match'] === FAVICON_ETAG) return res.status(304).end();
    res.type('image/x-icon').send(FAVICON_ICO);
  });

  r.get('/oauth/static/style.css', (_req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type("text/css").send(OAUTH_CSS);
  });
  r.get('/oauth/static/authorize.js', (_req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('application/javascript').send(AUTHORIZE_JS);
  });

  // /app is the web app (app/serve.ts, docs/app.md): the console's features are in its Settings.

  r.post('/oauth/register', routeLimit(deps, 'oauthRegister'), express.json({ limit: '16kb', type: () => true }), (req, res) => {
    const body = req.body as unknown;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object.');
    const out = m.registerClient(deps, body as m.RegisterBody);
    res.status(201).setHeader('Cache-Control', 'no-store');
    res.json(out);
  });

  r.get('/oauth/authorize', routeLimit(deps, 'oauthAuthorize'), async (req, res) => {
    pageHeaders(res);
    const q = new URLSearchParams(req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '');
    const one = (k: string) => q.getAll(k);
    const page = (status: number, title: string, detail: string) => res.status(status).type('html').send(errorPageHtml(title, detail));
    // Errors that make redirecting unsafe: an HTML page, no redirect (RFC 6749 §4.1.2.1).
    const clientIds = one('client_id');
    if (clientIds.length !== 1) return page(400, 'Unknown app', 'The request names no app (client_id), or names it more than once.');
    // A client_id that is a URL names the app's metadata document (docs/oauth.md "Client ID
    // Metadata Documents"): fetched and checked before anything else, and since its callbacks are
    // unknown until then, whatever goes wrong is a page, never a redirect.
    let client: m.Client | undefined;
    let document: ClientMetadata | null = null;
    if (isMetadataClientId(clientIds[0]!)) {
      try {
        ({ client, meta: document } = await resolveMetadataClient(deps, clientIds[0]!));
      } catch (e) {
        if (e instanceof ClientMetadataError) return page(400, 'App metadata unavailable', e.message);
        throw e;
      }
    } else client = m.clientById(deps, clientIds[0]!);
    if (!client) return page(400, 'Unknown app', 'No app is registered with this client_id.');
    const redirects = one('redirect_uri');
    const registered = JSON.parse(client.redirectUris) as string[];
    const redirectUri = redirects.length === 1 ? m.matchRedirectUri(registered, redirects[0]!) : redirects.length === 0 && registered.length === 1 ? registered[0]! : null;
    if (!redirectUri) return page(400, 'Unregistered callback', `The callback address (redirect_uri) is missing or is not one this app ${document ? 'lists in its metadata document' : 'registered'}.`);
    const state = q.get('state');
    // Issue 28 item 3: with open registration an error redirect to a fresh https callback is an
    // open redirect. Those answer a page with a link naming the callback; callbacks on the user's
    // own machine (loopback, private-use schemes) and clients that completed a grant keep RFC
    // 6749 §4.1.2.1's redirect.
    const fail = (error: string, description: string) => {
      const target = m.errorRedirect(deps, redirectUri, error, description, state);
      if (m.landsOnUsersDevice(redirectUri) || m.clientHasCompletedGrant(deps, client.id)) return res.redirect(303, target);
      return res.status(400).type('html').send(errorPageHtml('The app\'s request cannot be answered', `${description} (${error})`, { href: target, callback: redirectUri }));
    };
    for (const k of new Set(q.keys())) if (q.getAll(k).length > 1) return fail('invalid_request', `Parameter ${k} is repeated.`);
    if (q.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
    const challenge = q.get('code_challenge');
    if (!challenge || q.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256.');
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters).');
    const resource = q.get('resource');
    if (!resource || !m.servedResources(deps).includes(resource)) return fail('invalid_target', `resource is required and must be a resource this server serves (${m.servedResources(deps).join(', ')}).`);
    const scope = m.parseScopeParam(q.get('scope'));
    if ('error' in scope) return fail('invalid_scope', scope.error);
    if (state !== null && state.length > 1024) return fail('invalid_request', 'state is longer than 1024 characters.');
    // Where and when it started (issue 28 item 1): shown to whoever approves, compared with their network.
    const started = { ip: requestState(req).ip, userAgent: boundUserAgent(req.headers['user-agent']) };
    const created = m.createAuthorizationRequest(deps, { client, redirectUri, scopes: scope.scopes, resource, codeChallenge: challenge, state, started });
    res.status(200).type('html').send(
      authorizePage({ redirectUri, clientName: client.name, document, scopes: scope.scopes, userCode: created.userCode, waitHandle: created.waitHandle, consoleUrl: `${deps.config.publicUrl}/app#code=${created.userCode}` }),
    );
  });

  r.post('/oauth/authorize/wait', text, (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const form = formOf(req);
    res.json(m.waitFor(deps, form.get('handle') ?? ''));
  });

  r.post('/oauth/token', routeLimit(deps, 'oauthToken'), text, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    const form = formOf(req);
    // A metadata-document client is (re)read here too (from the cache while fresh): a document
    // taken down ends the client's exchanges and refreshes.
    const presented = form.get('client_id');
    if (presented !== null && isMetadataClientId(presented)) {
      try {
        await resolveMetadataClient(deps, presented);
      } catch (e) {
        if (e instanceof ClientMetadataError) throw new OAuthError('invalid_client', e.message, 401);
        throw e;
      }
    }
    const client = m.authenticateClient(deps, form, req.headers.authorization);
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') return res.json(m.exchangeCode(deps, client, form));
    if (grantType === 'refresh_token') {
      const token = form.get('refresh_token');
      if (!token) throw new OAuthError('invalid_request', 'refresh_token is required.');
      return res.json(refreshGrant(deps, client.id, token, { scope: form.get('scope') ?? undefined, resource: form.get('resource') ?? undefined }));
    }
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  });

  r.all(['/oauth/register', '/oauth/token', '/oauth/authorize/wait'], (req, res) => {
    res.status(405).setHeader('Allow', 'POST');
    res.json({ error: 'invalid_request', error_description: `${req.method} is not allowed here.` });
  });

  // RFC 6749 JSON for protocol errors and for bodies Express refused; problems for the rest.
  r.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (err instanceof OAuthError) return sendOAuthError(res, err);
    if (err instanceof AppError) {
      if (err.problemCode === 'rate_limited') return sendProblem(deps, req, res, err, { error: 'temporarily_unavailable', error_description: err.detail });
      return sendProblem(deps, req, res, err);
    }
    const status = (err as { status?: number; type?: string }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendOAuthError(res, new OAuthError('invalid_request', status === 413 ? 'The body is too large.' : 'The body could not be read.', status === 413 ? 413 : 400));
    }
    next(err);
  });
  return r;
}
