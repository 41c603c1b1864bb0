// The app's procedures as functions the node:http paths call directly (rest/v1.ts, rest/trpc.ts).
//
// `callProcedure` runs a procedure's middleware chain as tRPC's procedure caller does (the caller
// createCaller uses: `callRecursive` in @trpc/server's initTRPC): each level gets the options plus
// `meta`, `input` and `next`; `next(opts)` continues with the context merged with `opts.ctx`, the
// input replaced by `opts.input` when given, `getRawInput` likewise; a throw becomes
// `{ ok: false, error: TRPCError }`; a failed result rejects with its error, a good one resolves
// with its data. The chain is the procedure's own (`_def.middlewares`: authentication, scopes,
// rate limits, idempotency, input parsing, output parsing, the resolver), so nothing is skipped.
// Why not tRPC's function: it copies the options with a transpiled object-spread helper twice per
// level, and the context once more on each `next({ ctx })`; four levels per call measured ~3-4 %
// of a read's CPU (docs/performance.md, issue 12). This loop uses native spreads. Its equivalence
// is tested against tRPC's own caller (test/rest/procedure-runner.test.ts).
import { TRPCError } from '@trpc/server';
import { getTRPCErrorFromUnknown } from '@trpc/server/unstable-core-do-not-import';
import { appRouter } from '../routers/index.js';
import type { Meta } from '../routers/trpc.js';

export type CallOptions = {
  path: string;
  ctx: unknown;
  type: 'query' | 'mutation';
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  batchIndex: number;
};

type Result = { ok: true; data: unknown; ctx?: unknown } | { ok: false; error: TRPCError };
type Level = { ctx: unknown; input: unknown; getRawInput: () => Promise<unknown> } & Omit<CallOptions, 'ctx' | 'getRawInput'>;
type NextOpts = { ctx?: Record<string, unknown>; input?: unknown; getRawInput?: () => Promise<unknown> } | undefined;
type Middleware = (opts: Level & { meta: Meta | undefined; next: (o?: NextOpts) => Promise<Result> }) => Promise<Result>;

export type ProcedureFn = ((opts: CallOptions) => Promise<unknown>) & {
  _def: { type: 'query' | 'mutation' | 'subscription'; meta?: Meta; inputs: unknown[]; middlewares: Middleware[] };
};

/** Every procedure by its path (`todos.get`). */
export const PROCEDURES = appRouter._def.procedures as unknown as Record<string, ProcedureFn>;

async function level(mws: Middleware[], meta: Meta | undefined, index: number, opts: Level): Promise<Result> {
  try {
    const mw = mws[index]!;
    return await mw({
      ...opts,
      meta,
      next: (n?: NextOpts) =>
        level(mws, meta, index + 1, {
          ...opts,
          ctx: n?.ctx ? { ...(opts.ctx as Record<string, unknown>), ...n.ctx } : opts.ctx,
          input: n && 'input' in n ? n.input : opts.input,
          getRawInput: n?.getRawInput ?? opts.getRawInput,
        }),
    });
  } catch (cause) {
    return { ok: false, error: getTRPCErrorFromUnknown(cause) };
  }
}

/** Runs the procedure's whole chain; resolves with its data or rejects with a TRPCError. */
export async function callProcedure(procedure: ProcedureFn, opts: CallOptions): Promise<unknown> {
  const def = procedure._def;
  const result = await level(def.middlewares, def.meta, 0, { ...opts, input: undefined });
  if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares - did you forget to `return next()`?' });
  if (!result.ok) throw result.error;
  return result.data;
}
