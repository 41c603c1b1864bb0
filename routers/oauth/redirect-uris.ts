// Redirect URI rules (RFC 6749 §3.1.2, RFC 8252 §7, OAuth 2.1 §2.3.1): https anywhere; http only
// for loopback hosts (whose port may vary at authorize time); private-use schemes in reverse-domain
// form for native apps; never javascript:, data:, file: (or any other scheme); no fragments.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'filesystem:', 'ws:', 'wss:']);
// A private-use scheme: a reverse domain name (at least one dot), RFC 8252 §7.1.
const PRIVATE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

export const MAX_REDIRECT_URIS = 10;

/** Null when acceptable, else the reason (for `invalid_redirect_uri`). */
export function redirectUriProblem(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0) return 'must be a non-empty string';
  if (raw.length > 2048) return 'must be at most 2048 characters';
  if (raw.includes('#')) return 'must not contain a fragment';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URI';
  }
  const scheme = u.protocol.toLowerCase();
  if (FORBIDDEN.has(scheme)) return `the ${scheme} scheme is not allowed`;
  if (u.username || u.password) return 'must not carry user information';
  if (scheme === 'https:') return u.hostname ? null : 'must name a host';
  if (scheme === 'http:') return LOOPBACK_HOSTS.has(u.hostname) ? null : 'http is allowed only for loopback hosts (localhost, 127.0.0.1, [::1]); use https';
  if (PRIVATE_SCHEME.test(scheme)) return null;
  return 'must be https, http on a loopback host, or a private-use scheme in reverse-domain form (com.example.app:/callback)';
}

function isLoopbackHttp(u: URL): boolean {
  return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
}

/** The registered URI the presented one matches: exact, except a loopback port (RFC 8252 §7.3). */
export function matchRedirectUri(registered: readonly string[], presented: string): string | null {
  if (registered.includes(presented)) return presented;
  let p: URL;
  try {
    p = new URL(presented);
  } catch {
    return null;
  }
  if (!isLoopbackHttp(p) || presented.includes('#')) return null;
  for (const r of registered) {
    const u = new URL(r);
    if (!isLoopbackHttp(u)) continue;
    const a = new URL(r);
    a.port = '';
    const b = new URL(presented);
    b.port = '';
    if (a.href === b.href) return presented;
  }
  return null;
}

/**
 * A callback that lands on the user's own machine (issue 28 item 3): a loopback host (any scheme
 * this file accepts) or a private-use scheme (RFC 8252 §7.1, §7.3). Error redirects there are no
 * open redirect; to any other https callback they are only once the client completed a grant.
 */
export function landsOnUsersDevice(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (LOOPBACK_HOSTS.has(u.hostname)) return u.protocol === 'http:' || u.protocol === 'https:';
  return PRIVATE_SCHEME.test(u.protocol.toLowerCase());
}
