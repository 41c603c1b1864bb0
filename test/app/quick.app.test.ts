// The quick-entry parser (app/src/quick.ts; docs/app.md "Quick entry"): Things' words, tags,
// projects, deadlines and chrono-node's dates, resolved against a fixed local `now`.
import { describe, expect, it } from 'vitest';
import { parseQuick } from '../../app/src/quick.js';

// Wednesday 25 November 2026, 10:00 local time.
const now = new Date(2026, 10, 25, 10, 0, 0);
const projects = [
  { id: 'P1', name: 'Garden' },
  { id: 'P2', name: 'Garden party' },
  { id: 'P3', name: 'Tax return' },
];

describe('quick entry', () => {
  it('reads a date and a tag; the rest is the title', () => {
    expect(parseQuick('Call the bank tomorrow #Errands', now, projects)).toMatchObject({ title: 'Call the bank', whenDate: '2026-11-26', tags: ['Errands'], chips: ['Tag: Errands', 'When: Thu, Nov 26'] });
  });

  it('next friday, today, this evening / tonight, someday', () => {
    expect(parseQuick('Pay rent next friday', now, projects)).toMatchObject({ title: 'Pay rent', whenDate: '2026-12-04' });
    expect(parseQuick('Pay rent today', now, projects)).toMatchObject({ title: 'Pay rent', whenDate: '2026-11-25', chips: ['When: Today'] });
    expect(parseQuick('Read tonight', now, projects)).toMatchObject({ title: 'Read', whenDate: '2026-11-25', evening: true });
    expect(parseQuick('Read this evening', now, projects)).toMatchObject({ title: 'Read', whenDate: '2026-11-25', evening: true, chips: ['When: This Evening'] });
    expect(parseQuick('Learn Go someday', now, projects)).toMatchObject({ title: 'Learn Go', someday: true, chips: ['When: Someday'] });
    expect(parseQuick('Learn Go someday', now, projects).whenDate).toBeUndefined();
  });

  it('#"two words" tags, @Project (the longest name), due <date> for a deadline', () => {
    expect(parseQuick('Buy lights #"Party stuff" #home', now, projects)).toMatchObject({ title: 'Buy lights', tags: ['Party stuff', 'home'] });
    expect(parseQuick('Invite all @Garden party', now, projects)).toMatchObject({ title: 'Invite all', project: { id: 'P2', name: 'Garden party' } });
    expect(parseQuick('Mow @garden', now, projects)).toMatchObject({ title: 'Mow', project: { id: 'P1' } });
    expect(parseQuick('File it @"Tax return" due friday', now, projects)).toMatchObject({ title: 'File it', project: { id: 'P3' }, deadline: '2026-11-27' });
    expect(parseQuick('File it due friday', now, projects).whenDate).toBeUndefined();
    expect(parseQuick('Email @nobody', now, projects)).toMatchObject({ title: 'Email @nobody', chips: [] });
  });

  it('every …: a recurrence chip and rule, first day as when unless a date is given', () => {
    expect(parseQuick('Water plants every monday #home', now, projects)).toMatchObject({
      title: 'Water plants',
      tags: ['home'],
      recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' },
      whenDate: '2026-11-30',
      chips: ['Tag: home', 'Repeat: Every Monday', 'When: Mon, Nov 30'],
    });
    expect(parseQuick('Vitamins every day', now, projects)).toMatchObject({ title: 'Vitamins', recurrence: { rule: 'FREQ=DAILY' }, whenDate: '2026-11-25', chips: ['Repeat: Every day', 'When: Today'] });
    // Wednesday: the first weekday is today.
    expect(parseQuick('Standup every weekday', now, projects)).toMatchObject({ title: 'Standup', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' }, whenDate: '2026-11-25', chips: ['Repeat: Every weekday', 'When: Today'] });
    expect(parseQuick('Review every 2 weeks', now, projects)).toMatchObject({ title: 'Review', recurrence: { rule: 'FREQ=WEEKLY;INTERVAL=2' }, chips: ['Repeat: Every 2 weeks', 'When: Today'] });
    expect(parseQuick('Pay rent every month', now, projects)).toMatchObject({ title: 'Pay rent', recurrence: { rule: 'FREQ=MONTHLY' }, chips: ['Repeat: Monthly', 'When: Today'] });
    expect(parseQuick('Renew passport every year', now, projects)).toMatchObject({ title: 'Renew passport', recurrence: { rule: 'FREQ=YEARLY' }, chips: ['Repeat: Yearly', 'When: Today'] });
    expect(parseQuick('Gym every tuesday and thursday', now, projects)).toMatchObject({ title: 'Gym', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=TU,TH' }, whenDate: '2026-11-26', chips: ['Repeat: Every week on Tue, Thu', 'When: Thu, Nov 26'] });
    expect(parseQuick('Sync every other week on mon, fri', now, projects)).toMatchObject({ recurrence: { rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR' }, whenDate: '2026-11-27' });
    // On the 1st: the next month that has it (December).
    expect(parseQuick('Pay rent every month on the 1st', now, projects)).toMatchObject({ title: 'Pay rent', recurrence: { rule: 'FREQ=MONTHLY;BYMONTHDAY=1' }, whenDate: '2026-12-01' });
    // A date given as well is the when; `monday` is not read as a date.
    expect(parseQuick('Ship every monday tomorrow', now, projects)).toMatchObject({ title: 'Ship', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO' }, whenDate: '2026-11-26' });
    expect(parseQuick('Call mom every sunday and buy milk', now, projects)).toMatchObject({ title: 'Call mom and buy milk', recurrence: { rule: 'FREQ=WEEKLY;BYDAY=SU' } });
    // Not a recurrence: `every` without a unit or day stays in the title.
    expect(parseQuick('Read every page', now, projects)).toEqual({ title: 'Read every page', tags: [], chips: [] });
    expect(parseQuick('Ping every 2 weekdays', now, projects).recurrence).toBeUndefined();
  });

  it('next week is the first day of next week by the week start', () => {
    expect(parseQuick('Plan next week', now, projects)).toMatchObject({ title: 'Plan', whenDate: '2026-11-30' });
    expect(parseQuick('Plan next week', now, projects, { weekStart: 'sunday' })).toMatchObject({ title: 'Plan', whenDate: '2026-11-29' });
    expect(parseQuick('Plan next week', now, projects, { weekStart: 'wednesday' })).toMatchObject({ whenDate: '2026-12-02' });
    expect(parseQuick('Report due next week', now, projects, { weekStart: 'saturday' })).toMatchObject({ title: 'Report', deadline: '2026-11-28' });
    // The weekday order of the words follows it too.
    expect(parseQuick('Gym every sunday and monday', now, projects, { weekStart: 'sunday' }).chips[0]).toBe('Repeat: Every week on Sun, Mon');
    expect(parseQuick('Gym every sunday and monday', now, projects).chips[0]).toBe('Repeat: Every week on Mon, Sun');
  });

  it('plain text stays plain', () => {
    expect(parseQuick('Write the report', now, projects)).toEqual({ title: 'Write the report', tags: [], chips: [] });
  });
});
