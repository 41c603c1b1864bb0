// CORS for browser clients of /v1, /trpc and the OAuth endpoints a browser app calls (issue 13 item 2; docs/security.md "Browsers and
// CORS"). Credentials are bearer tokens a script must attach itself; the API reads no cookie and
// no ambient credential, so a page on another origin gains nothing a plain HTTP client would not
// have: any origin may call, and no answer says Access-Control-Allow-Credentials.
import type { NextFunction, Request, Response } from 'express';

// The API, and what a browser-based OAuth client (a public client with PKCE, docs/oauth.md) calls
// from its own origin: the discovery documents, registration and the token endpoint. The authorize
// page and its wait endpoint are same-origin only (a navigation and the page's own script).
const API = /^\/(?:v1|trpc)(?:[/?]|$)/;
const OAUTH_FOR_BROWSERS = /^\/(?:oauth\/(?:token|register)|\.well-known\/oauth-(?:authorization-server|protected-resource))(?:\?|$)/;
const crossOrigin = (url: string) => API.test(url) || OAUTH_FOR_BROWSERS.test(url);

/** What a browser may send beyond the CORS-safelisted headers. */
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key';
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** Response headers a script may read beyond the safelisted ones (spec §4.2, §8.1, §7). */
const EXPOSE_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, Idempotent-Replayed, WWW-Authenticate, Allow';

/** Sets Access-Control-Allow-Origin on every API answer, errors and 429s included (set before the edge bucket runs). */
export function corsHeaders(req: Request, res: Response, next: NextFunction): void {
  if (crossOrigin(req.url)) {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
  }
  next();
}

/** Answers a preflight (any OPTIONS under /v1 or /trpc) with 204; mounted after the edge bucket so it carries RateLimit-*. */
export function preflight(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'OPTIONS' || !crossOrigin(req.url)) return next();
  res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
  res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
  // Browsers cap this (Chromium at 2 h); 10 min keeps a changed policy from lingering.
  res.setHeader('Access-Control-Max-Age', '600');
  res.statusCode = 204;
  res.end();
}
