// The seed of a randomised test (the fuzzers, the crash harness): random on every run, so each run
// explores new inputs; CAIRN_TEST_SEED=<n> (or the file's older variable) fixes it to repeat one.
// A failure of any kind (an assertion, a thrown error, a timeout) names it at the head of its
// message, the part a CI that keeps only the end of its output still shows (.ci/run's summary).
import { afterEach } from 'vitest';

/** The run's seed: CAIRN_TEST_SEED, else `legacy` (e.g. FUZZ_SEED's value), else `random`. */
export function testSeed(legacy: string | undefined, random: number): number {
  const text = process.env.CAIRN_TEST_SEED || legacy;
  if (!text) return random;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`a seed is an integer, not ${JSON.stringify(text)}`);
  return n;
}

/** Every failing test of the calling file names `seed` in its message. */
export function nameSeedOnFailure(seed: number): void {
  afterEach(({ task }) => {
    if (task.result?.state !== 'fail') return;
    const note = `seed ${seed} (CAIRN_TEST_SEED=${seed} repeats it)`;
    for (const e of task.result.errors ?? []) {
      e.message = `${note}: ${e.message}`;
      if (e.stack) e.stack = `${note}\n${e.stack}`;
    }
  });
}
