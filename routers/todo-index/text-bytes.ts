// The search-text chunks' stored form (issue 29: search and peak memory at 50,000 to-dos). As JSON a
// text chunk became two strings per entry when opened, and search made and dropped ~100,000
// strings per request. Since format 4 the plaintext of a text chunk is binary: the folded titles
// and bodies are one UTF-8 region, and search finds each term in it with Buffer#indexOf (native,
// no string per entry), maps each match to its entry by the fields' offsets, and makes an id
// string only for the hits (`TextBytes.ranks`). Writes still work on the object form (TextChunk).
//
// Layout (little-endian; n entries, in id order):
//   0   u8 version (4), 3 bytes zero, u32 n, u32 ids' byte length, u32 text's byte length
//   16  f64[n] stamps (updatedAt)
//       u32[2n + 1] field starts in the text: field 2k is entry k's title, 2k + 1 its body; a
//       field ends one byte before the next one starts (each field is followed by '\n')
//       the ids, UTF-8, joined by '\n'
//       the text: title0 '\n' body0 '\n' title1 '\n' …
// A search term holds no whitespace (routers/todo-index/fold.ts `terms`), so a match never spans
// two fields, and a match of the term's UTF-8 bytes is a match of the term.
import { HEAD, IdColumn, newStoredChunk, readStoredChunk } from './id-column.js';
import { FORMAT, type TextChunk } from './types.js';

export const TEXT_BYTES_VERSION = 4;
/** Header, stamps and field starts. */
const fixedPart = (n: number) => HEAD + 8 * n + 4 * (2 * n + 1);

/** A text chunk in its stored form. */
export function textToBytes(c: TextChunk): Buffer {
  const n = c.u.length;
  const fields: Buffer[] = [];
  for (let k = 0; k < n; k++) fields.push(Buffer.from(`${c.t[k]!}\n`, 'utf8'), Buffer.from(`${c.b[k]!}\n`, 'utf8'));
  const text = Buffer.concat(fields);
  const idBytes = Buffer.byteLength(c.i, 'utf8');
  const at = fixedPart(n);
  const { out, dv } = newStoredChunk(TEXT_BYTES_VERSION, n, at, idBytes, text.length);
  for (let k = 0; k < n; k++) dv.setFloat64(HEAD + 8 * k, c.u[k]!, true);
  let pos = 0;
  for (let j = 0; j < 2 * n; j++) {
    dv.setUint32(HEAD + 8 * n + 4 * j, pos, true);
    pos += fields[j]!.length;
  }
  dv.setUint32(HEAD + 8 * n + 8 * n, pos, true);
  out.write(c.i, at, 'utf8');
  text.copy(out, at + idBytes);
  return out;
}

/** A stored text chunk read in place. Throws on anything malformed (the caller rebuilds the chunk). */
export class TextBytes {
  readonly n: number;
  readonly u: Float64Array;
  readonly ids: IdColumn;
  /** Field starts, relative to the text. */
  private readonly starts: Uint32Array;
  private readonly buf: Buffer;
  private readonly text: number;

  constructor(plain: Buffer) {
    const { buf, n, idBytes, restBytes: textBytes, at } = readStoredChunk(plain, TEXT_BYTES_VERSION, fixedPart);
    const ab = buf.buffer;
    const o = buf.byteOffset;
    this.n = n;
    this.u = new Float64Array(ab, o + HEAD, n);
    this.starts = new Uint32Array(ab, o + HEAD + 8 * n, 2 * n + 1);
    this.ids = new IdColumn(new Uint8Array(ab, o + at, idBytes), n);
    this.buf = buf;
    this.text = at + idBytes;
    // Fields in order, each closed by its '\n', the last one ending the text.
    if (this.starts[0] !== 0 || this.starts[2 * n] !== textBytes) throw new Error('text chunk: bad fields');
    for (let j = 1; j <= 2 * n; j++) {
      const s = this.starts[j]!;
      if (s <= this.starts[j - 1]! || buf[this.text + s - 1] !== 10) throw new Error('text chunk: bad fields');
    }
  }

  private field(j: number): string {
    return this.buf.toString('utf8', this.text + this.starts[j]!, this.text + this.starts[j + 1]! - 1);
  }
  title(k: number): string {
    return this.field(2 * k);
  }
  body(k: number): string {
    return this.field(2 * k + 1);
  }

  /**
   * Each entry's rank for the folded search terms (at most 31, non-empty, without whitespace):
   * 0 when every term is in its title, 1 when every term is in its title or body, -1 otherwise
   * (routers/search/model.ts rankOf, on the bytes).
   */
  ranks(terms: readonly Buffer[]): Int8Array {
    const n = this.n;
    const out = new Int8Array(n);
    if (terms.length > 31) throw new Error('ranks: at most 31 terms');
    // Bits 0..30 (2 ** 31 - 1 is still a positive 32-bit integer; `1 << 31` would be negative).
    const all = 2 ** terms.length - 1;
    if (all === 0) return out;
    const masks = new Uint32Array(2 * n);
    const starts = this.starts;
    const end = this.text + starts[2 * n]!;
    for (let t = 0; t < terms.length; t++) {
      const bit = 1 << t;
      let pos = this.buf.indexOf(terms[t]!, this.text);
      while (pos !== -1 && pos < end) {
        // The field holding the match: the last start at or before it.
        const rel = pos - this.text;
        let lo = 0;
        let hi = 2 * n - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (starts[mid]! <= rel) lo = mid;
          else hi = mid - 1;
        }
        masks[lo] = masks[lo]! | bit;
        // On to the next field: one match per field is enough.
        pos = this.buf.indexOf(terms[t]!, this.text + starts[lo + 1]!);
      }
    }
    for (let k = 0; k < n; k++) {
      const title = masks[2 * k]!;
      out[k] = title === all ? 0 : (title | masks[2 * k + 1]!) === all ? 1 : -1;
    }
    return out;
  }
}

/** The object form of a stored text chunk (for writes and the per-row readers). */
export function textFromBytes(plain: Buffer): TextChunk {
  const b = new TextBytes(plain);
  const t = new Array<string>(b.n);
  const bodies = new Array<string>(b.n);
  for (let k = 0; k < b.n; k++) {
    t[k] = b.title(k);
    bodies[k] = b.body(k);
  }
  return { v: FORMAT, i: b.ids.joined(), u: Array.from(b.u), t, b: bodies };
}
