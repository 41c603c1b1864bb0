/** Milliseconds since the epoch. Injected everywhere time matters, so tests never sleep. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
/** 9999-12-31T23:59:59.999Z: beyond it toISOString writes six-digit years. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

/**
 * `new Date(ms).toISOString()`, computed with integer arithmetic (issue 12: every to-do answer
 * carries two or three of these, a page of 50 about 150, and this is ~3× cheaper than building a
 * Date). The calendar date comes from the day count (the days-to-civil algorithm of H. Hinnant's
 * "chrono-compatible low-level date algorithms"); nothing is cached. Times before 1970, after
 * year 9999 or not integral take toISOString itself. test/iso.test.ts compares both.
 */
export function iso(ms: number): string {
  if (!(ms >= 0 && ms <= LAST_FOUR_DIGIT_YEAR_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  let rem = ms - days * 86_400_000;
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const mi = Math.floor(rem / 60_000);
  rem -= mi * 60_000;
  const s = Math.floor(rem / 1000);
  const milli = rem - s * 1000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const msPart = milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : `${milli}`;
  return `${y}-${pad2(m)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${msPart}Z`;
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}

/** A clock tests can move by hand. */
export function manualClock(start = Date.parse('2026-11-21T12:00:00.000Z')) {
  let now = start;
  const clock: Clock & { advance(ms: number): void; set(ms: number): void } = Object.assign(() => now, {
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  });
  return clock;
}
