// Things 3's database file (`main.sqlite` in `~/Library/Group Containers/
// JLMPQHK86H.com.culturedcode.ThingsMac/Things Database.thingsdatabase/`; docs/import.md "Things
// 3") read into an import plan. The schema is the one the community `things.py` library documents
// (things/database.py): TMArea, TMTag, TMTask (type 0 to-do, 1 project, 2 heading; status 0 open,
// 2 canceled, 3 completed; start 0 Inbox, 1 Anytime, 2 Someday; trashed 0/1), TMChecklistItem,
// TMTaskTag. Dates `startDate` and `deadline` are "Things dates", the integer
// YYYYYYYYYYYMMMMDDDDD0000000 in binary (year << 16 | month << 12 | day << 7); older files have
// `dueDate` and `actionGroup` instead of `deadline` and `heading`, with Unix times. `startBucket`
// 1 (This Evening) is read when the column is there (things.py does not document it).
//
// Areas, projects, headings, to-dos (with when/evening/someday/deadline, tags, checklists, status:
// the logbook is the completed and canceled ones) map one to one. Cairn keeps to-dos in projects,
// not areas: a to-do directly in an area is imported standalone and listed. A finished project
// becomes an archived one. Repeating to-dos: Things keeps a hidden template with the rule
// (rt1_recurrenceRule, a property list) and makes instances from it; the template becomes one
// recurring Cairn to-do when its rule maps (every N days/weeks/months/years, weekdays, a day of the
// month; "after completion" as basis `completion`), its open instances are left out (the recurring
// to-do stands for them), finished instances are kept as finished to-dos. The file is read from
// memory, read only: nothing of it is written anywhere.
import Database from 'better-sqlite3';
import { AppError } from '../../../core/errors.js';
import { emptyPlan, type ImportPlan, type PlanTodo } from '../plan.js';

/** A Things date integer as YYYY-MM-DD (null for 0/null/unreadable). */
export function thingsDate(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) return null;
  const y = (value & 0b111111111110000000000000000) >> 16;
  const m = (value & 0b000000000001111000000000000) >> 12;
  const d = (value & 0b000000000000000111110000000) >> 7;
  if (y < 1900 || m < 1 || m > 12 || d < 1 || d > 31) return null;
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The inverse, for fixtures: YYYY-MM-DD as a Things date integer. */
export function toThingsDate(iso: string): number {
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  return (y << 16) | (m << 12) | (d << 7);
}

/** An old-format Unix time (seconds) as its UTC date. */
const unixDate = (v: unknown): string | null => (typeof v === 'number' && v > 0 ? new Date(v * 1000).toISOString().slice(0, 10) : null);

const WD = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA']; // Things' `wd` counts from Sunday = 1

/**
 * A repeat rule (XML property list; keys as Things writes them: `fu` unit 16 day, 256 week, 8
 * month, 4 year; `fa` amount; `of` offsets, `wd` weekday 1–7 from Sunday, `dy` day of month;
 * `tp` 1 = after completion) as an RRULE, or null.
 */
export function thingsRecurrence(plist: unknown): { rule: string; basis: 'schedule' | 'completion' } | null {
  const text = Buffer.isBuffer(plist) ? plist.toString('utf8') : typeof plist === 'string' ? plist : '';
  if (!text.includes('<plist')) return null; // a binary property list: not read
  const int = (key: string) => {
    const m = new RegExp(`<key>${key}</key>\\s*<integer>(-?\\d+)</integer>`).exec(text);
    return m ? Number(m[1]) : null;
  };
  const unit = ({ 16: 'DAILY', 256: 'WEEKLY', 8: 'MONTHLY', 4: 'YEARLY' } as Record<number, string>)[int('fu') ?? -1];
  if (!unit) return null;
  const amount = int('fa') ?? 1;
  if (amount < 1 || amount > 1000) return null;
  let rule = `FREQ=${unit}${amount > 1 ? `;INTERVAL=${amount}` : ''}`;
  const days = [...text.matchAll(/<key>wd<\/key>\s*<integer>(\d)<\/integer>/g)].map((m) => WD[Number(m[1]) - 1]).filter(Boolean);
  const monthDays = [...text.matchAll(/<key>dy<\/key>\s*<integer>(-?\d+)<\/integer>/g)].map((m) => Number(m[1]));
  if (unit === 'WEEKLY' && days.length) rule += `;BYDAY=${[...new Set(days)].join(',')}`;
  else if (unit === 'MONTHLY' && monthDays.length && monthDays.every((d) => d >= 1 && d <= 31)) rule += `;BYMONTHDAY=${[...new Set(monthDays)].join(',')}`;
  else if (days.length || monthDays.length) return null;
  return { rule, basis: int('tp') === 1 ? 'completion' : 'schedule' };
}

type Row = Record<string, unknown>;

/** The file's bytes as a read-only database; a WAL-mode header is read as rollback-journal so it opens from memory. */
function openThings(bytes: Buffer): Database.Database {
  if (bytes.length < 100 || bytes.subarray(0, 16).toString('latin1') !== 'SQLite format 3\0') {
    throw new AppError('validation_failed', 'The file is not an SQLite database: give Things 3\'s main.sqlite (docs/import.md "Things 3").');
  }
  const copy = Buffer.from(bytes);
  if (copy[18] === 2) copy[18] = 1;
  if (copy[19] === 2) copy[19] = 1;
  const db = new Database(copy, { readonly: true });
  const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]));
  if (!tables.has('TMTask') || !tables.has('TMArea')) {
    db.close();
    throw new AppError('validation_failed', 'The database has no TMTask and TMArea tables: it is not a Things 3 database.');
  }
  return db;
}

export function thingsPlan(bytes: Buffer): ImportPlan {
  const db = openThings(bytes);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function read(db: Database.Database): ImportPlan {
  const plan = emptyPlan('things');
  const cols = new Set((db.prepare('PRAGMA table_info(TMTask)').all() as { name: string }[]).map((c) => c.name));
  const has = (c: string) => cols.has(c);
  const newDates = has('deadline') || !has('dueDate');
  const headingCol = has('heading') ? 'heading' : has('actionGroup') ? 'actionGroup' : null;
  const deadlineCol = has('deadline') ? 'deadline' : has('dueDate') ? 'dueDate' : null;
  const ruleCol = has('rt1_recurrenceRule') ? 'rt1_recurrenceRule' : has('recurrenceRule') ? 'recurrenceRule' : null;
  const templateCol = has('rt1_repeatingTemplate') ? 'rt1_repeatingTemplate' : has('repeatingTemplate') ? 'repeatingTemplate' : null;
  const nextCol = has('rt1_nextInstanceStartDate') ? 'rt1_nextInstanceStartDate' : null;
  const date = (v: unknown) => (newDates ? thingsDate(v) : unixDate(v));
  const tableCols = (t: string) => new Set((db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name));
  const order = (t: string) => (tableCols(t).has('index') ? ' ORDER BY "index"' : '');

  const tagTitle = new Map<string, string>();
  for (const t of db.prepare(`SELECT uuid, title FROM TMTag${order('TMTag')}`).all() as Row[]) {
    const name = String(t.title ?? '').trim();
    if (!name) continue;
    tagTitle.set(String(t.uuid), name);
    plan.tags.push({ sid: `tag:${String(t.uuid)}`, name });
  }
  const tagsOf = new Map<string, string[]>();
  if (tableCols('TMTaskTag').size) {
    for (const l of db.prepare('SELECT tasks, tags FROM TMTaskTag').all() as Row[]) {
      const name = tagTitle.get(String(l.tags));
      if (name) tagsOf.set(String(l.tasks), [...(tagsOf.get(String(l.tasks)) ?? []), name]);
    }
  }
  const checklistOf = new Map<string, { title: string; done: boolean }[]>();
  if (tableCols('TMChecklistItem').size) {
    for (const c of db.prepare(`SELECT title, status, task FROM TMChecklistItem${order('TMChecklistItem')}`).all() as Row[]) {
      const title = String(c.title ?? '').trim() || '(untitled)';
      checklistOf.set(String(c.task), [...(checklistOf.get(String(c.task)) ?? []), { title, done: c.status === 3 || c.status === 2 }]);
    }
  }

  const areaIds = new Set<string>();
  for (const a of db.prepare(`SELECT uuid, title FROM TMArea${order('TMArea')}`).all() as Row[]) {
    areaIds.add(String(a.uuid));
    plan.containers.push({ sid: `area:${String(a.uuid)}`, kind: 'area', parentSid: null, name: String(a.title ?? '').trim() || 'Untitled area' });
  }

  const tasks = db.prepare(`SELECT * FROM TMTask ORDER BY "index"`).all() as Row[];
  const projects = new Map<string, Row>();
  const headings = new Map<string, Row>();
  for (const t of tasks) {
    if (t.type === 1) projects.set(String(t.uuid), t);
    if (t.type === 2) headings.set(String(t.uuid), t);
  }
  for (const [uuid, p] of projects) {
    const area = p.area != null && areaIds.has(String(p.area)) ? `area:${String(p.area)}` : null;
    const finished = p.status === 3 || p.status === 2;
    if (finished) plan.unmapped.push(`project "${String(p.title)}": ${p.status === 3 ? 'completed' : 'canceled'} in Things; imported as archived`);
    plan.containers.push({
      sid: `task:${uuid}`,
      kind: 'project',
      parentSid: area,
      name: String(p.title ?? '').trim() || 'Untitled project',
      notes: String(p.notes ?? '') || null,
      deadline: deadlineCol ? date(p[deadlineCol]) : null,
      archived: finished,
      trashed: p.trashed === 1,
    });
  }
  for (const [uuid, h] of headings) {
    if (h.project == null || !projects.has(String(h.project))) {
      plan.unmapped.push(`heading "${String(h.title)}": in no project; left out (its to-dos are kept)`);
      continue;
    }
    plan.headings.push({ sid: `task:${uuid}`, projectSid: `task:${String(h.project)}`, name: String(h.title ?? '').trim() || 'Untitled heading' });
  }
  const headingSids = new Set(plan.headings.map((h) => h.sid));

  for (const t of tasks) {
    if (t.type !== 0) continue;
    const uuid = String(t.uuid);
    const title = String(t.title ?? '').trim() || 'Untitled';
    const rule = ruleCol ? t[ruleCol] : null;
    const template = templateCol ? t[templateCol] : null;
    const status = t.status === 3 ? 'completed' : t.status === 2 ? 'canceled' : 'open';
    if (template != null && status === 'open') {
      plan.unmapped.push(`"${title}": an open instance of a repeating to-do; the repeating to-do itself is imported instead`);
      continue;
    }
    let recurrence: PlanTodo['recurrence'] = null;
    if (rule != null) {
      recurrence = thingsRecurrence(rule);
      if (!recurrence) {
        plan.unmapped.push(`"${title}": its repeat rule has no RRULE Cairn takes; imported as a to-do that does not repeat`);
      }
    }
    const heading = headingCol && t[headingCol] != null ? `task:${String(t[headingCol])}` : null;
    const headingRow = heading && headingSids.has(heading) ? headings.get(String(t[headingCol!])) : undefined;
    let parent: string | null = t.project != null && projects.has(String(t.project)) ? `task:${String(t.project)}` : null;
    if (!parent && headingRow) parent = `task:${String(headingRow.project)}`;
    if (!parent && t.area != null && areaIds.has(String(t.area))) {
      plan.unmapped.push(`"${title}": directly in an area; Cairn keeps to-dos in projects, so it is imported standalone`);
    }
    const when = rule != null && nextCol ? date(t[nextCol]) ?? date(t.startDate) : date(t.startDate);
    plan.todos.push({
      sid: `task:${uuid}`,
      parentSid: parent,
      headingSid: headingRow ? heading : null,
      title,
      notes: String(t.notes ?? '') || null,
      whenDate: when,
      evening: has('startBucket') && t.startBucket === 1 && when !== null,
      someday: t.start === 2 && when === null,
      deadline: deadlineCol ? date(t[deadlineCol]) : null,
      tags: [...new Set(tagsOf.get(uuid) ?? [])],
      checklist: checklistOf.get(uuid) ?? [],
      recurrence,
      status,
      trashed: t.trashed === 1,
    });
  }
  return plan;
}
