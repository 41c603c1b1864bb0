// `.ics` files holding VTODOs as an import source (issue 33 item 3; docs/import.md ".ics"). The
// reading is the CalDAV door's own VTODO mapping (dav/vtodo.ts parseVtodo), so a to-do imported
// from a file means what the same VTODO PUT over CalDAV means. routers/ may not import a door, so
// this planner lives here, where the process composes the doors, and is handed to the import
// route (rest/imports.ts) and the CLI (server/cli-import.ts).
//
// The file's VTODOs are grouped by UID (a master and its RECURRENCE-ID overrides), each group read
// as one CalDAV resource. A VTODO related to a parent (RELATED-TO;RELTYPE=PARENT, a subtask) becomes
// a checklist item of its parent, as the CalDAV door shows checklist items. The UID is the source
// id. Anything else in the file (VEVENT, VJOURNAL) and VTODOs the mapping refuses are listed.
import ICAL from 'ical.js';
import { AppError } from '../core/errors.js';
import { parseVtodo } from '../dav/vtodo.js';
import { emptyPlan, type ImportPlan, type PlanTodo } from '../routers/imports/plan.js';

type Component = InstanceType<typeof ICAL.Component>;

export function icsPlan(body: Buffer): ImportPlan {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new AppError('validation_failed', 'The file is not UTF-8 text; an .ics file is iCalendar text.');
  }
  const plan = emptyPlan('ics');
  let calendars: Component[];
  try {
    const parsed = ICAL.parse(text.replace(/^\uFEFF/, '')) as unknown[];
    // One VCALENDAR parses to one jCal array; several to an array of them.
    const list = typeof parsed[0] === 'string' ? [parsed] : (parsed as unknown[][]);
    calendars = list.map((j) => new ICAL.Component(j as unknown[]));
  } catch {
    throw new AppError('validation_failed', 'The file is not valid iCalendar.');
  }
  const groups = new Map<string, Component[]>();
  let anonymous = 0;
  for (const cal of calendars) {
    if (cal.name !== 'vcalendar') continue;
    const timezones = cal.getAllSubcomponents('vtimezone');
    for (const sub of cal.getAllSubcomponents()) {
      if (sub.name === 'vtimezone') continue;
      if (sub.name !== 'vtodo') {
        plan.unmapped.push(`a ${sub.name.toUpperCase()} (${String(sub.getFirstPropertyValue('summary') ?? 'untitled')}): only to-dos (VTODO) are imported`);
        continue;
      }
      const uid = String(sub.getFirstPropertyValue('uid') ?? '') || `no-uid-${++anonymous}`;
      const group = groups.get(uid) ?? [...timezones];
      group.push(sub);
      groups.set(uid, group);
    }
  }
  const byUid = new Map<string, PlanTodo>();
  const children: { parent: string; title: string; done: boolean }[] = [];
  for (const [uid, comps] of groups) {
    const cal = new ICAL.Component(['vcalendar', [['version', {}, 'text', '2.0'], ['prodid', {}, 'text', '-//Cairn//import//EN']], []]);
    for (const c of comps) cal.addSubcomponent(new ICAL.Component(c.toJSON() as unknown[]));
    let t;
    try {
      t = parseVtodo(cal.toString());
    } catch (e) {
      plan.unmapped.push(`VTODO ${uid}: ${e instanceof Error ? e.message : 'not readable'}`);
      continue;
    }
    if (t.parentUid) {
      children.push({ parent: t.parentUid, title: t.title, done: t.status === 'completed' });
      continue;
    }
    const todo: PlanTodo = {
      sid: t.uid,
      parentSid: null,
      headingSid: null,
      title: t.title,
      notes: t.notes,
      whenDate: t.whenDate,
      evening: t.evening ?? false,
      someday: t.someday ?? false,
      deadline: t.deadline,
      priority: t.priority,
      tags: t.tags,
      checklist: [],
      recurrence: t.rrule ? { rule: t.rrule, basis: t.basis ?? 'schedule' } : null,
      status: t.status,
    };
    if (t.extras.props.length || t.extras.comps.length) plan.unmapped.push(`"${t.title}": ${t.extras.props.length + t.extras.comps.length} iCalendar propert(ies) Cairn does not model (alarms, URL, …) are not imported`);
    byUid.set(t.uid, todo);
    plan.todos.push(todo);
  }
  for (const c of children) {
    const parent = byUid.get(c.parent);
    if (parent) parent.checklist!.push({ title: c.title, done: c.done });
    else plan.unmapped.push(`subtask "${c.title}": its parent (${c.parent}) is not in the file`);
  }
  for (const name of new Set(plan.todos.flatMap((t) => t.tags ?? []))) plan.tags.push({ sid: `category:${name.toLowerCase()}`, name });
  return plan;
}
