// The fold (routers/todo-index/index.ts): a bucket's delta chunk merged into its base chunk.
import { encodeEntries, entriesOf } from './storage.js';
import { idsOf, type AnyChunk, type Layer } from './types.js';

/**
 * The fold: base and delta (each in id order) merged in one walk, a delta entry replacing the
 * base's entry for the same id, the columns copied as they are (no object per entry: at 40,000
 * to-dos this took the attribute fold from ~49 to ~5 µs per write, docs/performance.md). Null when
 * the ids are not strictly in order (then the caller merges by id).
 */
export function merged<C extends AnyChunk, T>(layer: Layer<C, T>, base: C, d: C): C | null {
  const bi = idsOf(base);
  const di = idsOf(d);
  const max = bi.length + di.length;
  const ids: string[] = [];
  const u: number[] = [];
  const from = new Uint8Array(max);
  const at = new Int32Array(max);
  let i = 0;
  let e = 0;
  let last = '';
  while (i < bi.length || e < di.length) {
    const fromBase = e >= di.length || (i < bi.length && bi[i]! < di[e]!);
    const id = fromBase ? bi[i]! : di[e]!;
    if (ids.length && !(last < id)) return null;
    last = id;
    const n = ids.push(id) - 1;
    if (fromBase) {
      u.push(base.u[i]!);
      at[n] = i++;
    } else {
      if (i < bi.length && bi[i] === id) i++;
      u.push(d.u[e]!);
      from[n] = 1;
      at[n] = e++;
    }
  }
  return layer.gather(ids.join('\n'), u, [base, d], from.subarray(0, ids.length), at.subarray(0, ids.length));
}

/** The fold for chunks whose ids are not in order: every entry decoded, then encoded in id order. */
export function mergedByEntries<C extends AnyChunk, T>(layer: Layer<C, T>, base: C, d: C): C {
  const entries = entriesOf(layer, base);
  const ids = idsOf(d);
  for (let k = 0; k < ids.length; k++) entries.set(ids[k]!, { u: d.u[k]!, x: layer.payload(d, k) });
  return encodeEntries(layer, entries);
}

/**
 * What overrides a bucket's base for a reader: its middle chunk and its delta merged (a delta
 * entry winning), or whichever of them exists.
 */
export function overlay<C extends AnyChunk, T>(layer: Layer<C, T>, mid: C | null, d: C | null): C | null {
  if (mid && d) return merged(layer, mid, d) ?? mergedByEntries(layer, mid, d);
  return mid ?? d;
}
