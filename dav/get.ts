// GET and HEAD of a to-do (RFC 4791 §5.3.4 for what the ETag promises): its iCalendar text and
// its strong ETag. GET of a calendar is the whole calendar as one .ics file (dav/calendar-ics.ts,
// as Radicale and sabre/dav serve it; no ETag: it changes with any member). The principal and the
// home have no body to GET (405 with Allow).
import { DavError } from './errors.js';
import { METHODS } from './options.js';
import { icsOf } from './props.js';
import { findByName, findCollection } from './store.js';
import { ownPath, type DavRequest } from './request.js';
import { calendarIcs } from './calendar-ics.js';

export function get(r: DavRequest, head: boolean): void {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind === 'collection') return getCalendar(r, head, path.collection);
  if (path.kind !== 'item') throw new DavError(405, 'Only a to-do (a .ics resource) or a calendar can be read with GET.', undefined, { Allow: METHODS });
  const c = findCollection(deps, p, path.collection);
  const res = c && findByName(deps, p, c.id, path.name);
  if (!c || !res) throw new DavError(404, 'No to-do has this path.');
  const body = Buffer.from(icsOf(deps, p, res), 'utf8');
  r.res.statusCode = 200;
  r.res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
  r.res.setHeader('ETag', `"${res.etag}"`);
  r.res.setHeader('Cache-Control', 'no-store');
  r.res.setHeader('Content-Length', String(body.length));
  r.res.end(head ? undefined : body);
}

function getCalendar(r: DavRequest, head: boolean, collection: string): void {
  const c = findCollection(r.deps, r.p, collection);
  if (!c) throw new DavError(404, 'No calendar has this path.');
  r.res.statusCode = 200;
  r.res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
  r.res.setHeader('Cache-Control', 'no-store');
  if (head) return void r.res.end();
  // Opened and written one to-do at a time (a page of the calendar is never built whole).
  for (const piece of calendarIcs(r.deps, r.p, c)) r.res.write(piece);
  r.res.end();
}
