// The attribute chunks' stored form (issue 29: the views at 50,000 to-dos). Format 3 kept an
// attribute chunk as one JSON text; a whole-account read (`accountIndex`, every view) parsed ~3.3 MB
// of it per request into ~20 MB of short-lived heap (the ids, 50,000 stamps, completion times and
// container slots as JS values), and the views were bound by parsing and the garbage collector.
// Since format 4 the plaintext of an attribute chunk is binary and columnar, so a reader walks the
// decrypted buffer in place through typed arrays (`AttrBytes`): nothing per entry reaches the heap
// but what a view picks. Writes still work on the object form (AttrChunk), decoded and encoded here.
//
// Layout (little-endian; n entries, in id order):
//   0   u8 version (4), 3 bytes zero, u32 n, u32 ids' byte length, u32 tail's byte length
//   16  f64[n] stamps (updatedAt)
//       f64[n] completion times (NaN: none)
//       i32[n] container slot into the tail's P (-1: none)
//       u8[n] statuses (0 open, 1 completed, 2 canceled), u8[n] flags (1 evening, 2 someday),
//       u8[n] priorities (index into PRIORITIES)
//       the ids, UTF-8, joined by '\n'
//       the tail: JSON {w, d, r, x, P} (when-dates, deadlines, recurrences and trash times by
//       position, few; the chunk's distinct containers)
// The sections of 8-byte numbers start at multiples of 8 of the plaintext (Node allocates Buffers
// at 8-byte boundaries); a buffer that is not aligned is copied once.
import { HEAD, IdColumn, newStoredChunk, readStoredChunk } from './id-column.js';
import { FORMAT, type AttrChunk, type Rec } from './types.js';

export const ATTR_BYTES_VERSION = 4;
/** Header and fixed-size columns. */
const fixedPart = (n: number) => HEAD + 23 * n;

type Tail = Pick<AttrChunk, 'w' | 'd' | 'r' | 'x' | 'P'>;

/** An attribute chunk in its stored form. */
export function attrsToBytes(c: AttrChunk): Buffer {
  const n = c.u.length;
  const tail = Buffer.from(JSON.stringify({ w: c.w, d: c.d, r: c.r, x: c.x, P: c.P } satisfies Tail), 'utf8');
  const idBytes = Buffer.byteLength(c.i, 'utf8');
  const at = fixedPart(n);
  const { out, dv } = newStoredChunk(ATTR_BYTES_VERSION, n, at, idBytes, tail.length);
  for (let k = 0; k < n; k++) {
    dv.setFloat64(HEAD + 8 * k, c.u[k]!, true);
    const done = c.c[k];
    dv.setFloat64(HEAD + 8 * n + 8 * k, done === null || done === undefined ? NaN : done, true);
    dv.setInt32(HEAD + 16 * n + 4 * k, c.q[k]!, true);
    out[HEAD + 20 * n + k] = c.s.charCodeAt(k) - 48;
    out[HEAD + 21 * n + k] = c.f.charCodeAt(k) - 48;
    out[HEAD + 22 * n + k] = c.p.charCodeAt(k) - 48;
  }
  out.write(c.i, at, 'utf8');
  tail.copy(out, at + idBytes);
  return out;
}

/**
 * A stored attribute chunk read in place: typed arrays over the plaintext, the ids located without
 * being split, the tail parsed. Throws on anything malformed (the caller rebuilds the chunk).
 */
export class AttrBytes {
  readonly n: number;
  readonly u: Float64Array;
  readonly c: Float64Array;
  readonly q: Int32Array;
  readonly s: Uint8Array;
  readonly f: Uint8Array;
  readonly p: Uint8Array;
  readonly w: Record<string, string>;
  readonly d: Record<string, string>;
  readonly r: Record<string, Rec>;
  readonly x: Record<string, number>;
  readonly P: string[];
  readonly ids: IdColumn;

  constructor(plain: Buffer) {
    const { buf, n, idBytes, at } = readStoredChunk(plain, ATTR_BYTES_VERSION, fixedPart);
    const ab = buf.buffer;
    const o = buf.byteOffset;
    this.n = n;
    this.u = new Float64Array(ab, o + HEAD, n);
    this.c = new Float64Array(ab, o + HEAD + 8 * n, n);
    this.q = new Int32Array(ab, o + HEAD + 16 * n, n);
    this.s = new Uint8Array(ab, o + HEAD + 20 * n, n);
    this.f = new Uint8Array(ab, o + HEAD + 21 * n, n);
    this.p = new Uint8Array(ab, o + HEAD + 22 * n, n);
    const tail = JSON.parse(buf.toString('utf8', at + idBytes, buf.length)) as Tail;
    const obj = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
    if (!obj(tail.w) || !obj(tail.d) || !obj(tail.r) || !obj(tail.x) || !Array.isArray(tail.P)) throw new Error('attribute chunk: bad tail');
    this.w = tail.w;
    this.d = tail.d;
    this.r = tail.r;
    this.x = tail.x;
    this.P = tail.P;
    this.ids = new IdColumn(new Uint8Array(ab, o + at, idBytes), n);
    for (let k = 0; k < n; k++) {
      const j = this.q[k]!;
      if (j < -1 || j >= this.P.length || this.s[k]! > 2 || this.f[k]! > 3 || this.p[k]! > 3) throw new Error('attribute chunk: bad entry');
    }
  }

  completedAt(k: number): number | null {
    const v = this.c[k]!;
    return Number.isNaN(v) ? null : v;
  }
}

/** The object form of a stored attribute chunk (for writes and the per-row readers). */
export function attrsFromBytes(plain: Buffer): AttrChunk {
  const b = new AttrBytes(plain);
  const n = b.n;
  const digits = (xs: Uint8Array) => {
    const t = Buffer.allocUnsafe(n);
    for (let k = 0; k < n; k++) t[k] = 48 + xs[k]!;
    return t.toString('latin1');
  };
  const c = new Array<number | null>(n);
  for (let k = 0; k < n; k++) c[k] = b.completedAt(k);
  return {
    v: FORMAT,
    i: b.ids.joined(),
    u: Array.from(b.u),
    s: digits(b.s),
    f: digits(b.f),
    p: digits(b.p),
    w: b.w,
    d: b.d,
    c,
    r: b.r,
    x: b.x,
    P: b.P,
    q: Array.from(b.q),
  };
}
