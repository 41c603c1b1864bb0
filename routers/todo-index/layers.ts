// The index's two layers of chunks (routers/todo-index/index.ts): the attribute chunks (ATTRS:
// status, dates, flags, priority, completion, recurrence, placement) and the search-text chunks
// (TEXT: case-folded title and body), each with its column-wise encoding, gathering and splicing.
import { attrsFromBytes, attrsToBytes } from './attr-bytes.js';
import { fold } from './fold.js';
import { textFromBytes, textToBytes } from './text-bytes.js';
import type { AnyChunk, AttrChunk, IndexedTodo, Layer, Placed, Priority, Rec, Status, TextChunk, TodoText } from './types.js';

export const STATUSES: Status[] = ['open', 'completed', 'canceled'];
export const PRIORITIES: (Priority | null)[] = [null, 'low', 'medium', 'high'];
const digits = (xs: number[]) => String.fromCharCode(...xs.map((x) => 48 + x));

type AttrEntry = IndexedTodo & Placed;
export const ATTRS: Layer<AttrChunk, AttrEntry> = {
  prefix: '',
  make: (c, row) => ({ trashedAt: row.trashedAt, parentId: row.parentId, status: c.status, completedAt: c.completedAt, whenDate: c.whenDate, deadline: c.deadline, evening: c.evening, someday: c.someday, priority: c.priority, recurrence: c.recurrence ? { ...c.recurrence } : null }),
  encode: (i, u, xs) => {
    const r: Record<string, Rec> = {};
    const w: Record<string, string> = {};
    const d: Record<string, string> = {};
    const x: Record<string, number> = {};
    const P: string[] = [];
    const pIndex = new Map<string, number>();
    const q = xs.map((a) => {
      if (a.parentId === null) return -1;
      let at = pIndex.get(a.parentId);
      if (at === undefined) pIndex.set(a.parentId, (at = P.push(a.parentId) - 1));
      return at;
    });
    xs.forEach((a, k) => {
      if (a.trashedAt !== null) x[k] = a.trashedAt;
      if (a.recurrence) r[k] = [a.recurrence.rule, a.recurrence.basis, a.recurrence.done, a.recurrence.anchor];
      if (a.whenDate !== null) w[k] = a.whenDate;
      if (a.deadline !== null) d[k] = a.deadline;
    });
    return {
      v: 3,
      i,
      u,
      s: digits(xs.map((a) => STATUSES.indexOf(a.status))),
      f: digits(xs.map((a) => (a.evening ? 1 : 0) | (a.someday ? 2 : 0))),
      p: digits(xs.map((a) => PRIORITIES.indexOf(a.priority))),
      w,
      d,
      c: xs.map((a) => a.completedAt),
      r,
      x,
      P,
      q,
    };
  },
  gather: (i, u, src, from, at) => {
    const n = at.length;
    const s = new Array<number>(n);
    const f = new Array<number>(n);
    const p = new Array<number>(n);
    const c = new Array<number | null>(n);
    const q = new Array<number>(n);
    const w: Record<string, string> = {};
    const d: Record<string, string> = {};
    const r: Record<string, Rec> = {};
    const x: Record<string, number> = {};
    const P: string[] = [];
    const pIndex = new Map<string, number>();
    for (let k = 0; k < n; k++) {
      const ch = src[from[k]!]!;
      const j = at[k]!;
      s[k] = ch.s.charCodeAt(j);
      f[k] = ch.f.charCodeAt(j);
      p[k] = ch.p.charCodeAt(j);
      c[k] = ch.c[j]!;
      const wv = ch.w[j];
      if (wv !== undefined) w[k] = wv;
      const dv = ch.d[j];
      if (dv !== undefined) d[k] = dv;
      const rv = ch.r[j];
      if (rv !== undefined) r[k] = rv;
      const xv = ch.x[j];
      if (xv !== undefined) x[k] = xv;
      const qj = ch.q[j]!;
      if (qj < 0) q[k] = -1;
      else {
        const parent = ch.P[qj]!;
        let slot = pIndex.get(parent);
        if (slot === undefined) pIndex.set(parent, (slot = P.push(parent) - 1));
        q[k] = slot;
      }
    }
    return { v: 3, i, u, s: String.fromCharCode(...s), f: String.fromCharCode(...f), p: String.fromCharCode(...p), w, d, c, r, x, P, q };
  },
  payload: (c, k) => ({ ...attrsAt(c, k), trashedAt: c.x[k] ?? null, parentId: c.q[k]! < 0 ? null : c.P[c.q[k]!]! }),
  replace: (x, row) => ({ ...x, trashedAt: row.trashedAt, parentId: row.parentId }),
  splice: (c, k, del, a) => {
    const put = (str: string, digit: number) => str.slice(0, k) + String.fromCharCode(48 + digit) + str.slice(k + del);
    c.s = put(c.s, STATUSES.indexOf(a.status));
    c.f = put(c.f, (a.evening ? 1 : 0) | (a.someday ? 2 : 0));
    c.p = put(c.p, PRIORITIES.indexOf(a.priority));
    c.c.splice(k, del, a.completedAt);
    c.w = shifted(c.w, k, del, a.whenDate ?? undefined);
    c.d = shifted(c.d, k, del, a.deadline ?? undefined);
    c.r = shifted(c.r, k, del, a.recurrence ? [a.recurrence.rule, a.recurrence.basis, a.recurrence.done, a.recurrence.anchor] : undefined);
    c.x = shifted(c.x, k, del, a.trashedAt ?? undefined);
    c.q.splice(k, del, parentSlot(c, a.parentId));
    compactParents(c);
  },
  valid: (c) => {
    const a = c as AttrChunk;
    const n = a.u.length;
    const obj = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
    return typeof a.s === 'string' && a.s.length === n && typeof a.f === 'string' && a.f.length === n && typeof a.p === 'string' && a.p.length === n && obj(a.w) && obj(a.d) && Array.isArray(a.c) && a.c.length === n && obj(a.r) && obj(a.x) && Array.isArray(a.P) && Array.isArray(a.q) && a.q.length === n && a.q.every((j) => Number.isInteger(j) && j >= -1 && j < a.P.length);
  },
  toBytes: attrsToBytes,
  fromBytes: attrsFromBytes,
};

export const TEXT: Layer<TextChunk, TodoText> = {
  prefix: 't',
  make: (c) => ({ title: fold(c.title), body: fold([c.notes ?? '', ...c.checklist.map((i) => i.title)].join('\n')) }),
  encode: (i, u, xs) => ({ v: 3, i, u, t: xs.map((x) => x.title), b: xs.map((x) => x.body) }),
  gather: (i, u, src, from, at) => {
    const n = at.length;
    const t = new Array<string>(n);
    const b = new Array<string>(n);
    for (let k = 0; k < n; k++) {
      const ch = src[from[k]!]!;
      t[k] = ch.t[at[k]!]!;
      b[k] = ch.b[at[k]!]!;
    }
    return { v: 3, i, u, t, b };
  },
  payload: (c, k) => ({ title: c.t[k]!, body: c.b[k]! }),
  replace: (x) => x,
  splice: (c, k, del, x) => {
    c.t.splice(k, del, x.title);
    c.b.splice(k, del, x.body);
  },
  valid: (c) => {
    const t = c as TextChunk;
    return Array.isArray(t.t) && t.t.length === t.u.length && Array.isArray(t.b) && t.b.length === t.u.length;
  },
  toBytes: textToBytes,
  fromBytes: textFromBytes,
};

/** The index of a container in a chunk's `P` (added when new; -1 for none). */
function parentSlot(c: AttrChunk, parentId: string | null): number {
  if (parentId === null) return -1;
  const at = c.P.indexOf(parentId);
  return at >= 0 ? at : c.P.push(parentId) - 1;
}

/** Renumbers `P` in first-use order and drops containers no entry uses (as a rebuild would). */
function compactParents(c: AttrChunk): void {
  const P: string[] = [];
  const map = new Map<number, number>();
  for (let k = 0; k < c.q.length; k++) {
    const j = c.q[k]!;
    if (j < 0) continue;
    let to = map.get(j);
    if (to === undefined) map.set(j, (to = P.push(c.P[j]!) - 1));
    c.q[k] = to;
  }
  c.P = P;
}

/** A by-position map after replacing `del` entries at k by one entry (value `v`, or none). */
function shifted<V>(m: Record<string, V>, k: number, del: number, v: V | undefined): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key in m) {
    const n = Number(key);
    if (n < k) out[n] = m[key]!;
    else if (n >= k + del) out[n - del + 1] = m[key]!;
  }
  if (v !== undefined) out[k] = v;
  return out;
}

export function attrsAt(c: AttrChunk, k: number): IndexedTodo {
  const f = c.f.charCodeAt(k) - 48;
  const r = c.r[k];
  return {
    status: STATUSES[c.s.charCodeAt(k) - 48]!,
    whenDate: c.w[k] ?? null,
    deadline: c.d[k] ?? null,
    evening: (f & 1) !== 0,
    someday: (f & 2) !== 0,
    priority: PRIORITIES[c.p.charCodeAt(k) - 48] ?? null,
    completedAt: c.c[k]!,
    recurrence: r ? { rule: r[0], basis: r[1], done: r[2], anchor: r[3] } : null,
  };
}

type AnyLayer = Layer<AnyChunk, unknown>;
/** Runs `fn` on each layer. */
export function eachLayer(fn: (layer: AnyLayer) => void): void {
  fn(ATTRS as unknown as AnyLayer);
  fn(TEXT as unknown as AnyLayer);
}

/** A chunk's object form from its plaintext, by its id (tests, tools). */
export function chunkFromPlain(id: string, plain: Buffer): AnyChunk {
  return id.startsWith(TEXT.prefix) ? TEXT.fromBytes(plain) : ATTRS.fromBytes(plain);
}
