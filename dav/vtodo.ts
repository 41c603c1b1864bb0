// The VTODO ↔ to-do mapping (issue 30 item 4, docs/caldav.md "How a to-do looks in iCalendar"),
// read and written with ical.js (never by hand). One resource holds one VCALENDAR with one to-do:
// its master VTODO, optionally RECURRENCE-ID overrides of it (Thunderbird's completed occurrence),
// and the VTIMEZONEs its dates name.
//
//   UID            the to-do id, or the client's own UID (kept sealed: dav/store.ts)
//   SUMMARY        title                      DESCRIPTION   notes
//   DTSTART;DATE   whenDate                   DUE;DATE      deadline
//   STATUS         NEEDS-ACTION / COMPLETED (+ COMPLETED in UTC, PERCENT-COMPLETE:100) / CANCELLED
//   PRIORITY       1 high, 5 medium, 9 low (1–4, 5, 6–9 when read; 0 = none)
//   CATEGORIES     tags                       RRULE         recurrence rule
//   X-CAIRN-RECURRENCE-BASIS  completion (absent: schedule)
//   X-CAIRN-EVENING, X-CAIRN-SOMEDAY (TRUE), X-CAIRN-HEADING (heading id), X-CAIRN-ORDER (sort key)
//   CREATED, LAST-MODIFIED, DTSTAMP (server times), SEQUENCE (the client's, else 0)
//
// DTSTART is never after DUE (RFC 5545 §3.8.2.3): when whenDate is after the deadline, DUE wins,
// DTSTART is left out and the date travels in X-CAIRN-WHEN-DATE, which a Cairn-aware PUT reads back.
// A DATE-TIME DTSTART/DUE becomes the calendar date it names in its own zone (UTC, floating, or its
// TZID): the date part of the value as written. The client's original value (and its VTIMEZONE) is
// kept and written back while that date is unchanged. A client's COMPLETED is kept the same way,
// while the to-do is still completed at the time that PUT recorded.
// Every other property and sub-component (VALARM, X-*, URL, GEO, CLASS, X-APPLE-SORT-ORDER…) is
// kept as sent, sealed beside the to-do, and written back unchanged.
import ICAL from 'ical.js';
import type { TodoOut } from '../routers/todos/schema.js';
import { calPrecondition } from './errors.js';

type Jcal = unknown[];
type Component = InstanceType<typeof ICAL.Component>;
type Property = InstanceType<typeof ICAL.Property>;

/** What a client sent that Cairn does not model, kept sealed (dav/store.ts) and written back. */
export type Extras = {
  props: Jcal[];
  comps: Jcal[];
  timezones: Jcal[];
  dtstart?: { jcal: Jcal; date: string } | undefined;
  due?: { jcal: Jcal; date: string } | undefined;
  /** The client's COMPLETED and the completion time Cairn held after that PUT (ms). */
  completed?: { jcal: Jcal; at: number | null } | undefined;
  sequence?: number | undefined;
};

export const emptyExtras = (): Extras => ({ props: [], comps: [], timezones: [] });

export function extrasEmpty(e: Extras): boolean {
  return !e.props.length && !e.comps.length && !e.timezones.length && !e.dtstart && !e.due && !e.completed && !e.sequence;
}

export type Priority = 'low' | 'medium' | 'high';

/** A VTODO as read from a client. */
export type ParsedTodo = {
  uid: string;
  title: string;
  notes: string | null;
  whenDate: string | null;
  deadline: string | null;
  /** Whether DTSTART was sent (a DUE without DTSTART carries the series: issue 30 item 6). */
  hasStart: boolean;
  status: 'open' | 'completed' | 'canceled';
  priority: Priority | null;
  tags: string[];
  rrule: string | null;
  basis: 'schedule' | 'completion' | null;
  evening: boolean | undefined;
  someday: boolean | undefined;
  /** A RECURRENCE-ID override marked completed (Thunderbird completes one occurrence that way). */
  overrideCompleted: boolean;
  /** RELATED-TO;RELTYPE=PARENT: the parent's UID (a subtask). */
  parentUid: string | null;
  extras: Extras;
};

/** Properties the mapping reads or writes itself; everything else is kept as sent. */
const MODELLED = new Set([
  'uid',
  'summary',
  'description',
  'dtstart',
  'due',
  'status',
  'completed',
  'percent-complete',
  'priority',
  'categories',
  'rrule',
  'created',
  'last-modified',
  'dtstamp',
  'sequence',
  'x-cairn-recurrence-basis',
  'x-cairn-evening',
  'x-cairn-someday',
  'x-cairn-heading',
  'x-cairn-order',
  'x-cairn-when-date',
]);

const invalid = (detail: string) => calPrecondition(403, 'valid-calendar-data', detail);

// Control characters other than tab, newline and carriage return (titles refuse even those).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
// eslint-disable-next-line no-control-regex
const LINE_BREAKS = /[\u0000-\u001f\u007f]+/g;

function dateOf(p: Property): string {
  const v = p.getFirstValue() as { toString(): string } | null;
  const s = v ? String(v.toString()) : '';
  const m = /^(\d{4})-?(\d{2})-?(\d{2})/.exec(s);
  if (!m) throw invalid(`${p.name.toUpperCase()} is not a date.`);
  return `${m[1]}-${m[2]}-${m[3]}`;
}

function textOfProp(c: Component, name: string): string | null {
  const p = c.getFirstProperty(name);
  if (!p) return null;
  const v = p.getFirstValue();
  return v == null ? null : String(v);
}

function bool(c: Component, name: string): boolean | undefined {
  const v = textOfProp(c, name);
  return v == null ? undefined : v.trim().toUpperCase() === 'TRUE';
}

/**
 * Parses a client's iCalendar object (RFC 4791 §4.1: one to-do per resource). Refused with a
 * CalDAV precondition, nothing stored: invalid iCalendar, anything but VTODO (a VEVENT, a
 * VJOURNAL), two to-dos of different UIDs, a to-do without a UID.
 */
export function parseVtodo(text: string): ParsedTodo {
  let root: Component;
  try {
    // A byte-order mark some clients prepend is not part of the object.
    root = new ICAL.Component(ICAL.parse(text.replace(/^\uFEFF/, '')) as Jcal);
  } catch {
    throw invalid('The body is not valid iCalendar.');
  }
  if (root.name !== 'vcalendar') throw invalid('The body is not a VCALENDAR object.');
  const todos: Component[] = [];
  const timezones: Jcal[] = [];
  for (const sub of root.getAllSubcomponents()) {
    if (sub.name === 'vtodo') todos.push(sub);
    else if (sub.name === 'vtimezone') timezones.push(sub.toJSON() as Jcal);
    else throw calPrecondition(403, 'supported-calendar-component', `These calendars hold to-dos only (VTODO), not ${sub.name.toUpperCase()}.`);
  }
  if (!todos.length) throw calPrecondition(403, 'supported-calendar-component', 'The object holds no VTODO.');
  const masters = todos.filter((t) => !t.getFirstProperty('recurrence-id'));
  if (masters.length !== 1) throw calPrecondition(403, 'valid-calendar-object-resource', 'A resource holds exactly one to-do (one VTODO without RECURRENCE-ID).');
  const master = masters[0]!;
  const uid = textOfProp(master, 'uid');
  if (!uid || !uid.trim()) throw calPrecondition(403, 'valid-calendar-object-resource', 'The VTODO has no UID.');
  if (todos.some((t) => textOfProp(t, 'uid') !== uid)) throw calPrecondition(403, 'valid-calendar-object-resource', 'Every VTODO of a resource must share its UID.');

  const extras = emptyExtras();
  extras.timezones = timezones;
  const dtstart = master.getFirstProperty('dtstart');
  const due = master.getFirstProperty('due');
  let whenDate: string | null = null;
  let deadline: string | null = null;
  if (dtstart) {
    whenDate = dateOf(dtstart);
    if (dtstart.type !== 'date') extras.dtstart = { jcal: dtstart.toJSON() as Jcal, date: whenDate };
  } else {
    const carried = textOfProp(master, 'x-cairn-when-date');
    if (carried && /^\d{4}-\d{2}-\d{2}$/.test(carried.trim())) whenDate = carried.trim();
  }
  if (due) {
    deadline = dateOf(due);
    if (due.type !== 'date') extras.due = { jcal: due.toJSON() as Jcal, date: deadline };
  }

  const statusText = (textOfProp(master, 'status') ?? '').trim().toUpperCase();
  const completedProp = master.getFirstProperty('completed');
  const status: ParsedTodo['status'] =
    statusText === 'COMPLETED' || (!statusText && completedProp) ? 'completed' : statusText === 'CANCELLED' ? 'canceled' : 'open';
  if (status === 'completed' && completedProp) extras.completed = { jcal: completedProp.toJSON() as Jcal, at: null };

  const prioNum = Number(textOfProp(master, 'priority') ?? 0);
  const priority: Priority | null = !Number.isFinite(prioNum) || prioNum <= 0 || prioNum > 9 ? null : prioNum < 5 ? 'high' : prioNum === 5 ? 'medium' : 'low';

  const tags: string[] = [];
  for (const p of master.getAllProperties('categories')) {
    for (const v of p.getValues()) {
      const name = String(v).replace(LINE_BREAKS, ' ').trim();
      if (name && !tags.some((t) => t.toLowerCase() === name.toLowerCase())) tags.push(name);
    }
  }

  const rruleProp = master.getFirstProperty('rrule');
  const rrule = rruleProp ? String(rruleProp.getFirstValue()?.toString() ?? '') : null;
  const basisText = (textOfProp(master, 'x-cairn-recurrence-basis') ?? '').trim().toLowerCase();

  let parentUid: string | null = null;
  for (const p of master.getAllProperties('related-to')) {
    const rel = String(p.getParameter('reltype') ?? 'PARENT').toUpperCase();
    if (rel === 'PARENT') parentUid = String(p.getFirstValue());
  }

  const seq = Number(textOfProp(master, 'sequence') ?? 0);
  if (Number.isSafeInteger(seq) && seq > 0) extras.sequence = seq;

  for (const p of master.getAllProperties()) if (!MODELLED.has(p.name)) extras.props.push(p.toJSON() as Jcal);
  for (const c of master.getAllSubcomponents()) extras.comps.push(c.toJSON() as Jcal);

  const overrideCompleted = todos.some((t) => t !== master && ((textOfProp(t, 'status') ?? '').toUpperCase() === 'COMPLETED' || !!t.getFirstProperty('completed')));

  const summary = (textOfProp(master, 'summary') ?? '').replace(LINE_BREAKS, ' ').trim();
  const description = textOfProp(master, 'description');
  return {
    uid,
    title: summary || 'Untitled',
    notes: description ? description.replace(CONTROL, '') : null,
    whenDate,
    deadline,
    hasStart: !!dtstart,
    status,
    priority,
    tags,
    rrule,
    basis: basisText === 'completion' ? 'completion' : basisText === 'schedule' ? 'schedule' : null,
    evening: bool(master, 'x-cairn-evening'),
    someday: bool(master, 'x-cairn-someday'),
    overrideCompleted,
    parentUid,
    extras,
  };
}

const PRIORITY_NUM: Record<Priority, number> = { high: 1, medium: 5, low: 9 };

function utc(iso: string): InstanceType<typeof ICAL.Time> {
  return ICAL.Time.fromJSDate(new Date(iso), true);
}

function dateValue(date: string): InstanceType<typeof ICAL.Time> {
  return ICAL.Time.fromDateString(date);
}

function addDate(c: Component, name: string, date: string): void {
  const p = new ICAL.Property(name, c);
  p.resetType('date');
  p.setValue(dateValue(date));
  c.addProperty(p);
}

/** The iCalendar text of one to-do (CRLF lines, folded by ical.js). */
export function todoToIcs(t: TodoOut, uid: string, extras: Extras | null, completedAtMs: number | null): string {
  const cal = new ICAL.Component('vcalendar');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('prodid', '-//Cairn//CalDAV//EN');
  const e = extras ?? emptyExtras();
  const vtodo = new ICAL.Component('vtodo');
  vtodo.addPropertyWithValue('uid', uid);
  vtodo.addPropertyWithValue('dtstamp', utc(t.updatedAt));
  vtodo.addPropertyWithValue('created', utc(t.createdAt));
  vtodo.addPropertyWithValue('last-modified', utc(t.updatedAt));
  vtodo.addPropertyWithValue('sequence', e.sequence ?? 0);
  vtodo.addPropertyWithValue('summary', t.title);
  if (t.notes) vtodo.addPropertyWithValue('description', t.notes);
  const startAfterDue = t.whenDate !== null && t.deadline !== null && t.whenDate > t.deadline;
  let usesZones = false;
  if (t.whenDate && !startAfterDue) {
    if (e.dtstart && e.dtstart.date === t.whenDate) {
      vtodo.addProperty(new ICAL.Property(e.dtstart.jcal as never));
      usesZones = true;
    } else addDate(vtodo, 'dtstart', t.whenDate);
  }
  if (t.whenDate && startAfterDue) vtodo.addPropertyWithValue('x-cairn-when-date', t.whenDate);
  if (t.deadline) {
    if (e.due && e.due.date === t.deadline) {
      vtodo.addProperty(new ICAL.Property(e.due.jcal as never));
      usesZones = true;
    } else addDate(vtodo, 'due', t.deadline);
  }
  if (t.status === 'completed') {
    vtodo.addPropertyWithValue('status', 'COMPLETED');
    if (e.completed && e.completed.at !== null && e.completed.at === completedAtMs) vtodo.addProperty(new ICAL.Property(e.completed.jcal as never));
    else if (t.completedAt) vtodo.addPropertyWithValue('completed', utc(t.completedAt));
    vtodo.addPropertyWithValue('percent-complete', 100);
  } else vtodo.addPropertyWithValue('status', t.status === 'canceled' ? 'CANCELLED' : 'NEEDS-ACTION');
  if (t.priority) vtodo.addPropertyWithValue('priority', PRIORITY_NUM[t.priority]);
  if (t.tags.length) {
    const p = new ICAL.Property('categories', vtodo);
    p.setValues(t.tags);
    vtodo.addProperty(p);
  }
  if (t.recurrence) {
    vtodo.addProperty(new ICAL.Property(['rrule', {}, 'recur', ICAL.Recur.fromString(t.recurrence.rule).toJSON()] as never));
    if (t.recurrence.basis === 'completion') vtodo.addPropertyWithValue('x-cairn-recurrence-basis', 'completion');
  }
  if (t.evening) vtodo.addPropertyWithValue('x-cairn-evening', 'TRUE');
  if (t.someday) vtodo.addPropertyWithValue('x-cairn-someday', 'TRUE');
  if (t.headingId) vtodo.addPropertyWithValue('x-cairn-heading', t.headingId);
  vtodo.addPropertyWithValue('x-cairn-order', t.sortKey);
  for (const p of e.props) vtodo.addProperty(new ICAL.Property(p as never));
  for (const c of e.comps) vtodo.addSubcomponent(new ICAL.Component(c as never));
  if (usesZones) for (const z of e.timezones) cal.addSubcomponent(new ICAL.Component(z as never));
  cal.addSubcomponent(vtodo);
  return cal.toString() + '\r\n';
}

/**
 * A checklist item as a subtask (docs/caldav.md "Subtasks"): SUMMARY, STATUS and
 * RELATED-TO;RELTYPE=PARENT; its times are its to-do's. A subtask has no dates, priority or
 * categories of its own in Cairn.
 */
export function childToIcs(item: { itemId: string; title: string; done: boolean; uid: string; parentUid: string }, parent: TodoOut): string {
  const cal = new ICAL.Component('vcalendar');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('prodid', '-//Cairn//CalDAV//EN');
  const vtodo = new ICAL.Component('vtodo');
  vtodo.addPropertyWithValue('uid', item.uid);
  vtodo.addPropertyWithValue('dtstamp', utc(parent.updatedAt));
  vtodo.addPropertyWithValue('created', utc(parent.createdAt));
  vtodo.addPropertyWithValue('last-modified', utc(parent.updatedAt));
  vtodo.addPropertyWithValue('summary', item.title);
  vtodo.addPropertyWithValue('status', item.done ? 'COMPLETED' : 'NEEDS-ACTION');
  if (item.done) vtodo.addPropertyWithValue('percent-complete', 100);
  const rel = new ICAL.Property('related-to', vtodo);
  rel.setParameter('reltype', 'PARENT');
  rel.setValue(item.parentUid);
  vtodo.addProperty(rel);
  vtodo.addPropertyWithValue('x-cairn-checklist-item', item.itemId);
  cal.addSubcomponent(vtodo);
  return cal.toString() + '\r\n';
}
