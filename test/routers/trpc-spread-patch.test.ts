// patches/@trpc+server+*.patch replaces the transpiled object-spread helper tRPC runs several
// times per middleware level with a faster one (docs/performance.md). It must keep a spread's
// meaning: later sources win, symbols are copied, and an own "__proto__" key from client input
// stays a plain property (never sets a prototype). Also checks the patch is applied at all.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { initTRPC } from '@trpc/server';

const dist = path.dirname(createRequire(import.meta.url).resolve('@trpc/server'));

describe('the patched tRPC spread helper', () => {
  it('is applied to both builds of @trpc/server', () => {
    const files = readdirSync(dist).filter((f) => /^getErrorShape-.*\.(mjs|cjs)$/.test(f));
    expect(files.length).toBe(2);
    for (const f of files) expect(readFileSync(path.join(dist, f), 'utf8')).toContain('cairn (patches/@trpc+server');
  });

  it('never lets an own "__proto__" key set a prototype when contexts merge', async () => {
    const t = initTRPC.context<Record<string, unknown>>().create();
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const router = t.router({
      probe: t.procedure
        .use(({ next }) => next({ ctx: hostile }))
        .query(({ ctx }) => ({ protoIsPlain: Object.getPrototypeOf(ctx) === Object.prototype, polluted: (ctx as { polluted?: unknown }).polluted, x: ctx.x })),
    });
    const out = await t.createCallerFactory(router)({ a: 1 }).probe();
    expect(out).toEqual({ protoIsPlain: true, polluted: undefined, x: 1 });
  });

  it('keeps spread semantics through middleware contexts and inputs', async () => {
    const sym = Symbol('s');
    const t = initTRPC.context<{ a: number; b: string; [sym]?: number }>().create();
    const withMore = t.middleware(({ ctx, next }) => next({ ctx: { b: 'over', c: true, [sym]: 7 } }));
    const router = t.router({
      probe: t.procedure
        .use(withMore)
        .input((v) => v as Record<string, unknown>)
        .query(({ ctx, input }) => ({ ctx, input, inputProto: Object.getPrototypeOf(input) === Object.prototype })),
    });
    const caller = t.createCallerFactory(router)({ a: 1, b: 'base' });
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const out = await caller.probe(hostile);
    expect(out.ctx).toMatchObject({ a: 1, b: 'over', c: true });
    expect(out.ctx[sym]).toBe(7);
    expect(out.inputProto).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
