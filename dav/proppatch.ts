// PROPPATCH of a calendar (RFC 4918 §9.2): the display name and Apple's calendar-color change the
// project (the same model as PATCH /v1/containers/{id}); Apple's calendar-order moves the project
// among its siblings (the same model as POST /v1/containers/{id}/move; docs/caldav.md "Calendars").
// All or nothing: one property that cannot be set (403) fails the others (424) and nothing changes.
// A display name sent back with its area prefix ("Area › Project") keeps only the last part.
import { moveContainer, updateContainer } from '../routers/containers/model.js';
import { LIMITS } from '../core/config.js';
import { DavError } from './errors.js';
import { collectionHref } from './paths.js';
import { findCollection, listCollections, type Collection } from './store.js';
import { ownPath, sendMultistatus, write, type DavRequest } from './request.js';
import { NS, child, children, emptyElement, escapeXml, is, key, parseXml, qnameOf, textOf, type QName } from './xml.js';

/** Apple's `#RRGGBBAA` (or `#RRGGBB`) as a project colour `#RRGGBB`; null for anything else. */
export function colorOf(value: string): string | null {
  const m = /^#?([0-9A-Fa-f]{6})(?:[0-9A-Fa-f]{2})?$/.exec(value.trim());
  return m ? `#${m[1]!.toUpperCase()}` : null;
}

const DISPLAYNAME = key({ ns: NS.D, name: 'displayname' });
const COLOR = key({ ns: NS.A, name: 'calendar-color' });
const ORDER = key({ ns: NS.A, name: 'calendar-order' });

export async function proppatch(r: DavRequest): Promise<void> {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind !== 'collection') throw new DavError(403, 'Only a calendar\'s properties can be changed.');
  const body = parseXml(r.body);
  if (!body || !is(body, NS.D, 'propertyupdate')) throw new DavError(400, 'A PROPPATCH body is a <D:propertyupdate> element.');
  const c = findCollection(deps, p, path.collection);
  if (!c) throw new DavError(404, 'No calendar has this path.');
  const changes: { q: QName; value: string | null }[] = [];
  for (const op of children(body)) {
    const remove = is(op, NS.D, 'remove');
    if (!remove && !is(op, NS.D, 'set')) continue;
    const prop = child(op, NS.D, 'prop');
    for (const el of prop ? children(prop) : []) changes.push({ q: qnameOf(el), value: remove ? null : textOf(el) });
  }
  const refused = (ch: { q: QName; value: string | null }) => {
    const k = key(ch.q);
    if (!c.row) return true; // the standalone calendar has no project behind it
    if (k === DISPLAYNAME) return ch.value === null || !ch.value.trim() || ch.value.length > LIMITS.container.name * 4;
    if (k === COLOR) return ch.value !== null && colorOf(ch.value) === null;
    if (k === ORDER) return ch.value !== null && !/^\s*\d{1,9}\s*$/.test(ch.value);
    return true;
  };
  const bad = changes.filter(refused);
  const href = collectionHref(p.userId, c.id);
  if (bad.length) {
    const propstat = (list: typeof changes, status: string) =>
      list.length ? `<D:propstat><D:prop>${list.map((ch) => emptyElement(ch.q)).join('')}</D:prop><D:status>HTTP/1.1 ${status}</D:status></D:propstat>` : '';
    const ok = changes.filter((ch) => !bad.includes(ch));
    return sendMultistatus(r.res, [`<D:response><D:href>${escapeXml(href)}</D:href>${propstat(bad, '403 Forbidden')}${propstat(ok, '424 Failed Dependency')}</D:response>`]);
  }
  const patch: { id: string; name?: string; colorHex?: string | null } = { id: c.id };
  for (const ch of changes) {
    const k = key(ch.q);
    if (k === DISPLAYNAME) patch.name = ch.value!.split(' › ').pop()!.trim().slice(0, LIMITS.container.name);
    if (k === COLOR) patch.colorHex = ch.value === null ? null : colorOf(ch.value);
  }
  if (patch.name !== undefined || patch.colorHex !== undefined) await write(r, () => updateContainer(deps, p, patch));
  const order = changes.find((ch) => key(ch.q) === ORDER && ch.value !== null);
  if (order && c.row) {
    const row = c.row;
    const place = placeAmongSiblings(listCollections(deps, p), c, Number(order.value!.trim()));
    if (place) await write(r, () => moveContainer(deps, p, { id: row.id, parentId: row.parentId, ...place }));
  }
  return sendMultistatus(r.res, [
    `<D:response><D:href>${escapeXml(href)}</D:href><D:propstat><D:prop>${changes.map((ch) => emptyElement(ch.q)).join('')}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`,
  ]);
}

/**
 * Where calendar-order `n` (a position among all calendars, as PROPFIND answers it) puts calendar
 * `c` among its siblings (the projects of the same area, or the subprojects of the same project):
 * before the first sibling at or past that position (moving up) or past it (moving down), else
 * after the last one. A calendar cannot leave its area this way. Null when it has no siblings or
 * is already there.
 */
export function placeAmongSiblings(all: readonly Collection[], c: Collection, n: number): { before: string } | { after: string } | null {
  const current = all.find((x) => x.id === c.id);
  if (!current?.row) return null;
  const parent = current.row.parentId;
  const siblings = all.filter((x) => x.row && x.id !== c.id && x.row.parentId === parent);
  if (!siblings.length) return null;
  const up = n < current.order;
  const next = siblings.find((x) => (up ? x.order >= n : x.order > n));
  if (next) {
    const prev = siblings[siblings.indexOf(next) - 1];
    if ((prev ? prev.order < current.order : true) && next.order > current.order) return null; // already between them
    return { before: next.id };
  }
  const last = siblings[siblings.length - 1]!;
  return last.order < current.order ? null : { after: last.id };
}
