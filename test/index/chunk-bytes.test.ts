// The chunks' binary forms (routers/todo-index/attr-bytes.ts, text-bytes.ts): what the views and
// search read in place must equal what the writes encoded, for every column, with ids of any
// width; search's byte matching must rank as the string rule does; anything malformed must be
// refused (the caller then rebuilds the chunk from the rows).
import { describe, expect, it } from 'vitest';
import { AttrBytes, attrsFromBytes, attrsToBytes, ATTR_BYTES_VERSION } from '../../routers/todo-index/attr-bytes.js';
import { ATTRS, TEXT } from '../../routers/todo-index/layers.js';
import { withAccountArena } from '../../routers/todo-index/reads.js';
import { TextBytes, textFromBytes, textToBytes, TEXT_BYTES_VERSION } from '../../routers/todo-index/text-bytes.js';
import { FORMAT, type AttrChunk, type TextChunk } from '../../routers/todo-index/types.js';

const chunk = (ids: string[]): AttrChunk => {
  const xs = ids.map((_, k) => ({
    status: (['open', 'completed', 'canceled'] as const)[k % 3]!,
    completedAt: k % 3 ? 1_764_000_000_000 + k : null,
    whenDate: k % 4 === 0 ? `2026-11-${10 + k}` : null,
    deadline: k % 5 === 1 ? `2026-12-${10 + k}` : null,
    evening: k % 2 === 1,
    someday: k % 3 === 2,
    priority: ([null, 'low', 'medium', 'high'] as const)[k % 4]!,
    recurrence: k === 2 ? { rule: 'FREQ=DAILY', basis: 'schedule' as const, done: 3, anchor: null } : null,
    trashedAt: k === 1 ? 1_764_000_000_123 : null,
    parentId: k % 2 ? 'P1' : k === 4 ? 'P2' : null,
  }));
  return ATTRS.encode(ids.join('\n'), ids.map((_, k) => 1_764_000_000_000 + 7 * k), xs);
};

describe('attribute chunks stored binary (format 4)', () => {
  const uuids = ['0A2B3C4D-0000-4000-8000-000000000001', '1A2B3C4D-0000-4000-8000-000000000002', '2A2B3C4D-0000-4000-8000-000000000003', '3A2B3C4D-0000-4000-8000-000000000004', 'FA2B3C4D-0000-4000-8000-000000000005'];

  it('round-trips every column, for 36-character ids and for ids of other widths', () => {
    for (const ids of [uuids, ['a', 'bb', 'ccc-é', 'd', 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'], [], ['only']]) {
      const c = chunk(ids);
      const bytes = attrsToBytes(c);
      expect(bytes[0]).toBe(ATTR_BYTES_VERSION);
      const back = attrsFromBytes(bytes);
      expect(back).toEqual({ ...c, v: FORMAT });
      expect(ATTRS.valid(back)).toBe(true);
      const b = new AttrBytes(bytes);
      expect(Array.from({ length: b.n }, (_, k) => b.ids.at(k))).toEqual(ids);
      for (let k = 0; k < b.n; k++) {
        expect(b.completedAt(k)).toBe(c.c[k]);
        expect(b.u[k]).toBe(c.u[k]);
        for (let e = 0; e < b.n; e++) expect(Math.sign(b.ids.compare(k, b.ids, e))).toBe(Math.sign(ids[k]! < ids[e]! ? -1 : ids[k]! > ids[e]! ? 1 : 0));
      }
    }
  });

  it('reads a buffer at an offset that is not a multiple of 8', () => {
    const bytes = attrsToBytes(chunk(uuids));
    const odd = Buffer.alloc(bytes.length + 3);
    bytes.copy(odd, 3);
    expect(attrsFromBytes(odd.subarray(3))).toEqual({ ...chunk(uuids), v: FORMAT });
  });

  it('refuses another version, a wrong length, a bad entry and a bad tail', () => {
    const good = attrsToBytes(chunk(uuids));
    const broken = (f: (b: Buffer) => Buffer) => () => new AttrBytes(f(Buffer.from(good)));
    expect(broken((b) => ((b[0] = ATTR_BYTES_VERSION - 1), b))).toThrow();
    expect(broken((b) => b.subarray(0, b.length - 1))).toThrow();
    expect(broken((b) => Buffer.concat([b, Buffer.from(' ')]))).toThrow();
    expect(broken((b) => (b.writeUInt32LE(6, 4), b))).toThrow();
    // A status of 7 (statuses start at 16 + 20n).
    expect(broken((b) => ((b[16 + 20 * uuids.length] = 7), b))).toThrow();
    // A container slot past P.
    expect(broken((b) => (b.writeInt32LE(9, 16 + 16 * uuids.length), b))).toThrow();
    // The tail as something other than the sparse columns.
    const tailAt = 16 + 23 * uuids.length + good.readUInt32LE(8);
    expect(broken((b) => Buffer.concat([b.subarray(0, tailAt), Buffer.from('[]')]).fill(0, 12, 16).fill(2, 12, 13))).toThrow();
    expect(() => new AttrBytes(Buffer.from(JSON.stringify(chunk(uuids))))).toThrow();
    expect(() => new AttrBytes(good)).not.toThrow();
  });
});

describe('search-text chunks stored binary (format 4)', () => {
  const text = (ids: string[], titles: string[], bodies: string[]): TextChunk => TEXT.encode(ids.join('\n'), ids.map((_, k) => 1_764_000_000_000 + k), ids.map((_, k) => ({ title: titles[k]!, body: bodies[k]! })));
  /** The string rule the bytes must agree with (routers/search/model.ts rankOf). */
  const rankOf = (terms: string[], title: string, body: string) => (terms.every((t) => title.includes(t)) ? 0 : terms.every((t) => title.includes(t) || body.includes(t)) ? 1 : -1);

  it('round-trips titles and bodies, empty ones and multi-byte ones included', () => {
    const c = text(['A', 'B', 'C', 'D'], ['', 'café crème', 'x', '𝔘nicode ü'], ['', 'line one\nline two', '', 'ß and 日本語']);
    const bytes = textToBytes(c);
    expect(bytes[0]).toBe(TEXT_BYTES_VERSION);
    expect(textFromBytes(bytes)).toEqual({ ...c, v: FORMAT });
    expect(textFromBytes(textToBytes(text([], [], [])))).toEqual({ ...text([], [], []), v: FORMAT });
  });

  it('ranks every entry as the string rule does, for random text and terms (matches at field edges, repeated terms, multi-byte letters)', () => {
    // mulberry32: a seeded generator whose low bits are as random as its high ones.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (((t ^ (t >>> 14)) >>> 0) % n);
    };
    const words = ['a', 'ab', 'ba', 'é', 'ée', '日本', '本', 'x', 'xy', 'yx', 'zz'];
    const phrase = () => Array.from({ length: rnd(4) }, () => words[rnd(words.length)]).join(rnd(2) ? ' ' : '\n');
    for (let round = 0; round < 200; round++) {
      const n = rnd(12);
      const ids = Array.from({ length: n }, (_, k) => String(k).padStart(3, '0'));
      const titles = ids.map(phrase);
      const bodies = ids.map(phrase);
      const terms = Array.from({ length: 1 + rnd(3) }, () => words[rnd(words.length)]!);
      const got = new TextBytes(textToBytes(text(ids, titles, bodies))).ranks(terms.map((t) => Buffer.from(t)));
      expect(Array.from(got)).toEqual(ids.map((_, k) => rankOf(terms, titles[k]!, bodies[k]!)));
    }
  });

  it('refuses another version, a wrong length and fields out of order', () => {
    const good = textToBytes(text(['A', 'B'], ['one', 'two'], ['body', '']));
    const broken = (f: (b: Buffer) => Buffer) => () => new TextBytes(f(Buffer.from(good)));
    expect(broken((b) => ((b[0] = TEXT_BYTES_VERSION - 1), b))).toThrow();
    expect(broken((b) => b.subarray(0, b.length - 1))).toThrow();
    expect(broken((b) => (b.writeUInt32LE(3, 16 + 16 + 4), b))).toThrow();
    expect(() => new TextBytes(Buffer.from(JSON.stringify(text(['A'], ['t'], ['b']))))).toThrow();
    expect(() => new TextBytes(good)).not.toThrow();
  });
});

describe('the whole-account reads\' arena (routers/todo-index/reads.ts)', () => {
  it('zeroes every byte a read took when the read ends, also when it throws; a nested read gets its own', () => {
    let kept: Buffer[] = [];
    withAccountArena((arena) => {
      kept = [arena.take(100).fill(7), arena.take(3 << 20).fill(8), arena.take(5).fill(9)];
      withAccountArena((inner) => {
        const b = inner.take(10);
        expect(kept.every((k) => b.buffer !== k.buffer || b.byteOffset >= k.byteOffset + k.length || b.byteOffset + b.length <= k.byteOffset)).toBe(true);
      });
      expect(kept[0]![0]).toBe(7);
    });
    for (const k of kept) expect(k.every((x) => x === 0)).toBe(true);
    expect(() =>
      withAccountArena((arena) => {
        kept = [arena.take(64).fill(5)];
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(kept[0]!.every((x) => x === 0)).toBe(true);
    // Taken buffers start at 8-byte boundaries (the chunks' Float64Arrays need it).
    withAccountArena((arena) => {
      for (const n of [3, 17, 1, 40]) expect(arena.take(n).byteOffset % 8).toBe(0);
    });
  });
});
