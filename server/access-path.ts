// What the access log records as a request's path (server/handler.ts): the path without its query
// string, with bearer secrets that travel in a path replaced. Today that is the nine-digit OAuth
// approval code of `/v1/approvals/{code}[/approve|/deny]`: while pending it lets whoever holds it
// decide the authorization, so it is a secret (docs/security.md "OAuth") and never logged.
const SECRET_SEGMENTS = /^(\/v1\/approvals\/)[^/]+/;

export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return path.replace(SECRET_SEGMENTS, '$1[redacted]');
}
