// Issue 12: core/clock.ts iso() formats without building a Date; it must equal toISOString for
// every time it serves, and hand everything else to toISOString.
import { describe, expect, it } from 'vitest';
import { iso, isoOrNull } from '../core/clock.js';

describe('iso()', () => {
  it('equals toISOString on edges: epoch, leap days, month and year ends, the last four-digit year', () => {
    const edges = [
      0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000,
      Date.UTC(2000, 1, 29), Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(1900 + 200, 2, 1), Date.UTC(2100, 1, 28, 12),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999), Date.UTC(2025, 0, 1), Date.UTC(2026, 10, 22, 19, 0, 0, 7), Date.UTC(2026, 10, 22, 19, 0, 0, 70),
      253_402_300_799_999,
    ];
    for (const ms of edges) expect(iso(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
  it('equals toISOString on 200,000 random times from 1970 to 9999', () => {
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor(rnd() * 253_402_300_799_999);
      const want = new Date(ms).toISOString();
      if (iso(ms) !== want) expect(iso(ms), String(ms)).toBe(want);
    }
  });
  it('leaves other times to toISOString (before 1970, six-digit years, fractions) and throws as it does', () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5]) expect(iso(ms)).toBe(new Date(ms).toISOString());
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(isoOrNull(null)).toBeNull();
  });
});
