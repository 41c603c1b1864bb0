// Quick entry (issue 32 item 4; docs/app.md "Quick entry"): what a person types, read into a
// to-do: Things' words (`today`, `this evening`/`tonight`, `someday`), `#tag` / `#"two words"`,
// `@Project` / `@"Two words"`, `due <date>` for a deadline, and any date chrono-node reads
// (`tomorrow`, `next friday`, `on 3 march`) for when; `every monday`, `every day`, `every
// weekday`, `every 2 weeks`, `every month`, `every year` for a recurrence; `next week` is the
// first day of next week by the account's week start (Settings). The chips show what was recognised.
import * as chrono from 'chrono-node/en';
import { ymd } from './dates.js';
import { DAY_CODES, dayCodeOf, describeRule, nextOnOrAfter, weekOrder, type DayCode, type Recurrence, type WeekStart } from './recurrence.js';

export type Parsed = {
  title: string;
  whenDate?: string;
  evening?: boolean;
  someday?: boolean;
  deadline?: string;
  tags: string[];
  project?: { id: string; name: string };
  /** `every …`: an RRULE on a fixed schedule; without another date, whenDate is its first day. */
  recurrence?: Recurrence;
  /** What was recognised, in words, for the "Recognised" chips. */
  chips: string[];
};

const fmt = (d: string) => new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { weekday: 'short', month: 'short', day: 'numeric' });

// Day names as typed (`mon`, `tues`, `thursday`, `fridays`): the first two letters are the code.
const DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)s?';
const DAYS = `${DAY}(?:\\s*(?:,\\s*and|,|and|&)\\s*${DAY})*`;
const EVERY = new RegExp(`\\severy\\s+(?:(other|\\d{1,3})\\s+)?(?:(days?|weekdays?|weeks?|months?|years?)(?:\\s+on\\s+(?:the\\s+)?(${DAYS}|\\d{1,2}(?:st|nd|rd|th)?))?|(${DAYS}))(?=\\s)`, 'i');
const codesIn = (s: string): DayCode[] => {
  const found = (s.toLowerCase().match(new RegExp(DAY, 'g')) ?? []).map((d) => d.slice(0, 2).toUpperCase() as DayCode);
  return DAY_CODES.filter((c) => found.includes(c));
};

/** `every …` as an RRULE and the first day of the series on or after `now` (local). */
function readEvery(m: RegExpExecArray, now: Date): { rule: string; first: Date } | undefined {
  const n = m[1] === undefined ? 1 : m[1].toLowerCase() === 'other' ? 2 : Number(m[1]);
  if (!(n >= 1 && n <= 1000)) return undefined;
  const iv = n > 1 ? `;INTERVAL=${n}` : '';
  const unit = m[2]?.toLowerCase().replace(/s$/, '');
  const on = m[3];
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate(), 12);
  if (m[4] !== undefined || (unit === 'week' && on && !/^\d/.test(on))) {
    const days = codesIn(m[4] ?? on!);
    return { rule: `FREQ=WEEKLY${iv};BYDAY=${days.join(',')}`, first: nextOnOrAfter(today, days) };
  }
  switch (unit) {
    case 'day':
      return on ? undefined : { rule: `FREQ=DAILY${iv}`, first: today };
    case 'weekday':
      return n > 1 || on ? undefined : { rule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', first: nextOnOrAfter(today, ['MO', 'TU', 'WE', 'TH', 'FR']) };
    case 'week':
      return on ? undefined : { rule: `FREQ=WEEKLY${iv}`, first: today };
    case 'month': {
      if (!on) return { rule: `FREQ=MONTHLY${iv}`, first: today };
      const day = parseInt(on, 10);
      if (!/^\d/.test(on) || day < 1 || day > 31) return undefined;
      // The next month (from this one) that has that day: RFC 5545 skips months without it.
      for (let i = 0; i < 12; i++) {
        const d = new Date(today.getFullYear(), today.getMonth() + i, day, 12);
        if (d.getDate() === day && d >= today) return { rule: `FREQ=MONTHLY${iv};BYMONTHDAY=${day}`, first: d };
      }
      return undefined;
    }
    case 'year':
      return on ? undefined : { rule: `FREQ=YEARLY${iv}`, first: today };
  }
  return undefined;
}

/** The first day of the week after this one, by the account's week start. */
export function startOfNextWeek(now: Date, weekStart: WeekStart = 'monday'): Date {
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate(), 12);
  const start = weekOrder(weekStart)[0]!;
  const ahead = (DAY_CODES.indexOf(start) - DAY_CODES.indexOf(dayCodeOf(today)) + 7) % 7 || 7;
  today.setDate(today.getDate() + ahead);
  return today;
}

/** The first date in `text`: `next week` by the week start, else what chrono-node reads. */
function firstDate(text: string, now: Date, weekStart: WeekStart): { index: number; text: string; date: Date } | undefined {
  const nw = /(?<=\s|^)next week(?=\s|$)/i.exec(text);
  const r = chrono.casual.parse(text, now, { forwardDate: true })[0];
  if (nw && (!r || nw.index <= r.index)) return { index: nw.index, text: nw[0], date: startOfNextWeek(now, weekStart) };
  return r ? { index: r.index, text: r.text, date: r.start.date() } : undefined;
}

export function parseQuick(input: string, now: Date, projects: { id: string; name: string }[], opts: { weekStart?: WeekStart } = {}): Parsed {
  const weekStart = opts.weekStart ?? 'monday';
  let text = ` ${input} `;
  const out: Parsed = { title: '', tags: [], chips: [] };
  const cut = (m: RegExpExecArray) => {
    text = text.slice(0, m.index) + ' ' + text.slice(m.index + m[0].length);
  };
  // Tags: #"two words" first, then #word.
  for (const re of [/\s#"([^"]+)"(?=\s)/, /\s#([^\s#"@]+)(?=\s)/]) {
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const tag = m[1]!.trim();
      if (tag && !out.tags.includes(tag)) out.tags.push(tag);
      cut(m);
    }
  }
  for (const t of out.tags) out.chips.push(`Tag: ${t}`);
  // @Project or @"Two words": the longest project name the text starts with, case-insensitively.
  const at = /\s@("([^"]+)"|(\S+(?:\s+\S+)*?))(?=\s|$)/.exec(text);
  if (at) {
    const after = text.slice(at.index + 2).replace(/^"/, '');
    const lower = after.toLowerCase();
    const hit = [...projects].sort((a, b) => b.name.length - a.name.length).find((p) => lower.startsWith(p.name.toLowerCase()) && /^(\s|"|$)/.test(after.slice(p.name.length)));
    if (hit) {
      out.project = hit;
      const len = 2 + (at[2] ? at[2].length + 2 : hit.name.length);
      text = text.slice(0, at.index) + ' ' + text.slice(at.index + len);
      out.chips.push(`Project: ${hit.name}`);
    }
  }
  // `every …`: a recurrence (before the dates, so `monday` is not read as a date).
  const every = EVERY.exec(text);
  const series = every ? readEvery(every, now) : undefined;
  if (every && series) {
    out.recurrence = { rule: series.rule, basis: 'schedule' };
    cut(every);
    out.chips.push(`Repeat: ${describeRule(series.rule, weekStart)}`);
  }
  // `due <date>`: a deadline.
  const due = /\sdue\s+/i.exec(text);
  if (due) {
    const rest = text.slice(due.index + due[0].length);
    const r = firstDate(rest, now, weekStart);
    if (r && r.index === 0) {
      out.deadline = ymd(r.date);
      text = text.slice(0, due.index) + ' ' + rest.slice(r.text.length);
      out.chips.push(`Deadline: ${fmt(out.deadline)}`);
    }
  }
  // Things' words.
  const evening = /\s(this evening|tonight)(?=\s)/i.exec(text);
  if (evening) {
    out.whenDate = ymd(now);
    out.evening = true;
    cut(evening);
    out.chips.push('When: This Evening');
  }
  const someday = /\ssomeday(?=\s)/i.exec(text);
  if (someday && !out.whenDate) {
    out.someday = true;
    cut(someday);
    out.chips.push('When: Someday');
  }
  if (!out.whenDate && !out.someday) {
    const today = /\stoday(?=\s)/i.exec(text);
    if (today) {
      out.whenDate = ymd(now);
      cut(today);
      out.chips.push('When: Today');
    } else {
      const r = firstDate(text, now, weekStart);
      if (r) {
        out.whenDate = ymd(r.date);
        text = text.slice(0, r.index) + ' ' + text.slice(r.index + r.text.length);
        out.chips.push(`When: ${out.whenDate === ymd(now) ? 'Today' : fmt(out.whenDate)}`);
      }
    }
  }
  // A series with no other date starts on its first day (Things does the same).
  if (series && !out.whenDate && !out.someday) {
    out.whenDate = ymd(series.first);
    out.chips.push(`When: ${out.whenDate === ymd(now) ? 'Today' : fmt(out.whenDate)}`);
  }
  out.title = text.replace(/\s+/g, ' ').trim();
  return out;
}
