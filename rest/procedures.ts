// The app's procedures as functions the node:http paths call directly (rest/v1.ts, rest/trpc.ts):
// tRPC's procedure caller takes these options (what its createCaller passes), runs the
// procedure's middleware, input and output validation, and resolves with the data or rejects with
// a TRPCError.
import { appRouter } from '../routers/index.js';
import type { Meta } from '../routers/trpc.js';

export type ProcedureFn = ((opts: {
  path: string;
  ctx: unknown;
  type: 'query' | 'mutation';
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  batchIndex: number;
}) => Promise<unknown>) & { _def: { type: 'query' | 'mutation' | 'subscription'; meta?: Meta; inputs: unknown[] } };

/** Every procedure by its path (`todos.get`). */
export const PROCEDURES = appRouter._def.procedures as unknown as Record<string, ProcedureFn>;
