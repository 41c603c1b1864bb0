// What the stored (binary) chunks share (attr-bytes.ts, text-bytes.ts): their 16-byte header, and
// their ids: UTF-8, joined by '\n', in id order, read in place (an id string is made only for an
// entry a reader keeps).

/** The header: u8 version, 3 bytes zero, u32 n, u32 the ids' byte length, u32 the rest's. */
export const HEAD = 16;

/**
 * A stored chunk of `fixed` bytes (header and fixed-size columns), then `idBytes` of ids and
 * `restBytes` more, zero-filled, with its header written.
 */
export function newStoredChunk(version: number, n: number, fixed: number, idBytes: number, restBytes: number): { out: Buffer; dv: DataView } {
  const out = Buffer.alloc(fixed + idBytes + restBytes);
  out[0] = version;
  out.writeUInt32LE(n, 4);
  out.writeUInt32LE(idBytes, 8);
  out.writeUInt32LE(restBytes, 12);
  return { out, dv: new DataView(out.buffer, out.byteOffset, out.length) };
}

/**
 * A stored chunk's header, checked: the version, and a length of exactly `fixed(n)` + ids + rest.
 * `buf` is the plaintext, copied once when it does not start at an 8-byte boundary (its typed
 * arrays need it; Node allocates Buffers at such boundaries).
 */
export function readStoredChunk(plain: Buffer, version: number, fixed: (n: number) => number): { buf: Buffer; n: number; idBytes: number; restBytes: number; at: number } {
  if (plain.length < HEAD || plain[0] !== version) throw new Error(`not a stored chunk of version ${version}`);
  const buf = plain.byteOffset % 8 === 0 ? plain : Buffer.from(plain);
  const n = buf.readUInt32LE(4);
  const idBytes = buf.readUInt32LE(8);
  const restBytes = buf.readUInt32LE(12);
  const at = fixed(n);
  if (at + idBytes + restBytes !== buf.length) throw new Error('stored chunk: wrong length');
  return { buf, n, idBytes, restBytes, at };
}

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
