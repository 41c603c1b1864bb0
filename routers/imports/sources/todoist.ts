// Todoist's project CSV export (Project → ⋯ → Export as template, "relative dates" unticked;
// docs/import.md "Todoist") read into an import plan. Columns, as Todoist writes them:
// TYPE (task | section | note | meta), CONTENT, DESCRIPTION, PRIORITY (1 = p1, the highest, … 4 =
// none), INDENT (1 = a task, 2+ = a sub-task), AUTHOR, RESPONSIBLE, DATE, DATE_LANG, TIMEZONE, and
// in newer files DURATION, DURATION_UNIT, DEADLINE, DEADLINE_LANG. Columns are found by header
// name, so their order and any extra columns do not matter.
//
// One file is one project (named by the caller: the file name). Sections become headings, tasks
// to-dos, sub-tasks checklist items of their task, `@label`s in the content tags, `note` rows the
// task's notes. Due dates: an absolute date is the to-do's `whenDate`; a recurrence string is
// mapped to an RRULE where it has one (`every day`, `every 2 weeks`, `every monday, friday`,
// `every weekday`, `every month`, `every year`, …; `every!` counts from completion); the rest are
// listed in the report as not mapped. The CSV carries no ids: an item's source id is its place
// (project, section, content and how many times that content came before), so importing the same
// file again creates nothing twice.
import { AppError } from '../../../core/errors.js';
import { emptyPlan, type ImportPlan, type PlanTodo, type Priority } from '../plan.js';

/** RFC 4180 rows (quoted fields, doubled quotes, CRLF or LF); a BOM is dropped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

const PRIORITY: Record<string, Priority | null> = { '1': 'high', '2': 'medium', '3': 'low', '4': null };

const DAYS: Record<string, string> = {
  mon: 'MO', monday: 'MO', tue: 'TU', tues: 'TU', tuesday: 'TU', wed: 'WE', wednesday: 'WE', thu: 'TH', thur: 'TH', thurs: 'TH', thursday: 'TH',
  fri: 'FR', friday: 'FR', sat: 'SA', saturday: 'SA', sun: 'SU', sunday: 'SU',
};
const UNITS: Record<string, string> = { day: 'DAILY', days: 'DAILY', week: 'WEEKLY', weeks: 'WEEKLY', month: 'MONTHLY', months: 'MONTHLY', year: 'YEARLY', years: 'YEARLY' };
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const pad = (n: number) => String(n).padStart(2, '0');

/** An absolute date as Todoist writes it (`2026-05-01`, `May 1 2026`, `1 May 2026`, optional time); else null. */
export function todoistDate(text: string): string | null {
  const s = text.trim().toLowerCase();
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[ t].*)?$/.exec(s);
  if (m) return `${m[1]}-${m[2]}-${m[3]}`;
  m = /^([a-z]{3})[a-z]*\.? (\d{1,2}),? (\d{4})(?: .*)?$/.exec(s);
  if (m && MONTHS.includes(m[1]!)) return `${m[3]}-${pad(MONTHS.indexOf(m[1]!) + 1)}-${pad(Number(m[2]))}`;
  m = /^(\d{1,2}) ([a-z]{3})[a-z]*\.? (\d{4})(?: .*)?$/.exec(s);
  if (m && MONTHS.includes(m[2]!)) return `${m[3]}-${pad(MONTHS.indexOf(m[2]!) + 1)}-${pad(Number(m[1]))}`;
  return null;
}

/**
 * A Todoist recurrence string (English) as an RRULE, or null when it has none that Cairn takes.
 * `every!`/`every! ` (after completion) gives basis `completion`. A time of day (`at 9am`) and a
 * start or end (`starting …`, `until …`, `for 3 weeks`) are not mapped: the whole string is then
 * left out, so nothing is silently changed.
 */
export function todoistRecurrence(text: string): { rule: string; basis: 'schedule' | 'completion' } | null {
  const s = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const m = /^(every!?|after) (.+)$/.exec(s);
  if (!m) return null;
  const basis = m[1] === 'every' ? 'schedule' : 'completion';
  const rest = m[2]!;
  const simple: Record<string, string> = { day: 'FREQ=DAILY', week: 'FREQ=WEEKLY', month: 'FREQ=MONTHLY', year: 'FREQ=YEARLY', weekday: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', workday: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', weekend: 'FREQ=WEEKLY;BYDAY=SA,SU' };
  if (simple[rest]) return { rule: simple[rest], basis };
  const other = /^other (day|week|month|year)$/.exec(rest);
  if (other) return { rule: `FREQ=${UNITS[other[1]!]};INTERVAL=2`, basis };
  const n = /^(\d{1,3}) (days?|weeks?|months?|years?)$/.exec(rest);
  if (n) return { rule: Number(n[1]) === 1 ? `FREQ=${UNITS[n[2]!]}` : `FREQ=${UNITS[n[2]!]};INTERVAL=${Number(n[1])}`, basis };
  const days = rest.split(/\s*(?:,|and)\s*/).filter(Boolean);
  if (days.length && days.every((d) => DAYS[d])) return { rule: `FREQ=WEEKLY;BYDAY=${[...new Set(days.map((d) => DAYS[d]!))].join(',')}`, basis };
  const nth = /^(\d{1,2})(?:st|nd|rd|th)?$/.exec(rest);
  if (nth && Number(nth[1]) >= 1 && Number(nth[1]) <= 31) return { rule: `FREQ=MONTHLY;BYMONTHDAY=${Number(nth[1])}`, basis };
  return null;
}

const LABEL = /(^|\s)@([^\s@]+)/g;

export function todoistPlan(text: string, projectName: string): ImportPlan {
  const rows = parseCsv(text);
  const header = rows.shift()?.map((h) => h.trim().toUpperCase());
  if (!header || !header.includes('TYPE') || !header.includes('CONTENT')) {
    throw new AppError('validation_failed', 'The file is not a Todoist CSV export: its first line must name the columns TYPE and CONTENT.');
  }
  const col = (name: string) => header.indexOf(name);
  const [TYPE, CONTENT, DESCRIPTION, PRIORITY_COL, INDENT, DATE, DEADLINE, RESPONSIBLE] = ['TYPE', 'CONTENT', 'DESCRIPTION', 'PRIORITY', 'INDENT', 'DATE', 'DEADLINE', 'RESPONSIBLE'].map(col);
  const cell = (row: string[], i: number | undefined) => (i === undefined || i < 0 ? '' : (row[i] ?? '').trim());

  const plan = emptyPlan('todoist');
  const name = projectName.trim() || 'Todoist';
  const projectSid = `project:${name}`;
  plan.containers.push({ sid: projectSid, kind: 'project', parentSid: null, name });
  const seen = new Map<string, number>();
  const place = (key: string) => {
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return `${key}#${n}`;
  };
  let heading: { sid: string; name: string } | null = null;
  let task: PlanTodo | null = null;
  const tagNames = new Set<string>();

  rows.forEach((row, i) => {
    const line = i + 2;
    const type = cell(row, TYPE).toLowerCase();
    const content = cell(row, CONTENT);
    if (type === '' || type === 'meta') return;
    if (type === 'section') {
      heading = { sid: place(`section:${name}/${content}`), name: content || 'Section' };
      plan.headings.push({ sid: heading.sid, projectSid, name: heading.name });
      task = null;
      return;
    }
    if (type === 'note') {
      if (!task) return void plan.unmapped.push(`line ${line}: a comment with no task before it`);
      task.notes = [task.notes, content].filter(Boolean).join('\n\n');
      return;
    }
    if (type !== 'task') return void plan.unmapped.push(`line ${line}: row type "${type}" is not a Todoist task, section or comment`);
    const labels: string[] = [];
    const title = content.replace(LABEL, (_all, lead: string, label: string) => {
      labels.push(label);
      return lead;
    }).trim();
    const indent = Number(cell(row, INDENT) || '1');
    if (indent > 1) {
      if (!task) return void plan.unmapped.push(`line ${line}: a sub-task with no task before it`);
      task.checklist!.push({ title: title || content, done: false });
      if (indent > 2) plan.unmapped.push(`line ${line}: sub-task at depth ${indent} kept as a checklist item of its top task (Cairn checklists are flat)`);
      const lost = [cell(row, DESCRIPTION) && 'description', cell(row, DATE) && 'date', labels.length && 'labels'].filter(Boolean);
      if (lost.length) plan.unmapped.push(`line ${line}: sub-task "${title}" became a checklist item; its ${lost.join(', ')} are not kept`);
      return;
    }
    const h = heading as { sid: string; name: string } | null;
    const t: PlanTodo = {
      sid: place(`task:${name}/${h?.name ?? ''}/${content}`),
      parentSid: projectSid,
      headingSid: h?.sid ?? null,
      title: title || content || 'Untitled',
      notes: cell(row, DESCRIPTION) || null,
      priority: PRIORITY[cell(row, PRIORITY_COL)] ?? null,
      tags: [...new Set(labels)],
      checklist: [],
    };
    for (const l of t.tags!) tagNames.add(l);
    const due = cell(row, DATE);
    if (due) {
      const date = todoistDate(due);
      const rec = date ? null : todoistRecurrence(due);
      if (date) t.whenDate = date;
      else if (rec) t.recurrence = rec;
      else plan.unmapped.push(`line ${line}: due "${due}" of "${t.title}" is neither a date nor a recurrence Cairn can express; the task is imported without it`);
    }
    const deadline = cell(row, DEADLINE);
    if (deadline) {
      const d = todoistDate(deadline);
      if (d) t.deadline = d;
      else plan.unmapped.push(`line ${line}: deadline "${deadline}" of "${t.title}" is not a date; left out`);
    }
    if (cell(row, RESPONSIBLE)) plan.unmapped.push(`line ${line}: "${t.title}" is assigned to someone; Cairn has no assignees`);
    task = t;
    plan.todos.push(t);
  });
  for (const n of tagNames) plan.tags.push({ sid: `label:${n.toLowerCase()}`, name: n });
  return plan;
}
