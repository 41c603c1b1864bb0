// Local dates (no DOM, so the quick-entry parser is testable in Node: test/app/quick.app.test.ts).

/** A date in the browser's time zone as YYYY-MM-DD. */
export function ymd(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The browser's local date: every view is asked with it as `today` (spec §4.12). */
export function localToday(): string {
  return ymd(new Date());
}
