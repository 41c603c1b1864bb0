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

  it('plain text stays plain', () => {
    expect(parseQuick('Write the report', now, projects)).toEqual({ title: 'Write the report', tags: [], chips: [] });
  });
});
