// Recurrence in the app (app/src/recurrence.ts; docs/app.md "The editor"): a rule in plain words,
// the editor's picker to and from an RRULE, and every rule the picker writes is one the server
// accepts (routers/todos/recurrence.ts judges).
import { describe, expect, it } from 'vitest';
import { describeRecurrence, describeRule, pickOf, ruleOf, weekOrder, type Pick } from '../../app/src/recurrence.js';
import { recurrenceRuleError } from '../../routers/todos/recurrence.js';

describe('recurrence words', () => {
  it('the common rules read as Things says them', () => {
    expect(describeRule('FREQ=WEEKLY;BYDAY=MO')).toBe('Every Monday');
    expect(describeRule('FREQ=WEEKLY;INTERVAL=2;BYDAY=TH,TU')).toBe('Every 2 weeks on Tue, Thu');
    expect(describeRule('FREQ=MONTHLY;BYMONTHDAY=15')).toBe('Monthly on day 15');
    expect(describeRule('FREQ=MONTHLY;BYMONTHDAY=-1')).toBe('Monthly on the last day');
    expect(describeRule('FREQ=MONTHLY;INTERVAL=3')).toBe('Every 3 months');
    expect(describeRule('FREQ=MONTHLY;BYDAY=-1FR')).toBe('Monthly on the last Friday');
    expect(describeRule('FREQ=YEARLY')).toBe('Yearly');
    expect(describeRule('FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=1')).toBe('Yearly on March 1');
    expect(describeRule('FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR')).toBe('Every weekday');
    expect(describeRule('FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR')).toBe('Every weekday');
    expect(describeRule('FREQ=DAILY')).toBe('Every day');
    expect(describeRule('rrule:freq=daily;interval=3')).toBe('Every 3 days');
    expect(describeRule('FREQ=WEEKLY;COUNT=5')).toBe('Every week, 5 times');
    expect(describeRule('FREQ=DAILY;UNTIL=20261231')).toMatch(/^Every day, until /);
  });

  it('what the words do not cover is shown as the rule; the basis and no rule', () => {
    expect(describeRule('FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO')).toBe('Custom: FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO');
    expect(describeRule('FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1')).toBe('Custom: FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1');
    expect(describeRule('nonsense')).toBe('Custom: nonsense');
    expect(describeRecurrence({ rule: 'FREQ=DAILY;INTERVAL=3', basis: 'completion' })).toBe('Every 3 days, after completion');
    expect(describeRecurrence(null)).toBe('Does not repeat');
  });

  it('the week start orders the days', () => {
    expect(weekOrder('sunday')).toEqual(['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA']);
    expect(describeRule('FREQ=WEEKLY;BYDAY=MO,SU', 'sunday')).toBe('Every week on Sun, Mon');
    expect(describeRule('FREQ=WEEKLY;BYDAY=MO,SU')).toBe('Every week on Mon, Sun');
  });
});

describe('the picker', () => {
  const picks: Pick[] = [
    { kind: 'daily', interval: 1 },
    { kind: 'daily', interval: 4 },
    { kind: 'weekdays' },
    { kind: 'weekly', interval: 1, days: [] },
    { kind: 'weekly', interval: 2, days: ['TU', 'TH'] },
    { kind: 'monthly', interval: 1, day: 15 },
    { kind: 'monthly', interval: 2, day: 31 },
    { kind: 'yearly', interval: 1 },
  ];
  it('writes rules the server accepts, and reads them back', () => {
    for (const p of picks) {
      const rule = ruleOf(p);
      expect(recurrenceRuleError(rule), rule).toBeNull();
      expect(pickOf(rule)).toEqual(p);
      expect(describeRule(rule)).not.toMatch(/^Custom/);
    }
    expect(ruleOf({ kind: 'weekly', interval: 1, days: ['FR', 'MO'] })).toBe('FREQ=WEEKLY;BYDAY=MO,FR');
  });
  it('anything else is the raw RRULE field', () => {
    expect(pickOf('FREQ=MONTHLY;BYDAY=-1FR')).toEqual({ kind: 'custom', rule: 'FREQ=MONTHLY;BYDAY=-1FR' });
    expect(pickOf(undefined)).toEqual({ kind: 'weekly', interval: 1, days: [] });
  });
});
