// Recurrence in the app (issue 32 items 3 and 4; docs/app.md "The editor"): a rule in plain words,
// the editor's picker (daily, weekdays, weekly on chosen days, every N weeks, monthly on a day,
// yearly) to and from an RRULE, and the week start's order of the days. The server checks every
// rule (routers/todos/recurrence.ts); nothing here decides what is valid. No DOM: tested in Node
// (test/app/recurrence.app.test.ts).

/** The settings API's week start (routers/settings/model.ts WEEK_DAYS). */
export type WeekStart = 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday';
export type Basis = 'schedule' | 'completion';
export type Recurrence = { rule: string; basis: Basis };

/** RFC 5545 weekday codes, Monday first; the index is also rrule's weekday number. */
export const DAY_CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export type DayCode = (typeof DAY_CODES)[number];
export const DAY_NAMES: Record<DayCode, string> = { MO: 'Monday', TU: 'Tuesday', WE: 'Wednesday', TH: 'Thursday', FR: 'Friday', SA: 'Saturday', SU: 'Sunday' };
const WEEK_START_CODE: Record<WeekStart, DayCode> = { monday: 'MO', tuesday: 'TU', wednesday: 'WE', thursday: 'TH', friday: 'FR', saturday: 'SA', sunday: 'SU' };
const WEEKDAYS: DayCode[] = ['MO', 'TU', 'WE', 'TH', 'FR'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The seven days in the order of a week that starts on `weekStart`. */
export function weekOrder(weekStart: WeekStart = 'monday'): DayCode[] {
  const i = DAY_CODES.indexOf(WEEK_START_CODE[weekStart]);
  return [...DAY_CODES.slice(i), ...DAY_CODES.slice(0, i)];
}

/** The RFC code of a JS date's weekday (local time). */
export function dayCodeOf(d: Date): DayCode {
  return DAY_CODES[(d.getDay() + 6) % 7]!;
}

type Parts = Map<string, string>;
function parts(rule: string): Parts | null {
  const text = rule.trim().toUpperCase().replace(/^RRULE:/, '');
  const out: Parts = new Map();
  for (const piece of text.split(';')) {
    const eq = piece.indexOf('=');
    if (eq <= 0 || out.has(piece.slice(0, eq))) return null;
    out.set(piece.slice(0, eq), piece.slice(eq + 1));
  }
  return out.has('FREQ') ? out : null;
}

const ordinal = (n: number) => (n === -1 ? 'last' : n === 1 ? 'first' : n === 2 ? 'second' : n === 3 ? 'third' : n === 4 ? 'fourth' : n === 5 ? 'fifth' : n < 0 ? `${-n}th from last` : `${n}th`);
const plural = (n: number, one: string) => (n === 1 ? one : `${n} ${one}s`);

/**
 * A rule in words ("Every Monday", "Every 2 weeks on Tue, Thu", "Monthly on day 15", "Yearly",
 * "Every weekday"), with ", 5 times" / ", until …" and " after completion" for that basis. A rule
 * the words do not cover is shown as its RRULE text ("Custom: …").
 */
export function describeRecurrence(rec: Recurrence | null | undefined, weekStart: WeekStart = 'monday'): string {
  if (!rec) return 'Does not repeat';
  const base = describeRule(rec.rule, weekStart);
  return rec.basis === 'completion' ? `${base}, after completion` : base;
}

export function describeRule(rule: string, weekStart: WeekStart = 'monday'): string {
  const custom = `Custom: ${rule}`;
  const p = parts(rule);
  if (!p) return custom;
  const known = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'COUNT', 'UNTIL', 'WKST']);
  if ([...p.keys()].some((k) => !known.has(k))) return custom;
  const freq = p.get('FREQ')!;
  const interval = Number(p.get('INTERVAL') ?? '1');
  if (!Number.isInteger(interval) || interval < 1) return custom;
  const byday = p.get('BYDAY')?.split(',') ?? [];
  const monthdays = p.get('BYMONTHDAY')?.split(',').map(Number) ?? [];
  const months = p.get('BYMONTH')?.split(',').map(Number) ?? [];
  if (monthdays.some((n) => !Number.isInteger(n) || n === 0 || Math.abs(n) > 31) || months.some((n) => !Number.isInteger(n) || n < 1 || n > 12)) return custom;
  const plainDays = byday.every((d) => (DAY_CODES as readonly string[]).includes(d));
  const order = weekOrder(weekStart);
  const sortDays = (ds: string[]) => order.filter((c) => ds.includes(c));
  const isWeekdays = byday.length === 5 && WEEKDAYS.every((d) => byday.includes(d));
  let words: string | undefined;
  if (freq === 'DAILY') {
    if (byday.length === 0 && monthdays.length === 0 && months.length === 0) words = interval === 1 ? 'Every day' : `Every ${interval} days`;
    else if (interval === 1 && isWeekdays && monthdays.length === 0 && months.length === 0) words = 'Every weekday';
  } else if (freq === 'WEEKLY' && plainDays && monthdays.length === 0 && months.length === 0) {
    if (byday.length === 0) words = interval === 1 ? 'Every week' : `Every ${interval} weeks`;
    else if (interval === 1 && isWeekdays) words = 'Every weekday';
    else if (interval === 1 && byday.length === 1) words = `Every ${DAY_NAMES[byday[0] as DayCode]}`;
    else {
      const short = sortDays(byday).map((d) => DAY_NAMES[d].slice(0, 3)).join(', ');
      words = interval === 1 ? `Every week on ${short}` : `Every ${interval} weeks on ${short}`;
    }
  } else if (freq === 'MONTHLY' && months.length === 0) {
    const every = interval === 1 ? 'Monthly' : `Every ${interval} months`;
    if (byday.length === 0 && monthdays.length === 0) words = every;
    else if (byday.length === 0 && monthdays.length === 1) words = monthdays[0] === -1 ? `${every} on the last day` : monthdays[0]! < 0 ? `${every} on the ${ordinal(monthdays[0]!)} day` : `${every} on day ${monthdays[0]}`;
    else if (monthdays.length === 0 && byday.length === 1) {
      const m = /^([+-]?\d{1,2})([A-Z]{2})$/.exec(byday[0]!);
      if (m && (DAY_CODES as readonly string[]).includes(m[2]!)) words = `${every} on the ${ordinal(Number(m[1]))} ${DAY_NAMES[m[2] as DayCode]}`;
    }
  } else if (freq === 'YEARLY' && byday.length === 0) {
    const every = interval === 1 ? 'Yearly' : `Every ${interval} years`;
    if (months.length === 0 && monthdays.length === 0) words = every;
    else if (months.length === 1 && monthdays.length === 1 && monthdays[0]! > 0) words = `${every} on ${MONTHS[months[0]! - 1]} ${monthdays[0]}`;
    else if (months.length === 1 && monthdays.length === 0) words = `${every} in ${MONTHS[months[0]! - 1]}`;
  }
  if (words === undefined) return custom;
  const count = p.get('COUNT');
  const until = p.get('UNTIL');
  if (count !== undefined) {
    if (!/^\d+$/.test(count)) return custom;
    words += `, ${plural(Number(count), 'time')}`;
  }
  if (until !== undefined) {
    const m = /^(\d{4})(\d{2})(\d{2})/.exec(until);
    if (!m) return custom;
    words += `, until ${new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' })}`;
  }
  return words;
}

/** What the editor's picker holds. `custom` is the raw RRULE field. */
export type Pick =
  | { kind: 'daily'; interval: number }
  | { kind: 'weekdays' }
  | { kind: 'weekly'; interval: number; days: DayCode[] }
  | { kind: 'monthly'; interval: number; day: number }
  | { kind: 'yearly'; interval: number }
  | { kind: 'custom'; rule: string };

const every = (n: number) => (n > 1 ? `;INTERVAL=${n}` : '');

/** The RRULE a pick stands for (weekly without days: the weekday of the to-do's date). */
export function ruleOf(pick: Pick): string {
  switch (pick.kind) {
    case 'daily':
      return `FREQ=DAILY${every(pick.interval)}`;
    case 'weekdays':
      return 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR';
    case 'weekly':
      return `FREQ=WEEKLY${every(pick.interval)}${pick.days.length ? `;BYDAY=${DAY_CODES.filter((d) => pick.days.includes(d)).join(',')}` : ''}`;
    case 'monthly':
      return `FREQ=MONTHLY${every(pick.interval)};BYMONTHDAY=${pick.day}`;
    case 'yearly':
      return `FREQ=YEARLY${every(pick.interval)}`;
    case 'custom':
      return pick.rule.trim();
  }
}

/** The picker's reading of a stored rule; anything it cannot show is `custom` with the text. */
export function pickOf(rule: string | undefined): Pick {
  if (!rule) return { kind: 'weekly', interval: 1, days: [] };
  const p = parts(rule);
  const custom: Pick = { kind: 'custom', rule };
  if (!p) return custom;
  const keys = [...p.keys()].filter((k) => k !== 'FREQ' && k !== 'INTERVAL');
  const interval = Number(p.get('INTERVAL') ?? '1');
  if (!Number.isInteger(interval) || interval < 1) return custom;
  const freq = p.get('FREQ');
  const byday = p.get('BYDAY')?.split(',') ?? [];
  if (freq === 'DAILY' && keys.length === 0) return { kind: 'daily', interval };
  if (freq === 'WEEKLY' && keys.length === 0) return { kind: 'weekly', interval, days: [] };
  if (freq === 'WEEKLY' && keys.length === 1 && byday.length && byday.every((d) => (DAY_CODES as readonly string[]).includes(d))) {
    if (interval === 1 && byday.length === 5 && WEEKDAYS.every((d) => byday.includes(d))) return { kind: 'weekdays' };
    return { kind: 'weekly', interval, days: byday as DayCode[] };
  }
  if (freq === 'MONTHLY' && keys.length === 1 && /^([1-9]|[12]\d|3[01]|-1)$/.test(p.get('BYMONTHDAY') ?? '')) return { kind: 'monthly', interval, day: Number(p.get('BYMONTHDAY')) };
  if (freq === 'YEARLY' && keys.length === 0) return { kind: 'yearly', interval };
  return custom;
}

/** The first date on or after `from` (local) whose weekday is one of `days`. */
export function nextOnOrAfter(from: Date, days: DayCode[]): Date {
  const d = new Date(from.getFullYear(), from.getMonth(), from.getDate(), 12);
  for (let i = 0; i < 7; i++, d.setDate(d.getDate() + 1)) if (days.includes(dayCodeOf(d))) return d;
  return d;
}
