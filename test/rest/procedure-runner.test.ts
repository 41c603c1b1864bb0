// Issue 12: rest/procedures.ts callProcedure runs a procedure's middleware chain for the node:http
// paths instead of tRPC's procedure caller. It must behave as tRPC's does: context merged level by
// level, input replaced by `next({ input })`, getRawInput passed on, meta given to every level,
// a throw (anywhere) rejected as a TRPCError with the same code and cause, input and output
// validation applied. Each case runs through both and the outcomes must be identical.
import { describe, expect, it } from 'vitest';
import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { callProcedure, type ProcedureFn } from '../../rest/procedures.js';

type Ctx = { user?: string; trail: string[] };
const t = initTRPC.context<Ctx>().meta<{ tag?: string }>().create();

const withUser = t.procedure.use(async ({ ctx, meta, next, type, path }) => {
  ctx.trail.push(`auth:${meta?.tag ?? '-'}:${type}:${path}`);
  if (ctx.user === 'nobody') throw new TRPCError({ code: 'UNAUTHORIZED', message: 'no user' });
  const result = await next({ ctx: { user: ctx.user ?? 'anon', extra: 1 } });
  ctx.trail.push(`after:${result.ok}`);
  return result;
});

const router = t.router({
  echo: withUser
    .meta({ tag: 'echo' })
    .input(z.object({ n: z.number().int() }).strict())
    .output(z.object({ n: z.number(), user: z.string(), extra: z.number() }))
    .query(({ ctx, input }) => ({ n: input.n * 2, user: ctx.user, extra: (ctx as unknown as { extra: number }).extra })),
  raw: withUser
    .use(async ({ getRawInput, next }) => next({ input: { swapped: await getRawInput() } }))
    .query(({ input }) => input),
  badOutput: withUser.output(z.object({ ok: z.literal(true) })).query(() => ({ ok: false }) as never),
  strips: withUser.output(z.object({ a: z.number() })).query(() => ({ a: 1, secret: 'never' }) as never),
  throws: withUser.mutation(() => {
    throw new Error('model failed');
  }),
  conflict: withUser.mutation(() => {
    throw new TRPCError({ code: 'CONFLICT', message: 'taken' });
  }),
});

const caller = t.createCallerFactory(router);
const procs = router._def.procedures as unknown as Record<string, ProcedureFn>;

async function both(path: string, input: unknown, user?: string) {
  const run = async (via: 'trpc' | 'ours') => {
    const ctx: Ctx = { user, trail: [] };
    try {
      const data =
        via === 'trpc'
          ? await (caller(ctx) as unknown as Record<string, (i: unknown) => Promise<unknown>>)[path]!(input)
          : await callProcedure(procs[path]!, { path, ctx, type: procs[path]!._def.type as 'query' | 'mutation', getRawInput: async () => input, signal: undefined, batchIndex: 0 });
      return { ok: true, data, trail: ctx.trail };
    } catch (e) {
      const err = e as TRPCError;
      return { ok: false, name: err.constructor.name, code: err.code, message: err.message, cause: (err.cause as Error | undefined)?.message, trail: ctx.trail };
    }
  };
  const [a, b] = [await run('trpc'), await run('ours')];
  expect(b).toEqual(a);
  return b;
}

describe('callProcedure (the node:http paths’ runner) behaves as tRPC’s caller', () => {
  it('context merge, meta, input and output parsing', async () => {
    const r = await both('echo', { n: 21 }, 'ann');
    expect(r).toMatchObject({ ok: true, data: { n: 42, user: 'ann', extra: 1 }, trail: ['auth:echo:query:echo', 'after:true'] });
  });
  it('bad input is BAD_REQUEST before the resolver; the outer level still sees the result', async () => {
    const r = await both('echo', { n: 1.5 });
    expect(r).toMatchObject({ ok: false, code: 'BAD_REQUEST', trail: ['auth:echo:query:echo', 'after:false'] });
    await both('echo', { n: 1, extra: true });
  });
  it('next({ input }) replaces the input; getRawInput passes on', async () => {
    const r = await both('raw', { any: 'thing' });
    expect(r).toMatchObject({ ok: true, data: { swapped: { any: 'thing' } } });
  });
  it('output validation: a field the schema does not allow is stripped; a wrong one is a 500', async () => {
    expect(await both('strips', undefined)).toMatchObject({ ok: true, data: { a: 1 } });
    expect(await both('badOutput', undefined)).toMatchObject({ ok: false, code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed' });
  });
  it('throws in a middleware or the resolver become the same TRPCError', async () => {
    expect(await both('echo', { n: 1 }, 'nobody')).toMatchObject({ ok: false, code: 'UNAUTHORIZED', trail: ['auth:echo:query:echo'] });
    expect(await both('throws', undefined)).toMatchObject({ ok: false, code: 'INTERNAL_SERVER_ERROR', cause: 'model failed' });
    expect(await both('conflict', undefined)).toMatchObject({ ok: false, code: 'CONFLICT', message: 'taken' });
  });
});
