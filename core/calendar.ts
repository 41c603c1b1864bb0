// Calendar checks shared by every date and instant field (spec §2 rule 2): the shape alone lets
// impossible values through (2026-02-30, 25:00), which Date.parse silently rolls over.
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?(Z|[+-](\d{2}):(\d{2}))$/;

/** YYYY-MM-DD naming a day that exists. */
export function isCalendarDate(s: string): boolean {
  if (!DATE_RE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** An RFC 3339 instant whose date exists and whose time and offset are in range (no leap second). */
export function isRfc3339Instant(s: string): boolean {
  const m = INSTANT_RE.exec(s);
  if (!m || !isCalendarDate(m[1]!)) return false;
  const [h, min, sec] = [Number(m[2]), Number(m[3]), Number(m[4])];
  if (h > 23 || min > 59 || sec > 59) return false;
  if (m[6] !== 'Z' && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return !Number.isNaN(Date.parse(s));
}
