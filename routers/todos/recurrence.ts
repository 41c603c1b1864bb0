// Recurring to-dos (DECISIONS §5, issue 4): the `recurrence` field's schema and the next
// occurrence of a series. Pure and transport-agnostic: no database, no clock, no request.
// Occurrences come from the `rrule` library; this module only decides which rules to accept,
// where a series starts, and how a to-do's dates move. Decisions: docs/recurrence.md.
import { isCalendarDate } from '../../core/calendar.js';
import { createRequire } from 'node:module';
import type { Options as RRuleOptions, Weekday as RRuleWeekday } from 'rrule';
import { z } from 'zod';
import { AppError, pointerOf, type FieldError } from '../../core/errors.js';

// rrule ships CommonJS plus a non-standard "module" field, so Node's ESM loader finds no named
// exports (jkbrzt/rrule#419, #548). require() loads the same CommonJS build under tsx, vitest
// and the compiled server alike.
const { RRule, Weekday } = createRequire(import.meta.url)('rrule') as typeof import('rrule');

/** Longest accepted `rule`, in characters. */
export const RECURRENCE_RULE_MAX = 1024;
/** Largest INTERVAL accepted (every 1000 days/weeks/months/years). */
export const RECURRENCE_INTERVAL_MAX = 1000;
/** Largest COUNT accepted. */
export const RECURRENCE_COUNT_MAX = 1_000_000;

// ---------------------------------------------------------------------------------------------
// Rule text → parts. rrule's own parser is lenient (it takes INTERVAL=abc, BYDAY=XX,
// BYMONTHDAY=32, COUNT=-1, a repeated FREQ, and ignores TZID), so the RFC 5545 §3.3.10 grammar
// is checked here first; the library then parses the checked text and must agree.

const FREQS = ['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY'] as const;
type Freq = (typeof FREQS)[number];
const SUB_DAILY = ['HOURLY', 'MINUTELY', 'SECONDLY'];
/** RFC order; the index is rrule's weekday number (0 = Monday). */
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
const PART_NAMES = [
  'FREQ', 'UNTIL', 'COUNT', 'INTERVAL', 'BYSECOND', 'BYMINUTE', 'BYHOUR', 'BYDAY', 'BYMONTHDAY',
  'BYYEARDAY', 'BYWEEKNO', 'BYMONTH', 'BYSETPOS', 'WKST',
] as const;

type ByDay = { day: number; n: number | null };

/** A rule that passed every check: what nextOccurrence works from. */
type RuleParts = {
  freq: Freq;
  interval: number;
  count: number | null;
  /** Last allowed occurrence date, YYYY-MM-DD (inclusive). */
  until: string | null;
  bymonth: number[];
  bymonthday: number[];
  byyearday: number[];
  byweekno: number[];
  bysetpos: number[];
  byday: ByDay[];
  wkst: number;
};

class RuleError extends Error {}

function intList(name: string, value: string, max: number, signed: boolean): number[] {
  const item = signed ? /^[+-]?\d{1,3}$/ : /^\d{1,2}$/;
  const range = signed ? `1 to ${max} or -${max} to -1` : `1 to ${max}`;
  return value.split(',').map((raw) => {
    const n = item.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n === 0 || Math.abs(n) > max) {
      throw new RuleError(`${name} takes a comma-separated list of integers from ${range}; "${raw}" is not one`);
    }
    return n;
  });
}

function positive(name: string, value: string, max: number): number {
  const n = /^\d{1,7}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) throw new RuleError(`${name} must be an integer from 1 to ${max}`);
  return n;
}

function weekday(name: string, value: string): number {
  const i = WEEKDAYS.indexOf(value as (typeof WEEKDAYS)[number]);
  if (i < 0) throw new RuleError(`${name} must be one of ${WEEKDAYS.join(', ')}; "${value}" is not`);
  return i;
}

/** RFC 5545: UNTIL is a DATE (YYYYMMDD) or a DATE-TIME (YYYYMMDDTHHMMSS, UTC with Z). */
function untilDate(value: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$/.exec(value);
  const bad = () =>
    new RuleError('UNTIL must be a date as YYYYMMDD or a date-time as YYYYMMDDTHHMMSSZ, e.g. UNTIL=20251231');
  if (!m) throw bad();
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (!isCalendarDate(date)) throw bad();
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 60)) throw bad();
  return date;
}

function parseParts(input: string): { parts: RuleParts; text: string } {
  if (input.length === 0) throw new RuleError('must not be empty');
  if (input.length > RECURRENCE_RULE_MAX) throw new RuleError(`must be at most ${RECURRENCE_RULE_MAX} characters`);
  if (/\s/.test(input)) {
    throw new RuleError('must be a single RRULE line without spaces or line breaks (DTSTART, EXDATE and RDATE are not accepted)');
  }
  // RFC 5545 §2: property names and enumerated values are case-insensitive.
  const text = input.toUpperCase().replace(/^RRULE:/, '');
  if (/^(DTSTART|EXDATE|RDATE|EXRULE)[:;]/.test(text)) {
    throw new RuleError('only the RRULE value is accepted; the series starts at the to-do\'s whenDate, so DTSTART is not allowed');
  }
  const seen = new Map<string, string>();
  for (const piece of text.split(';')) {
    const eq = piece.indexOf('=');
    const name = eq < 0 ? piece : piece.slice(0, eq);
    if (name === 'DTSTART') {
      throw new RuleError('DTSTART is not allowed: the series starts at the to-do\'s whenDate');
    }
    if (eq < 0 || !(PART_NAMES as readonly string[]).includes(name)) {
      throw new RuleError(`"${piece}" is not an RRULE part (expected NAME=VALUE with NAME one of ${PART_NAMES.join(', ')})`);
    }
    if (seen.has(name)) throw new RuleError(`${name} must not appear more than once`);
    const value = piece.slice(eq + 1);
    if (value === '') throw new RuleError(`${name} has no value`);
    seen.set(name, value);
  }

  const freqText = seen.get('FREQ');
  if (freqText === undefined) throw new RuleError('FREQ is required, e.g. FREQ=WEEKLY;BYDAY=MO');
  if (SUB_DAILY.includes(freqText)) {
    throw new RuleError(`FREQ=${freqText} is not supported: to-dos recur on calendar days (DAILY, WEEKLY, MONTHLY or YEARLY)`);
  }
  if (!(FREQS as readonly string[]).includes(freqText)) {
    throw new RuleError(`FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY; "${freqText}" is not`);
  }
  const freq = freqText as Freq;
  for (const name of ['BYHOUR', 'BYMINUTE', 'BYSECOND']) {
    if (seen.has(name)) throw new RuleError(`${name} is not supported: to-dos recur on calendar days, without a time`);
  }
  if (seen.has('COUNT') && seen.has('UNTIL')) throw new RuleError('COUNT and UNTIL must not both appear');

  const get = <T>(name: string, parse: (v: string) => T, fallback: T): T => {
    const v = seen.get(name);
    return v === undefined ? fallback : parse(v);
  };
  const parts: RuleParts = {
    freq,
    interval: get('INTERVAL', (v) => positive('INTERVAL', v, RECURRENCE_INTERVAL_MAX), 1),
    count: get<number | null>('COUNT', (v) => positive('COUNT', v, RECURRENCE_COUNT_MAX), null),
    until: get<string | null>('UNTIL', untilDate, null),
    bymonth: get('BYMONTH', (v) => intList('BYMONTH', v, 12, false), []),
    bymonthday: get('BYMONTHDAY', (v) => intList('BYMONTHDAY', v, 31, true), []),
    byyearday: get('BYYEARDAY', (v) => intList('BYYEARDAY', v, 366, true), []),
    byweekno: get('BYWEEKNO', (v) => intList('BYWEEKNO', v, 53, true), []),
    bysetpos: get('BYSETPOS', (v) => intList('BYSETPOS', v, 366, true), []),
    byday: get(
      'BYDAY',
      (v) =>
        v.split(',').map((raw): ByDay => {
          const m = /^([+-]?\d{1,2})?([A-Z]{2})$/.exec(raw);
          if (!m) throw new RuleError(`BYDAY takes weekdays such as MO or 1MO or -1FR; "${raw}" is not one`);
          const day = weekday('BYDAY', m[2]!);
          if (m[1] === undefined) return { day, n: null };
          const n = Number(m[1]);
          if (n === 0 || Math.abs(n) > 53) throw new RuleError(`BYDAY ordinal must be from 1 to 53 or -53 to -1; "${raw}" is not`);
          return { day, n };
        }),
      [],
    ),
    wkst: get('WKST', (v) => weekday('WKST', v), 0),
  };

  // RFC 5545 §3.3.10 rule-part restrictions.
  const ordinalDays = parts.byday.some((d) => d.n !== null);
  if (ordinalDays && freq !== 'MONTHLY' && freq !== 'YEARLY') {
    throw new RuleError('BYDAY with an ordinal (such as 1MO) is only allowed with FREQ=MONTHLY or FREQ=YEARLY');
  }
  if (ordinalDays && freq === 'YEARLY' && parts.byweekno.length > 0) {
    throw new RuleError('BYDAY with an ordinal must not be combined with BYWEEKNO');
  }
  if (freq === 'MONTHLY' && parts.byday.some((d) => d.n !== null && Math.abs(d.n) > 5)) {
    throw new RuleError('with FREQ=MONTHLY a BYDAY ordinal must be from 1 to 5 or -5 to -1: a month has at most five of a weekday');
  }
  if (freq === 'WEEKLY' && parts.bymonthday.length > 0) throw new RuleError('BYMONTHDAY must not be used with FREQ=WEEKLY');
  if (freq !== 'YEARLY' && parts.byyearday.length > 0) throw new RuleError('BYYEARDAY is only allowed with FREQ=YEARLY');
  if (freq !== 'YEARLY' && parts.byweekno.length > 0) throw new RuleError('BYWEEKNO is only allowed with FREQ=YEARLY');
  if (parts.bysetpos.length > 0) {
    const others = parts.byday.length + parts.bymonthday.length + parts.byyearday.length + parts.byweekno.length + parts.bymonth.length;
    if (others === 0) throw new RuleError('BYSETPOS must be used together with another BYxxx part');
    // A day holds one date, so BYSETPOS cannot pick anything a DAILY rule does not already give.
    if (freq === 'DAILY') throw new RuleError('BYSETPOS is not supported with FREQ=DAILY');
    const weekSize = Math.max(1, new Set(parts.byday.map((d) => d.day)).size);
    if (freq === 'WEEKLY' && parts.bysetpos.some((p) => Math.abs(p) > weekSize)) {
      throw new RuleError(`BYSETPOS cannot exceed the ${weekSize} day(s) a week of this rule holds`);
    }
  }
  // Cost bound: a DAILY rule is iterated one day at a time, and INTERVAL makes its filters able to
  // miss forever (FREQ=DAILY;INTERVAL=7;BYDAY=MO from a Tuesday). Such rules read better as WEEKLY.
  const dailyFilters = parts.bymonth.length + parts.bymonthday.length + parts.byday.length;
  if (freq === 'DAILY' && parts.interval > 1 && dailyFilters > 0) {
    throw new RuleError('FREQ=DAILY with INTERVAL above 1 cannot be combined with BYDAY, BYMONTH or BYMONTHDAY; use FREQ=WEEKLY (e.g. FREQ=WEEKLY;INTERVAL=2;BYDAY=MO)');
  }

  // The library must read the same rule (and build a series from it).
  try {
    const options = RRule.parseString(text);
    new RRule({ ...options, dtstart: new Date(Date.UTC(2000, 0, 1)) }, true);
  } catch (e) {
    throw new RuleError(`could not be parsed as an RRULE: ${(e as Error).message}`);
  }
  return { parts, text };
}

/**
 * Why a rule is refused, or null when it is accepted. Accepts the RRULE value with or without a
 * leading `RRULE:`, names and values in any case.
 */
export function recurrenceRuleError(rule: string): string | null {
  try {
    parseParts(rule);
    return null;
  } catch (e) {
    if (e instanceof RuleError) return e.message;
    throw e;
  }
}

/** The rule in canonical form: upper case, without a leading `RRULE:`. Throws on a refused rule. */
export function canonicalRecurrenceRule(rule: string): string {
  return parseOrThrow(rule).text;
}

function parseOrThrow(rule: string, pointer = '/recurrence/rule'): { parts: RuleParts; text: string } {
  try {
    return parseParts(rule);
  } catch (e) {
    if (e instanceof RuleError) throw new AppError('validation_failed', `recurrence rule ${e.message}`, { pointer });
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas for the to-do create/patch bodies and reads.

export const RecurrenceBasis = z
  .enum(['schedule', 'completion'])
  .meta({ description: '`schedule`: the next occurrence follows the series from the current date; `completion`: it is counted from the day the to-do is completed.' });
export type RecurrenceBasis = z.infer<typeof RecurrenceBasis>;
export type Basis = RecurrenceBasis;

export const RecurrenceRule = z
  .string()
  .max(RECURRENCE_RULE_MAX)
  .superRefine((rule, ctx) => {
    if (rule.length > RECURRENCE_RULE_MAX) return; // .max() already says so
    const message = recurrenceRuleError(rule);
    if (message !== null) ctx.addIssue({ code: 'custom', message });
  })
  .meta({
    description: 'An RFC 5545 RRULE value such as `FREQ=WEEKLY;BYDAY=MO`, with or without a leading `RRULE:`. DAILY, WEEKLY, MONTHLY or YEARLY; no DTSTART (the series starts at the to-do\'s date).',
    example: 'FREQ=WEEKLY;BYDAY=MO',
  });

/** DECISIONS §5: `recurrence` is `{rule, basis}` or null (use `Recurrence.nullable()`). */
export const Recurrence = z
  .strictObject({ rule: RecurrenceRule, basis: RecurrenceBasis })
  .meta({ description: 'How the to-do repeats. Completing it logs a completed copy and moves it to its next occurrence.' });
export type Recurrence = z.infer<typeof Recurrence>;

/**
 * Validation helper for callers outside a zod body: returns the recurrence (or null) or throws
 * `validation_failed` with one entry per problem, pointers under `pointer`.
 */
export function validateRecurrence(value: unknown, pointer = '/recurrence'): Recurrence | null {
  const result = Recurrence.nullable().safeParse(value);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ pointer: pointer + pointerOf([...issue.path, key]), message: `unknown property "${key}"` }))
      : [{ pointer: pointer + pointerOf(issue.path), message: issue.message }],
  );
  throw new AppError('validation_failed', 'The recurrence is invalid.', { errors });
}

// ---------------------------------------------------------------------------------------------
// Calendar dates. Every date is a UTC midnight; nothing here reads the process time zone.

const DAY_MS = 86_400_000;

function toDay(s: string, name: string): Date {
  if (!isCalendarDate(s)) throw new RangeError(`${name} must be a calendar date as YYYY-MM-DD`);
  return new Date(`${s}T00:00:00Z`);
}

const FIRST_DAY = toDay('0000-01-01', 'first');
const LAST_DAY = toDay('9999-12-31', 'last');
const fmt = (d: Date): string => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number): Date => new Date(d.getTime() + n * DAY_MS);
const daysBetween = (a: Date, b: Date): number => Math.round((b.getTime() - a.getTime()) / DAY_MS);
/** rrule's weekday number (0 = Monday) of a date. */
const weekdayOf = (d: Date): number => (d.getUTCDay() + 6) % 7;
/** A date `years` later; used only with multiples of 400, where month and day always exist. */
function addYears(d: Date, years: number): Date {
  const out = new Date(d.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + years);
  return out;
}
function firstOfMonth(year: number, month0: number): Date {
  const out = new Date(Date.UTC(2000, month0, 1));
  out.setUTCFullYear(year); // Date.UTC maps years 0..99 to 1900..1999
  return out;
}
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// ---------------------------------------------------------------------------------------------
// The series.

/**
 * Library options for the series that starts at `anchor`. The parts RFC 5545 takes from DTSTART
 * when the rule leaves them out (weekday, day of month, month) are written out, so the series
 * no longer depends on where DTSTART sits and the start can be moved forward (see fastForward).
 * Month end: a day of month past 28 that comes from the anchor (the rule names no day) falls on
 * the last day of a shorter month (BYMONTHDAY=28..d;BYSETPOS=-1). A day the rule names itself
 * follows RFC 5545 (months without it are skipped). See docs/recurrence.md.
 */
function seriesOptions(p: RuleParts, anchor: Date): Partial<RRuleOptions> {
  const o = {
    freq: RRule[p.freq],
    interval: p.interval,
    wkst: p.wkst,
    bymonth: [...p.bymonth],
    bymonthday: [...p.bymonthday],
    byyearday: [...p.byyearday],
    byweekno: [...p.byweekno],
    bysetpos: [...p.bysetpos],
    byweekday: p.byday.map((d): number | RRuleWeekday => (d.n === null ? d.day : new Weekday(d.day, d.n))),
  };
  const dayOfMonth = anchor.getUTCDate();
  const noDayParts = o.bymonthday.length === 0 && o.byweekday.length === 0 && o.byyearday.length === 0 && o.byweekno.length === 0;
  const clampable = o.bysetpos.length === 0;
  const clampTo = (d: number) => {
    o.bymonthday = range(28, d);
    o.bysetpos = [-1];
  };

  switch (p.freq) {
    case 'DAILY':
      // One day per step, so an iteration that finds nothing would walk to year 9999 day by day.
      // With INTERVAL=1 (enforced when filters exist) the same days are the YEARLY rule with the
      // same filters, which the library walks a year at a time.
      if (o.bymonth.length + o.bymonthday.length + o.byweekday.length > 0) {
        o.freq = RRule.YEARLY;
        if (o.bymonthday.length === 0 && o.byweekday.length === 0) o.bymonthday = range(1, 31);
      }
      break;
    case 'WEEKLY':
      if (o.byweekday.length === 0) o.byweekday = [weekdayOf(anchor)];
      break;
    case 'MONTHLY':
      if (noDayParts) {
        if (dayOfMonth > 28 && clampable) clampTo(dayOfMonth);
        else o.bymonthday = [dayOfMonth];
      }
      break;
    case 'YEARLY':
      if (noDayParts) {
        if (o.bymonth.length === 0) o.bymonth = [anchor.getUTCMonth() + 1];
        if (dayOfMonth > 28 && clampable && o.bymonth.length === 1) clampTo(dayOfMonth);
        else o.bymonthday = [dayOfMonth];
      }
      break;
  }
  return o;
}

/**
 * The library walks every period from DTSTART, so a series anchored years ago would be walked
 * from its start on each completion. With the implicit parts written out, moving DTSTART forward
 * by whole multiples of INTERVAL periods keeps the same occurrences from there on. The new start
 * is the beginning of a period (the library treats a period that starts mid-way as partial).
 */
function fastForward(o: Partial<RRuleOptions>, anchor: Date, after: Date): Date {
  if (after <= anchor) return anchor;
  const n = o.interval ?? 1;
  switch (o.freq) {
    case RRule.DAILY:
      return addDays(anchor, Math.floor(daysBetween(anchor, after) / n) * n);
    case RRule.WEEKLY: {
      const steps = Math.floor(daysBetween(anchor, after) / (7 * n));
      if (steps === 0) return anchor;
      const day = addDays(anchor, steps * 7 * n);
      return addDays(day, -((weekdayOf(day) - Number(o.wkst ?? 0) + 7) % 7));
    }
    case RRule.MONTHLY: {
      const months = (after.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + after.getUTCMonth() - anchor.getUTCMonth();
      const k = Math.floor(months / n) * n;
      if (k === 0) return anchor;
      const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + k;
      return firstOfMonth(Math.floor(total / 12), total % 12);
    }
    default: {
      const k = Math.floor((after.getUTCFullYear() - anchor.getUTCFullYear()) / n) * n;
      return k === 0 ? anchor : firstOfMonth(anchor.getUTCFullYear() + k, 0);
    }
  }
}

/**
 * The library's only stop for a rule that yields nothing is the year 9999, walked period by
 * period (seconds for a rule that never matches). The Gregorian calendar repeats exactly every
 * 400 years (146097 days, 20871 weeks), so the search is moved by whole 400-year blocks to start
 * in years 9400..9799: the same answer, found or given up within 200..600 years of the start.
 */
const SEARCH_BASE_YEAR = 9799;
const SEARCH_HORIZON_YEARS = 200;

/** First occurrence strictly after `after` of the series starting at `anchor`, or null. */
function occurrenceAfter(p: RuleParts, anchor: Date, after: Date): Date | null {
  const until = p.until === null ? null : toDay(p.until, 'UNTIL');
  if (until !== null && until <= after) return null;
  const options = seriesOptions(p, anchor);
  const dtstart = fastForward(options, anchor, after);
  const from = Math.max(after.getUTCFullYear(), dtstart.getUTCFullYear());
  const shift = Math.max(0, Math.floor((SEARCH_BASE_YEAR - from) / 400)) * 400;
  const series = new RRule(
    { ...options, dtstart: addYears(dtstart, shift), until: until && addYears(until, shift), count: null, tzid: null },
    true, // no cache: one series per call, nothing kept across requests
  );
  const hit = series.after(addYears(after, shift), false);
  return hit === null ? null : addYears(hit, -shift);
}

// ---------------------------------------------------------------------------------------------
// Next occurrence of a to-do.

export type NextOccurrenceInput = {
  /** The stored `recurrence.rule`. A rule this module refuses throws validation_failed at /recurrence/rule. */
  rule: string;
  basis: RecurrenceBasis;
  /** The to-do's current dates (YYYY-MM-DD or null). */
  whenDate: string | null;
  deadline: string | null;
  /** The completing request's day (`today` query, else the server's UTC date), YYYY-MM-DD. */
  today: string;
  /**
   * Completions of this series so far, counting the one being made now (1 on the first
   * completion). With COUNT=n the to-do comes up n times: a next occurrence exists while count < n.
   */
  count: number;
  /**
   * Where the series started (schedule basis): the `anchor` returned by the previous call, or
   * null/absent for the first one, when the to-do's own date is the start.
   */
  anchor?: string | null;
};

export type NextOccurrence = {
  whenDate: string | null;
  deadline: string | null;
  /** Store it with the to-do and pass it back as `anchor` next time. */
  anchor: string;
};

/**
 * The dates of the next open occurrence after the current one is completed, or null when the
 * series is over (COUNT or UNTIL reached, or no occurrence within 200 years): the to-do then
 * completes for good. Which date moves, and from where, is described in docs/recurrence.md.
 * Dates must already be valid YYYY-MM-DD (a RangeError otherwise: a caller bug, not user input).
 */
export function nextOccurrence(input: NextOccurrenceInput): NextOccurrence | null {
  const { parts } = parseOrThrow(input.rule);
  if (!Number.isSafeInteger(input.count) || input.count < 1) throw new RangeError('count must be an integer of at least 1');
  const today = toDay(input.today, 'today');
  const whenDate = input.whenDate === null ? null : toDay(input.whenDate, 'whenDate');
  const deadline = input.deadline === null ? null : toDay(input.deadline, 'deadline');
  const storedAnchor = input.anchor == null ? null : toDay(input.anchor, 'anchor');

  // COUNT is the number of times the to-do comes up; this completion is number `count`.
  if (parts.count !== null && input.count >= parts.count) return null;

  // The series runs on whenDate, else on the deadline, else (no date at all) from today.
  const current = whenDate ?? deadline;
  const after = input.basis === 'completion' ? today : (current ?? today);
  const anchor = input.basis === 'completion' ? today : (storedAnchor ?? after);

  const next = occurrenceAfter(parts, anchor, after);
  if (next === null || next > LAST_DAY) return null;

  if (whenDate !== null) {
    let movedDeadline: string | null = null;
    if (deadline !== null) {
      const d = addDays(deadline, daysBetween(whenDate, next)); // keeps the gap between the two
      if (d < FIRST_DAY || d > LAST_DAY) return null;
      movedDeadline = fmt(d);
    }
    return { whenDate: fmt(next), deadline: movedDeadline, anchor: fmt(anchor) };
  }
  if (deadline !== null) return { whenDate: null, deadline: fmt(next), anchor: fmt(anchor) };
  return { whenDate: fmt(next), deadline: null, anchor: fmt(anchor) };
}
