// REPORT on a calendar (docs/caldav.md "Reports"):
// - calendar-multiget (RFC 4791 §7.9): the named to-dos, missing ones 404;
// - calendar-query (RFC 4791 §7.8) with the VTODO filters clients send: COMPLETED is-not-defined,
//   STATUS text-match (negated or not), time-range on the VTODO or on DTSTART / DUE / COMPLETED,
//   is-not-defined on a property. Status and dates come from the sealed index
//   (routers/todo-index/): a filter on them opens no to-do; a text filter on SUMMARY, DESCRIPTION,
//   CATEGORIES or UID opens the members it tests. Only the to-dos returned are opened for
//   calendar-data. A filter on a property Cairn does not index matches as if it were absent.
// - sync-collection (RFC 6578, dav/sync.ts): an empty token lists every member; a token lists
//   what changed since (removals as 404), `<D:limit>` honoured with a 507 for the calendar itself
//   and a token for the part answered.
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { getTodo } from '../routers/todos/model.js';
import type { TodoOut } from '../routers/todos/schema.js';
import { indexedAttrs, type IndexedTodo } from '../routers/todo-index/index.js';
import { DavError, precondition } from './errors.js';
import { ALLPROP, itemProps } from './props.js';
import { answer, propRequestOf } from './propfind.js';
import { collectionHref, itemHref, parseDavPath } from './paths.js';
import { findByName, findCollection, listMembers, type Collection, type Member } from './store.js';
import { currentToken, snapshotOf, tokenFor } from './sync.js';
import { ownPath, sendMultistatus, type DavRequest } from './request.js';
import { NS, child, children, escapeXml, is, parseXml, statusResponse, textOf, type XmlElement } from './xml.js';

const DAY = 86_400_000;

export async function report(r: DavRequest): Promise<void> {
  ownPath(r);
  const body = parseXml(r.body);
  if (!body) throw new DavError(400, 'A REPORT needs a body.');
  const { deps, p, path } = r;
  const supported = is(body, NS.C, 'calendar-multiget') || is(body, NS.C, 'calendar-query') || is(body, NS.D, 'sync-collection');
  if (!supported || path.kind !== 'collection') throw precondition(403, NS.D, 'supported-report', 'This resource answers calendar-query, calendar-multiget and sync-collection on a calendar.');
  const c = findCollection(deps, p, path.collection);
  if (!c) throw new DavError(404, 'No calendar has this path.');
  if (is(body, NS.C, 'calendar-multiget')) return multiget(r, c, body);
  if (is(body, NS.C, 'calendar-query')) return query(r, c, body);
  return syncCollection(r, c, body);
}

/** An href of a multiget as a /dav path (absolute URLs of any host are read by their path). */
function hrefPath(h: string) {
  try {
    return parseDavPath(new URL(h.trim(), 'http://href.invalid').pathname);
  } catch {
    return null;
  }
}

function multiget(r: DavRequest, c: Collection, body: XmlElement): Promise<void> {
  const { deps, p } = r;
  const request = propRequestOf(body);
  const hrefs = children(body, NS.D, 'href').map(textOf);
  // Whether an href's calendar segment names this calendar: resolved once per distinct segment,
  // not once per href (a multiget of 100 resolved the calendar 100 times: ~1.5 ms of ~6 ms).
  const same = new Map<string, boolean>([[c.id, true]]);
  const isThis = (segment: string) => {
    let v = same.get(segment);
    if (v === undefined) same.set(segment, (v = findCollection(deps, p, segment)?.id === c.id));
    return v;
  };
  function* all() {
    for (const h of hrefs) {
      const path = hrefPath(h);
      const res = path && path.kind === 'item' && path.userId === p.userId && isThis(path.collection) ? findByName(deps, p, c.id, path.name) : null;
      if (!res) yield statusResponse(h.trim(), '404 Not Found');
      else yield answer(itemHref(p.userId, c.id, res.name), itemProps(deps, p, res), request, ALLPROP.item);
    }
  }
  return sendMultistatus(r.res, all());
}

// ---- calendar-query ----------------------------------------------------------------------------

/** A to-do as the filters read it: indexed attributes, and the whole to-do opened on demand. */
type View = { attrs: IndexedTodo; full: () => TodoOut };

function timeOf(s: string | null): number | null {
  if (!s) return null;
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$/.exec(s.trim());
  if (!m) throw new DavError(400, `Not an iCalendar UTC time: ${s}`);
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
}

function rangeOf(el: XmlElement): [number, number] {
  return [timeOf(el.getAttribute('start')) ?? -Infinity, timeOf(el.getAttribute('end')) ?? Infinity];
}

const dayStart = (date: string | null) => (date ? Date.parse(`${date}T00:00:00Z`) : null);

/** RFC 4791 §9.9 for a to-do whose dates are whole days (floating dates read as UTC). */
function todoInRange(a: IndexedTodo, [s, e]: [number, number]): boolean {
  const start = dayStart(a.whenDate);
  const due = dayStart(a.deadline);
  if (start !== null && due !== null) return start < e && due + DAY > s;
  if (start !== null) return start < e && start + DAY > s;
  if (due !== null) return due < e && due + DAY > s;
  if (a.completedAt !== null) return a.completedAt >= s && a.completedAt < e;
  return true;
}

const STATUS_TEXT = { open: 'NEEDS-ACTION', completed: 'COMPLETED', canceled: 'CANCELLED' } as const;
const PRIORITY_NUM = { high: '1', medium: '5', low: '9' } as const;

/** A property's values as the filters see them; dates as their day start (ms), texts as strings. */
function propValues(v: View, name: string): { texts: string[]; time: number | null } | null {
  const a = v.attrs;
  switch (name) {
    case 'COMPLETED':
      return a.status === 'completed' ? { texts: [], time: a.completedAt } : null;
    case 'STATUS':
      return { texts: [STATUS_TEXT[a.status]], time: null };
    case 'DTSTART':
      return a.whenDate ? { texts: [a.whenDate.replace(/-/g, '')], time: dayStart(a.whenDate) } : null;
    case 'DUE':
      return a.deadline ? { texts: [a.deadline.replace(/-/g, '')], time: dayStart(a.deadline) } : null;
    case 'PRIORITY':
      return a.priority ? { texts: [PRIORITY_NUM[a.priority]], time: null } : null;
    case 'SUMMARY':
      return { texts: [v.full().title], time: null };
    case 'DESCRIPTION': {
      const n = v.full().notes;
      return n ? { texts: [n], time: null } : null;
    }
    case 'CATEGORIES': {
      const t = v.full().tags;
      return t.length ? { texts: t, time: null } : null;
    }
    case 'UID':
      return { texts: [v.full().id], time: null };
    default:
      return null;
  }
}

function textMatches(el: XmlElement, texts: string[]): boolean {
  const needle = textOf(el);
  const exact = (el.getAttribute('collation') ?? '') === 'i;octet';
  const hit = texts.some((t) => (exact ? t.includes(needle) : t.toLowerCase().includes(needle.toLowerCase())));
  return (el.getAttribute('negate-condition') ?? 'no') === 'yes' ? !hit : hit;
}

function propMatches(el: XmlElement, v: View): boolean {
  const name = (el.getAttribute('name') ?? '').toUpperCase();
  const value = propValues(v, name);
  if (child(el, NS.C, 'is-not-defined')) return value === null;
  if (value === null) return false;
  for (const tr of children(el, NS.C, 'time-range')) {
    const [s, e] = rangeOf(tr);
    const t = value.time;
    const span = name === 'COMPLETED' ? 0 : DAY;
    if (t === null || !(t < e && t + span >= s)) return false;
  }
  for (const tm of children(el, NS.C, 'text-match')) if (!textMatches(tm, value.texts)) return false;
  return true;
}

function todoMatches(cf: XmlElement, v: View): boolean {
  if (child(cf, NS.C, 'is-not-defined')) return false;
  for (const tr of children(cf, NS.C, 'time-range')) if (!todoInRange(v.attrs, rangeOf(tr))) return false;
  for (const pf of children(cf, NS.C, 'prop-filter')) if (!propMatches(pf, v)) return false;
  return true;
}

/** The VCALENDAR comp-filter: VTODO children are tested; any other component never exists here. */
function calendarMatches(cf: XmlElement, v: View): boolean {
  if ((cf.getAttribute('name') ?? '').toUpperCase() !== 'VCALENDAR') return false;
  if (child(cf, NS.C, 'is-not-defined')) return false;
  for (const sub of children(cf, NS.C, 'comp-filter')) {
    const name = (sub.getAttribute('name') ?? '').toUpperCase();
    const absent = !!child(sub, NS.C, 'is-not-defined');
    if (name === 'VTODO' ? !todoMatches(sub, v) : !absent) return false;
  }
  return true;
}

function openFull(deps: Deps, p: Principal, id: string): () => TodoOut {
  let t: TodoOut | undefined;
  return () => (t ??= getTodo(deps, p, id));
}

/** A subtask as the filters see it: its done state, no dates. */
function childView(c: NonNullable<Member['child']>): View {
  const attrs: IndexedTodo = { status: c.done ? 'completed' : 'open', completedAt: null, whenDate: null, deadline: null, evening: false, someday: false, priority: null, recurrence: null };
  return { attrs, full: () => ({ id: c.uid, title: c.title, notes: null, tags: [] }) as unknown as TodoOut };
}

function query(r: DavRequest, c: Collection, body: XmlElement): Promise<void> {
  const { deps, p } = r;
  const request = propRequestOf(body);
  const filter = child(body, NS.C, 'filter');
  const top = filter ? child(filter, NS.C, 'comp-filter') : undefined;
  const members = listMembers(deps, p, c.id);
  let kept: Member[] = members;
  if (top) {
    const attrs = indexedAttrs(deps.db.$client, p, members.map((m) => ({ id: m.id, updatedAt: m.updatedAt! })));
    kept = members.filter((m) => {
      if (m.child) return calendarMatches(top, childView(m.child));
      const full = openFull(deps, p, m.id);
      let a = attrs.get(m.id);
      if (!a) {
        const t = full();
        a = { status: t.status, completedAt: t.completedAt ? Date.parse(t.completedAt) : null, whenDate: t.whenDate, deadline: t.deadline, evening: t.evening, someday: t.someday, priority: t.priority, recurrence: null };
      }
      return calendarMatches(top, { attrs: a, full });
    });
  }
  function* all() {
    for (const m of kept) yield answer(itemHref(p.userId, c.id, m.name), itemProps(deps, p, m), request, ALLPROP.item);
  }
  return sendMultistatus(r.res, all());
}

// ---- sync-collection ---------------------------------------------------------------------------

function syncCollection(r: DavRequest, c: Collection, body: XmlElement): Promise<void> {
  const { deps, p } = r;
  const request = propRequestOf(body);
  const tokenEl = child(body, NS.D, 'sync-token');
  const token = tokenEl ? textOf(tokenEl).trim() : '';
  const limitEl = child(body, NS.D, 'limit');
  const nresults = limitEl ? child(limitEl, NS.D, 'nresults') : undefined;
  const limit = nresults ? Number(textOf(nresults).trim()) : Infinity;
  if (nresults && (!Number.isSafeInteger(limit) || limit < 1)) throw new DavError(400, '<D:nresults> must be a positive integer.');
  const members = listMembers(deps, p, c.id);
  const before = token ? snapshotOf(deps, p, c.id, token) : [];
  if (!before) throw precondition(403, NS.D, 'valid-sync-token', 'The sync token is unknown or expired: sync again from an empty token.');

  const old = new Map(before.map((m) => [m.id, m]));
  const now = new Map(members.map((m) => [m.id, m]));
  type Change = { kind: 'changed'; m: Member } | { kind: 'removed'; m: Member };
  const changes: Change[] = [];
  for (const m of before) {
    const cur = now.get(m.id);
    if (!cur || cur.name !== m.name) changes.push({ kind: 'removed', m });
  }
  for (const m of members) {
    const was = old.get(m.id);
    if (!was || was.etag !== m.etag || was.name !== m.name) changes.push({ kind: 'changed', m });
  }
  const truncated = changes.length > limit;
  const answered = truncated ? changes.slice(0, limit) : changes;
  let newToken: string;
  if (truncated) {
    // The state the client holds after this answer: the old membership with the answered changes applied.
    const state = new Map(old);
    for (const ch of answered) {
      if (ch.kind === 'removed') state.delete(ch.m.id);
      else state.set(ch.m.id, ch.m);
    }
    newToken = tokenFor(deps, p, c.id, [...state.values()]);
  } else newToken = currentToken(deps, p, c.id, members);
  const collection = collectionHref(p.userId, c.id);
  function* all() {
    for (const ch of answered) {
      if (ch.kind === 'removed') yield statusResponse(itemHref(p.userId, c.id, ch.m.name), '404 Not Found');
      else yield answer(itemHref(p.userId, c.id, ch.m.name), itemProps(deps, p, ch.m), request, ALLPROP.item);
    }
    if (truncated) yield statusResponse(collection, '507 Insufficient Storage');
  }
  return sendMultistatus(r.res, all(), `<D:sync-token>${escapeXml(newToken)}</D:sync-token>`);
}
