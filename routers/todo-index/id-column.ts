// The ids of a stored (binary) chunk (attr-bytes.ts, text-bytes.ts): UTF-8, joined by '\n', in id
// order, read in place. An id string is made only for an entry a reader keeps.

const ID_WIDTH = 36;

export class IdColumn {
  /** Where id k starts (null: every id is 36 bytes, id k at 37k: the UUIDs the API admits). */
  private readonly starts: Int32Array | null;

  constructor(
    readonly bytes: Uint8Array,
    readonly n: number,
  ) {
    this.starts = fixedWidth(bytes, n) ? null : idStarts(bytes, n);
  }

  private start(k: number): number {
    return this.starts ? this.starts[k]! : 37 * k;
  }
  private end(k: number): number {
    return this.starts ? (k + 1 < this.n ? this.starts[k + 1]! - 1 : this.bytes.length) : 37 * k + ID_WIDTH;
  }
  /** Id k as a string. */
  at(k: number): string {
    const s = this.start(k);
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + s, this.end(k) - s).toString('utf8');
  }
  /** All ids as the joined string (the object form's `i`). */
  joined(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length).toString('utf8');
  }
  /** Compares id k with id e of `other` in byte order (UTF-8 byte order is code point order). */
  compare(k: number, other: IdColumn, e: number): number {
    const a = this.bytes;
    const b = other.bytes;
    let i = this.start(k);
    const ie = this.end(k);
    let j = other.start(e);
    const je = other.end(e);
    for (; i < ie && j < je; i++, j++) if (a[i] !== b[j]) return a[i]! - b[j]!;
    return ie - i - (je - j);
  }
}

/** Whether n ids occupy the region as 36 bytes each, joined by '\n'. */
function fixedWidth(idb: Uint8Array, n: number): boolean {
  if (idb.length !== (n === 0 ? 0 : 37 * n - 1)) return false;
  for (let k = 1; k < n; k++) if (idb[37 * k - 1] !== 10) return false;
  return true;
}

function idStarts(idb: Uint8Array, n: number): Int32Array {
  const starts = new Int32Array(n);
  let k = 1;
  for (let i = 0; i < idb.length && k < n; i++) if (idb[i] === 10) starts[k++] = i + 1;
  if (k !== n && n > 0) throw new Error('stored chunk: id count');
  return starts;
}
