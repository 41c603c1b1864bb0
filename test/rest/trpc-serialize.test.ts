// Issue 12: rest/trpc.ts serializeAnswer skips superjson's walk for plain JSON answers. Its output
// must be exactly superjson's for every value: plain ones, and every kind superjson annotates.
import { describe, expect, it } from 'vitest';
import superjson from 'superjson';
import { serializeAnswer } from '../../rest/trpc.js';

const todo = { id: 'A', title: 't', notes: null, tags: ['x', 'y'], checklist: [{ id: 'c', title: 'c', done: false }], n: 1.5, zero: 0 };

describe('serializeAnswer', () => {
  const cases: [string, unknown][] = [
    ['a to-do', todo],
    ['a page', { data: [todo, { ...todo, id: 'B', tags: [] }], next_cursor: null }],
    ['null', null],
    ['a string', 'x'],
    ['a number', 42],
    ['an empty object', {}],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { a: 1 })],
    ['undefined', undefined],
    ['an undefined field', { a: 1, b: undefined }],
    ['a Date', { at: new Date(0) }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['-0', { z: -0 }],
    ['a bigint', { b: 10n }],
    ['a Map', new Map([['a', 1]])],
    ['a Set', { s: new Set([1]) }],
    ['a sparse array', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['a shared object', (() => { const tag = { name: 'x' }; return { a: tag, b: [tag] }; })()],
    ['a class instance', { e: new (class Thing { x = 1; })() }],
    ['a RegExp', { r: /x/g }],
  ];
  for (const [name, value] of cases) {
    it(`${name}: the same as superjson`, () => {
      expect(JSON.stringify(serializeAnswer(value))).toBe(JSON.stringify(superjson.serialize(value)));
      expect(serializeAnswer(value)).toEqual(superjson.serialize(value));
    });
  }
});
