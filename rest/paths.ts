// Issue 11.11 (docs/api.md "Wire conventions"): a path names one route as sent. A dot segment
// (".", ".."), raw or percent-encoded in any case (%2e, .%2E, %2e%2e), would be resolved by a
// later URL parser (trpc-to-openapi's `new URL`, a proxy) after routing decisions were made.
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** Whether the path part of a request target has a dot segment. */
export function hasDotSegment(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.includes('.') && !/%2e/i.test(path)) return false;
  return path.split(/[\\/]/).some((seg) => DOT_SEGMENT.test(seg));
}
