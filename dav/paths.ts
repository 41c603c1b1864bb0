// The CalDAV door's URL layout (docs/caldav.md "Addresses"):
//   /dav/                               the DAV root (discovery starts here)
//   /dav/<user id>/                     the principal, which is also the calendar home
//   /dav/<user id>/<collection>/        a calendar: a project or subproject id, or `standalone`
//   /dav/<user id>/<collection>/<name>  one to-do: `<to-do id>.ics`, or the client's own name
// Segments are percent-decoded once; a name is any segment the client chose (sealed, found by its
// blind index: dav/store.ts).
import { DavError } from './errors.js';

export const ROOT = '/dav/';
export const STANDALONE = 'standalone';
export const WELL_KNOWN = '/.well-known/caldav';

/** Whether a path is the door's: /dav, /dav/…, or the well-known address (server/handler.ts routes on it). */
export function isDavPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return path === '/dav' || path.startsWith(ROOT) || path === WELL_KNOWN || path === `${WELL_KNOWN}/`;
}

export type DavPath =
  | { kind: 'root' }
  | { kind: 'home'; userId: string }
  | { kind: 'collection'; userId: string; collection: string }
  | { kind: 'item'; userId: string; collection: string; name: string };

function decode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new DavError(400, 'The path holds a malformed percent escape.');
  }
}

/** Parses a path under /dav (no query string). Null when it is not under /dav. */
export function parseDavPath(pathname: string): DavPath | null {
  if (pathname !== '/dav' && !pathname.startsWith(ROOT)) return null;
  const segs = pathname.slice(ROOT.length).split('/');
  // A trailing slash leaves one empty segment; empty segments elsewhere name nothing.
  if (segs.length && segs[segs.length - 1] === '') segs.pop();
  if (segs.some((s) => s === '')) throw new DavError(404, 'No resource has this path.');
  const parts = segs.map(decode);
  if (parts.length === 0) return { kind: 'root' };
  if (parts.length === 1) return { kind: 'home', userId: parts[0]! };
  if (parts.length === 2) return { kind: 'collection', userId: parts[0]!, collection: parts[1]! };
  if (parts.length === 3) return { kind: 'item', userId: parts[0]!, collection: parts[1]!, name: parts[2]! };
  throw new DavError(404, 'No resource has this path.');
}

export const homeHref = (userId: string) => `${ROOT}${encodeURIComponent(userId)}/`;
export const collectionHref = (userId: string, collection: string) => `${homeHref(userId)}${encodeURIComponent(collection)}/`;
export const itemHref = (userId: string, collection: string, name: string) => `${collectionHref(userId, collection)}${encodeURIComponent(name)}`;

/** The collection of a to-do's parent column (null = standalone). */
export const collectionOf = (parentId: string | null) => parentId ?? STANDALONE;
/** The parent column of a collection segment. */
export const parentOf = (collection: string) => (collection === STANDALONE ? null : collection);

/** The default resource name of a to-do. */
export const defaultName = (todoId: string) => `${todoId}.ics`;

/**
 * A Destination header (MOVE) as a /dav path: an absolute URL of this server or an absolute path.
 * Its host is not compared (clients behind a proxy send the name they used).
 */
export function destinationPath(header: string | undefined): DavPath {
  if (!header) throw new DavError(400, 'MOVE needs a Destination header.');
  let pathname: string;
  try {
    pathname = new URL(header, 'http://destination.invalid').pathname;
  } catch {
    throw new DavError(400, 'The Destination header is not a URL.');
  }
  const p = parseDavPath(pathname);
  if (!p) throw new DavError(502, 'The destination is not on this CalDAV server.');
  return p;
}
