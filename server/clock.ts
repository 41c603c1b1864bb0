/** Milliseconds since the epoch. Injected everywhere time matters, so tests never sleep. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function iso(ms: number): string {
  return new Date(ms).toISOString();
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
