// The attribute chunks' binary form (routers/todo-index/attr-bytes.ts): what the views read in place
// must equal what the writes encoded, for every column, with ids of any width, and anything
// malformed must be refused (the caller then rebuilds the chunk from the rows).
import { describe, expect, it } from 'vitest';
import { AttrBytes, attrsFromBytes, attrsToBytes, ATTR_BYTES_VERSION } from '../../routers/todo-index/attr-bytes.js';
import { ATTRS } from '../../routers/todo-index/layers.js';
import { FORMAT, type AttrChunk } from '../../routers/todo-index/types.js';

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
      expect(Array.from({ length: b.n }, (_, k) => b.idAt(k))).toEqual(ids);
      for (let k = 0; k < b.n; k++) {
        expect(b.completedAt(k)).toBe(c.c[k]);
        expect(b.u[k]).toBe(c.u[k]);
        for (let e = 0; e < b.n; e++) expect(Math.sign(b.compareId(k, b, e))).toBe(Math.sign(ids[k]! < ids[e]! ? -1 : ids[k]! > ids[e]! ? 1 : 0));
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
