// Spec §2 rule 5: the app order is a stored sort key. Fractional indexing (the
// fractional-indexing package) gives keys between any two neighbours without renumbering.
import { generateKeyBetween } from 'fractional-indexing';

export function keyBetween(before: string | null, after: string | null): string {
  return generateKeyBetween(before, after);
}

export function keyAfter(last: string | null): string {
  return generateKeyBetween(last, null);
}

export function keyFirst(first: string | null): string {
  return generateKeyBetween(null, first);
}
