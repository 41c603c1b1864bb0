// What the access log records as a request's path (server/handler.ts): the path without its query
// string, with bearer secrets that travel in a path replaced. Today that is the nine-digit OAuth
// approval code of `/v1/approvals/{code}[/approve|/deny]`: while pending it lets whoever holds it
// decide the authorization, so it is a secret (docs/security.md "OAuth", "Logs") and never logged.
//
// Issue 28 item 4: the redaction must hold for every spelling the router accepts, and more. The
// /v1 router (rest/v1.ts) matches its patterns case-insensitively, drops one leading and one
// trailing slash, and percent-decodes the parameter (dashes and spaces in the code are ignored),
// so `/v1/APPROVALS/495%2D220%2D154/` routes like `/v1/approvals/495220154`. The path is read
// here more loosely than any router does: segments split at `/`, `\` and their percent-encoded
// forms, each compared percent-decoded and lower-cased, with empty and dot segments skipped. When
// the first two are `v1` and `approvals`, every later segment that is not a plain word (the
// action: `approve`, `deny`) is replaced, whatever it holds.
const PREFIX = ['v1', 'approvals'] as const;
const SEPARATORS = /(\/|\\|%2f|%5c)/i;
const WORD = /^[a-z]+$/;

function fold(segment: string): string {
  let s = segment;
  if (s.includes('%')) {
    try {
      s = decodeURIComponent(s);
    } catch {
      /* a bad escape: compared as sent (the router does the same with a parameter) */
    }
  }
  return s.toLowerCase();
}

/**
 * Issue 30 (docs/caldav.md "Names and UIDs"): a CalDAV client may put a to-do's title in its
 * resource name, which Cairn keeps sealed; the log records `/dav/<user>/<calendar>/[resource]`.
 * Every path under /dav deeper than a calendar has its later segments replaced.
 */
function davLoggedPath(path: string): string {
  const segs = path.split('/');
  // ['', 'dav', user, calendar, name, …]
  return segs.length > 5 || (segs.length === 5 && segs[4] !== '') ? [...segs.slice(0, 4), '[resource]'].join('/') : path;
}

export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.startsWith('/dav/')) return davLoggedPath(path);
  // Most paths: no escape and no `approvals` in any case, so nothing to look at (one regex test).
  if (!path.includes('%') && !/approvals/i.test(path)) return path;
  const parts = path.split(SEPARATORS); // even indexes: segments; odd: the separators between
  let matched = 0;
  let redacted = false;
  for (let i = 0; i < parts.length; i += 2) {
    const seg = fold(parts[i]!);
    if (seg === '' || seg === '.' || seg === '..') continue;
    if (matched < PREFIX.length) {
      if (seg !== PREFIX[matched]) return path;
      matched++;
      continue;
    }
    if (!WORD.test(seg)) {
      parts[i] = '[redacted]';
      redacted = true;
    }
  }
  return redacted ? parts.join('') : path;
}
