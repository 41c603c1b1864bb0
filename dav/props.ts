// The WebDAV/CalDAV properties the door answers (RFC 4918 §15, RFC 4791 §5.2, RFC 5397, RFC 6578,
// RFC 6638's calendar-user-address-set is not offered; Apple's calendar-color and calendar-order,
// calendarserver.org's getctag), for PROPFIND and the REPORTs. Every requested property is answered:
// a property a resource does not have goes to a 404 propstat (Apple asks for dozens).
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { getTodo } from '../routers/todos/model.js';
import { ROOT, collectionHref, homeHref } from './paths.js';
import { listMembers, resourceById, type Collection, type Member, type Resource } from './store.js';
import { currentToken } from './sync.js';
import { childToIcs, todoToIcs } from './vtodo.js';
import { NS, escapeXml, key, type QName } from './xml.js';

export type PropValue = string | undefined;
export type PropSource = (q: QName) => PropValue;

const q = (ns: string, name: string): QName => ({ ns, name });
const D = (n: string) => q(NS.D, n);
const C = (n: string) => q(NS.C, n);

const href = (h: string) => `<D:href>${escapeXml(h)}</D:href>`;

const PRIVILEGES = ['read', 'write', 'write-properties', 'write-content', 'bind', 'unbind', 'read-current-user-privilege-set'].map((x) => `<D:privilege><D:${x}/></D:privilege>`).join('');
const REPORTS = ['C:calendar-query', 'C:calendar-multiget', 'D:sync-collection'].map((x) => `<D:supported-report><D:report><${x}/></D:report></D:supported-report>`).join('');

/** What `<D:allprop/>` (or an empty PROPFIND) returns, per kind of resource. */
export const ALLPROP = {
  principal: [D('resourcetype'), D('displayname'), D('current-user-principal'), D('principal-URL'), C('calendar-home-set'), D('owner')],
  collection: [D('resourcetype'), D('displayname'), C('supported-calendar-component-set'), D('getctag'), D('sync-token'), D('supported-report-set'), D('current-user-privilege-set'), D('owner')],
  item: [D('resourcetype'), D('getetag'), D('getcontenttype')],
};

/** The principal's properties, common to the root, the principal and every resource below. */
function principalProp(p: Principal, name: QName): PropValue {
  const k = key(name);
  if (k === key(D('current-user-principal')) || k === key(D('principal-URL')) || k === key(D('owner'))) return href(homeHref(p.userId));
  if (k === key(C('calendar-home-set'))) return href(homeHref(p.userId));
  if (k === key(D('principal-collection-set'))) return href(ROOT);
  if (k === key(D('current-user-privilege-set'))) return PRIVILEGES;
  return undefined;
}

export function rootProps(p: Principal): PropSource {
  return (name) => {
    const k = key(name);
    if (k === key(D('resourcetype'))) return '<D:collection/>';
    if (k === key(D('displayname'))) return 'Cairn';
    return principalProp(p, name);
  };
}

export function homeProps(p: Principal): PropSource {
  return (name) => {
    const k = key(name);
    if (k === key(D('resourcetype'))) return '<D:collection/><D:principal/>';
    if (k === key(D('displayname'))) return 'Cairn';
    if (k === key(D('supported-report-set'))) return REPORTS;
    if (k === key(C('calendar-user-type'))) return 'INDIVIDUAL';
    return principalProp(p, name);
  };
}

/** Apple's calendar-color is `#RRGGBBAA`; a project's colorHex `#RRGGBB` gets full opacity. */
export function appleColor(hex: string | null): string | undefined {
  if (!hex) return undefined;
  const h = hex.replace(/^#/, '');
  if (/^[0-9a-fA-F]{6}$/.test(h)) return `#${h.toUpperCase()}FF`;
  if (/^[0-9a-fA-F]{8}$/.test(h)) return `#${h.toUpperCase()}`;
  if (/^[0-9a-fA-F]{3}$/.test(h)) return `#${[...h].map((c) => c + c).join('').toUpperCase()}FF`;
  return undefined;
}

/**
 * A calendar's properties. Its members (and so getctag and sync-token) are read only when one of
 * those is asked for, once per request.
 */
export function collectionProps(deps: Deps, p: Principal, c: Collection, members?: () => Member[]): PropSource {
  let cached: Member[] | undefined;
  // Without the listing at hand, the token needs the to-dos only (their digest); the subtasks are
  // read only when a new snapshot is stored.
  const all = () => (cached ??= members ? members() : listMembers(deps, p, c.id, false));
  const full = members ? undefined : () => listMembers(deps, p, c.id);
  return (name) => {
    const k = key(name);
    if (k === key(D('resourcetype'))) return '<D:collection/><C:calendar/>';
    if (k === key(D('displayname'))) return escapeXml(c.name);
    if (k === key(C('supported-calendar-component-set'))) return '<C:comp name="VTODO"/>';
    if (k === key(C('supported-calendar-data'))) return '<C:calendar-data content-type="text/calendar" version="2.0"/>';
    if (k === key(D('supported-report-set'))) return REPORTS;
    if (k === key(q(NS.CS, 'getctag')) || k === key(D('sync-token'))) return escapeXml(currentToken(deps, p, c.id, all(), full));
    if (k === key(q(NS.A, 'calendar-color'))) return appleColor(c.color);
    if (k === key(q(NS.A, 'calendar-order'))) return String(c.order);
    if (k === key(D('getcontenttype'))) return undefined;
    return principalProp(p, name);
  };
}

export const CALENDAR_DATA = key(C('calendar-data'));

/** A to-do's iCalendar text (opens the row and its tags). */
export function icsOf(deps: Deps, p: Principal, r: Pick<Resource, 'id' | 'dav' | 'child'>): string {
  if (r.child) return childToIcs(r.child, getTodo(deps, p, r.child.todoId));
  const t = getTodo(deps, p, r.id);
  return todoToIcs(t, r.dav?.uid ?? r.id, r.dav?.extras ?? null, t.completedAt ? Date.parse(t.completedAt) : null);
}

/** A to-do resource's properties; calendar-data opens it (only when asked for). */
export function itemProps(deps: Deps, p: Principal, r: { id: string; etag: string; dav?: Resource['dav'] | undefined; child?: Resource['child'] }): PropSource {
  const ics = () => icsOf(deps, p, { id: r.id, child: r.child, dav: r.child ? null : r.dav !== undefined ? r.dav : (resourceById(deps, p, r.id)?.dav ?? null) });
  return (name) => {
    const k = key(name);
    if (k === key(D('getetag'))) return escapeXml(`"${r.etag}"`);
    if (k === key(D('getcontenttype'))) return 'text/calendar; charset=utf-8; component=VTODO';
    if (k === key(D('resourcetype'))) return '';
    if (k === CALENDAR_DATA) return escapeXml(ics());
    return principalProp(p, name);
  };
}

export { collectionHref };
