// Issue 33 item 3: the Todoist CSV, Things 3 and .ics importers on fixtures made here (Things'
// database from the schema the community things.py library documents; never anyone's real data),
// each with a dry run first, then the import, then a re-run that creates nothing.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { registerUser } from '../helpers/http.js';
import { thingsDate, toThingsDate, thingsRecurrence } from '../../routers/imports/sources/things.js';
import { todoistRecurrence } from '../../routers/imports/sources/todoist.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app.close();
});

type Report = { created: Record<string, number>; existing: Record<string, number>; failed: unknown[]; unmapped: string[] };

async function finished(token: string, id: string) {
  for (let i = 0; i < 10_000; i++) {
    const r = await fetch(`${app.url}/v1/imports/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json()) as { status: string; report: Report };
    if (body.status !== 'running') return body;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('import job never finished');
}

async function runImport(token: string, query: string, body: string | Buffer) {
  const res = await fetch(`${app.url}/v1/imports?${query}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
  const json = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(json)).toBe(202);
  const job = await finished(token, json.id);
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
  return job.report;
}

type Doc = {
  containers: { id: string; kind: string; name: string; parentId: string | null; status: string; trashedAt: string | null; deadline: string | null }[];
  headings: { id: string; projectId: string; name: string }[];
  todos: {
    title: string;
    notes: string | null;
    status: string;
    parentId: string | null;
    headingId: string | null;
    whenDate: string | null;
    evening: boolean;
    someday: boolean;
    deadline: string | null;
    priority: string | null;
    tags: string[];
    checklist: { title: string; done: boolean }[];
    recurrence: { rule: string; basis: string } | null;
    trashedAt: string | null;
  }[];
  tags: { name: string }[];
};

async function exportOf(token: string): Promise<Doc> {
  const res = await fetch(`${app.url}/v1/export`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as Doc;
}

const TODOIST = [
  'TYPE,CONTENT,DESCRIPTION,PRIORITY,INDENT,AUTHOR,RESPONSIBLE,DATE,DATE_LANG,TIMEZONE,DURATION,DURATION_UNIT',
  'task,Buy milk @errand @home,Semi-skimmed,1,1,Ann (1),,2026-12-01,en,Europe/Paris,,',
  'task,Whole or skimmed?,,4,2,Ann (1),,,en,Europe/Paris,,',
  'note,"Ask at the counter, not online",,,,Ann (1),,,en,Europe/Paris,,',
  ',,,,,,,,,,,',
  'section,Weekly,,,,,,,,,,',
  'task,Water plants,,2,1,Ann (1),,every monday,en,Europe/Paris,,',
  'task,Review budget,,3,1,Ann (1),,every! 2 weeks,en,Europe/Paris,,',
  'task,Call the bank,,4,1,Ann (1),,every third friday at 9am,en,Europe/Paris,,',
  'task,"Quoted, with comma",,4,1,Ann (1),,Dec 24 2026,en,Europe/Paris,,',
].join('\r\n');

describe('Todoist CSV', () => {
  it('maps sections, tasks, sub-tasks, labels, priorities, dates and recurrences; lists what it cannot', async () => {
    const u = await registerUser(app);
    const dry = await runImport(u.session, 'source=todoist&name=Groceries&dryRun=true', TODOIST);
    expect(dry.created).toMatchObject({ containers: 1, headings: 1, todos: 5, tags: 2 });
    expect(dry.unmapped).toEqual([expect.stringMatching(/every third friday at 9am/)]);
    expect((await exportOf(u.session)).todos).toEqual([]);

    const report = await runImport(u.session, 'source=todoist&name=Groceries', TODOIST);
    expect(report.created).toMatchObject({ containers: 1, headings: 1, todos: 5, tags: 2 });
    expect(report.failed).toEqual([]);
    const doc = await exportOf(u.session);
    const project = doc.containers.find((c) => c.name === 'Groceries')!;
    expect(project.kind).toBe('project');
    const weekly = doc.headings.find((h) => h.name === 'Weekly')!;
    expect(weekly.projectId).toBe(project.id);
    const byTitle = new Map(doc.todos.map((t) => [t.title, t]));
    expect(byTitle.get('Buy milk')).toMatchObject({
      parentId: project.id,
      headingId: null,
      notes: 'Semi-skimmed\n\nAsk at the counter, not online',
      priority: 'high',
      whenDate: '2026-12-01',
      tags: ['errand', 'home'],
      checklist: [{ title: 'Whole or skimmed?', done: false }],
    });
    expect(byTitle.get('Water plants')).toMatchObject({ headingId: weekly.id, priority: 'medium', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' } });
    expect(byTitle.get('Review budget')).toMatchObject({ priority: 'low', recurrence: { rule: 'FREQ=WEEKLY;INTERVAL=2', basis: 'completion' } });
    expect(byTitle.get('Call the bank')).toMatchObject({ recurrence: null, priority: null });
    expect(byTitle.get('Quoted, with comma')).toMatchObject({ whenDate: '2026-12-24' });
    expect(doc.todos).toHaveLength(5);

    const again = await runImport(u.session, 'source=todoist&name=Groceries', TODOIST);
    expect(Object.values(again.created).every((n) => n === 0)).toBe(true);
    expect((await exportOf(u.session)).todos).toHaveLength(5);
  });

  it('reads the recurrence strings it documents', () => {
    expect(todoistRecurrence('every day')).toEqual({ rule: 'FREQ=DAILY', basis: 'schedule' });
    expect(todoistRecurrence('every weekday')).toEqual({ rule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', basis: 'schedule' });
    expect(todoistRecurrence('every other month')).toEqual({ rule: 'FREQ=MONTHLY;INTERVAL=2', basis: 'schedule' });
    expect(todoistRecurrence('every 15th')).toEqual({ rule: 'FREQ=MONTHLY;BYMONTHDAY=15', basis: 'schedule' });
    expect(todoistRecurrence('every mon, wed and fri')).toEqual({ rule: 'FREQ=WEEKLY;BYDAY=MO,WE,FR', basis: 'schedule' });
    expect(todoistRecurrence('after 3 days')).toEqual({ rule: 'FREQ=DAILY;INTERVAL=3', basis: 'completion' });
    expect(todoistRecurrence('every day at 9am')).toBeNull();
    expect(todoistRecurrence('tomorrow')).toBeNull();
  });
});

/** A Things 3 database with the tables and columns things.py reads (things/database.py). */
function thingsFixture(): Buffer {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE TMArea (uuid TEXT PRIMARY KEY, title TEXT, visible INTEGER, "index" INTEGER);
    CREATE TABLE TMTag (uuid TEXT PRIMARY KEY, title TEXT, shortcut TEXT, parent TEXT, "index" INTEGER);
    CREATE TABLE TMTask (
      uuid TEXT PRIMARY KEY, type INTEGER, trashed INTEGER, title TEXT, notes TEXT, status INTEGER,
      area TEXT, project TEXT, heading TEXT, start INTEGER, startDate INTEGER, deadline INTEGER,
      startBucket INTEGER, stopDate REAL, creationDate REAL, userModificationDate REAL, "index" INTEGER,
      todayIndex INTEGER, reminderTime INTEGER, rt1_recurrenceRule BLOB, rt1_repeatingTemplate TEXT,
      rt1_nextInstanceStartDate INTEGER
    );
    CREATE TABLE TMChecklistItem (uuid TEXT PRIMARY KEY, title TEXT, status INTEGER, task TEXT, "index" INTEGER, stopDate REAL, creationDate REAL, userModificationDate REAL);
    CREATE TABLE TMTaskTag (tasks TEXT, tags TEXT);
    CREATE TABLE TMAreaTag (areas TEXT, tags TEXT);
  `);
  db.prepare('INSERT INTO TMArea VALUES (?, ?, 1, ?)').run('A1', 'Personal', 0);
  db.prepare('INSERT INTO TMTag VALUES (?, ?, NULL, NULL, ?)').run('G1', 'Errand', 0);
  const task = db.prepare(`INSERT INTO TMTask (uuid, type, trashed, title, notes, status, area, project, heading, start, startDate, deadline, startBucket, "index", rt1_recurrenceRule, rt1_repeatingTemplate, rt1_nextInstanceStartDate)
    VALUES (@uuid, @type, @trashed, @title, @notes, @status, @area, @project, @heading, @start, @startDate, @deadline, @startBucket, @index, @rule, @template, @next)`);
  const base = { trashed: 0, notes: '', status: 0, area: null, project: null, heading: null, start: 1, startDate: null, deadline: null, startBucket: 0, rule: null, template: null, next: null };
  task.run({ ...base, uuid: 'P1', type: 1, title: 'Renovate', area: 'A1', deadline: toThingsDate('2027-01-31'), index: 0 });
  task.run({ ...base, uuid: 'H1', type: 2, title: 'Kitchen', project: 'P1', index: 1 });
  task.run({ ...base, uuid: 'T1', type: 0, title: 'Paint walls', notes: 'white', heading: 'H1', startDate: toThingsDate('2026-12-05'), startBucket: 1, deadline: toThingsDate('2026-12-20'), index: 2 });
  task.run({ ...base, uuid: 'T2', type: 0, title: 'Buy brushes', project: 'P1', start: 2, index: 3 });
  task.run({ ...base, uuid: 'T3', type: 0, title: 'Old chore', status: 3, index: 4 });
  task.run({ ...base, uuid: 'T4', type: 0, title: 'Area to-do', area: 'A1', index: 5 });
  task.run({ ...base, uuid: 'T5', type: 0, title: 'Deleted', trashed: 1, index: 6 });
  const weekly = '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>fu</key><integer>256</integer><key>fa</key><integer>1</integer><key>of</key><array><dict><key>wd</key><integer>2</integer></dict></array><key>tp</key><integer>0</integer></dict></plist>';
  task.run({ ...base, uuid: 'R1', type: 0, title: 'Take out bins', rule: Buffer.from(weekly), next: toThingsDate('2026-12-07'), index: 7 });
  task.run({ ...base, uuid: 'R1a', type: 0, title: 'Take out bins', template: 'R1', startDate: toThingsDate('2026-11-30'), index: 8 });
  task.run({ ...base, uuid: 'R1b', type: 0, title: 'Take out bins', template: 'R1', status: 3, index: 9 });
  db.prepare('INSERT INTO TMChecklistItem (uuid, title, status, task, "index") VALUES (?, ?, ?, ?, ?)').run('C1', 'Tape edges', 3, 'T1', 0);
  db.prepare('INSERT INTO TMChecklistItem (uuid, title, status, task, "index") VALUES (?, ?, ?, ?, ?)').run('C2', 'Two coats', 0, 'T1', 1);
  db.prepare('INSERT INTO TMTaskTag VALUES (?, ?)').run('T2', 'G1');
  const bytes = db.serialize();
  db.close();
  return bytes;
}

describe('Things 3 database', () => {
  it('maps areas, projects, headings, to-dos with when/evening/someday/deadline, checklists, tags, the logbook and repeating to-dos', async () => {
    const u = await registerUser(app);
    const file = thingsFixture();
    const dry = await runImport(u.session, 'source=things&dryRun=true', file);
    expect(dry.created).toMatchObject({ containers: 2, headings: 1, todos: 7, tags: 1 });
    expect(dry.unmapped).toEqual(expect.arrayContaining([expect.stringMatching(/Area to-do.*standalone/), expect.stringMatching(/open instance of a repeating/)]));

    const report = await runImport(u.session, 'source=things', file);
    expect(report.failed).toEqual([]);
    const doc = await exportOf(u.session);
    const area = doc.containers.find((c) => c.kind === 'area')!;
    const project = doc.containers.find((c) => c.kind === 'project')!;
    expect(area.name).toBe('Personal');
    expect(project).toMatchObject({ name: 'Renovate', parentId: area.id, deadline: '2027-01-31' });
    const kitchen = doc.headings.find((h) => h.name === 'Kitchen')!;
    const byTitle = (t: string) => doc.todos.filter((x) => x.title === t);
    expect(byTitle('Paint walls')[0]).toMatchObject({
      parentId: project.id,
      headingId: kitchen.id,
      notes: 'white',
      whenDate: '2026-12-05',
      evening: true,
      deadline: '2026-12-20',
      checklist: [
        { title: 'Tape edges', done: true },
        { title: 'Two coats', done: false },
      ],
    });
    expect(byTitle('Buy brushes')[0]).toMatchObject({ someday: true, tags: ['Errand'], parentId: project.id });
    expect(byTitle('Old chore')[0]).toMatchObject({ status: 'completed' });
    expect(byTitle('Area to-do')[0]).toMatchObject({ parentId: null });
    expect(byTitle('Deleted')[0]!.trashedAt).not.toBeNull();
    const bins = byTitle('Take out bins');
    expect(bins.map((b) => b.status).sort()).toEqual(['completed', 'open']);
    expect(bins.find((b) => b.status === 'open')).toMatchObject({ whenDate: '2026-12-07', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' } });

    const again = await runImport(u.session, 'source=things', file);
    expect(Object.values(again.created).every((n) => n === 0)).toBe(true);
  });

  it('reads Things dates and repeat rules', () => {
    // things.py's own example (convert_thingsdate_sql_expression_to_isodate): 132464128.
    expect(thingsDate(132_464_128)).toBe('2021-03-28');
    expect(toThingsDate('2021-03-28')).toBe(132_464_128);
    const monthly = '<plist><dict><key>fu</key><integer>8</integer><key>fa</key><integer>3</integer><key>of</key><array><dict><key>dy</key><integer>15</integer></dict></array><key>tp</key><integer>1</integer></dict></plist>';
    expect(thingsRecurrence(Buffer.from(monthly))).toEqual({ rule: 'FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=15', basis: 'completion' });
    expect(thingsRecurrence(Buffer.from('bplist00…'))).toBeNull();
  });

  it('refuses a file that is not a Things database (422)', async () => {
    const u = await registerUser(app);
    const res = await fetch(`${app.url}/v1/imports?source=things`, { method: 'POST', headers: { authorization: `Bearer ${u.session}` }, body: 'not sqlite' });
    expect(res.status).toBe(422);
  });
});

const ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Example//Fixture//EN',
  'BEGIN:VTODO',
  'UID:parent-1@example.test',
  'SUMMARY:Plan trip',
  'DESCRIPTION:Somewhere warm',
  'DTSTART;VALUE=DATE:20261201',
  'DUE;VALUE=DATE:20261215',
  'PRIORITY:1',
  'CATEGORIES:travel,family',
  'RRULE:FREQ=YEARLY',
  'END:VTODO',
  'BEGIN:VTODO',
  'UID:child-1@example.test',
  'SUMMARY:Book flights',
  'RELATED-TO;RELTYPE=PARENT:parent-1@example.test',
  'STATUS:COMPLETED',
  'END:VTODO',
  'BEGIN:VTODO',
  'UID:done-1@example.test',
  'SUMMARY:Renew passport',
  'STATUS:COMPLETED',
  'COMPLETED:20261101T100000Z',
  'END:VTODO',
  'BEGIN:VEVENT',
  'UID:event-1@example.test',
  'SUMMARY:Dentist',
  'DTSTART:20261203T090000Z',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('.ics with VTODOs', () => {
  it('imports to-dos through the CalDAV mapping, subtasks as checklist items; lists events', async () => {
    const u = await registerUser(app);
    const dry = await runImport(u.session, 'source=ics&dryRun=true', ICS);
    expect(dry.created).toMatchObject({ todos: 2, tags: 2 });
    expect(dry.unmapped).toEqual([expect.stringMatching(/VEVENT \(Dentist\)/)]);
    await runImport(u.session, 'source=ics', ICS);
    const doc = await exportOf(u.session);
    const trip = doc.todos.find((t) => t.title === 'Plan trip')!;
    expect(trip).toMatchObject({ notes: 'Somewhere warm', whenDate: '2026-12-01', deadline: '2026-12-15', priority: 'high', tags: ['travel', 'family'], checklist: [{ title: 'Book flights', done: true }] });
    expect(trip.recurrence).toEqual({ rule: 'FREQ=YEARLY', basis: 'schedule' });
    expect(doc.todos.find((t) => t.title === 'Renew passport')!.status).toBe('completed');
    const again = await runImport(u.session, 'source=ics', ICS);
    expect(again.created.todos).toBe(0);
  });
});
