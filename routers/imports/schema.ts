// Import jobs on the wire (docs/api.md "Imports").
import { z } from 'zod';
import { PathId, Timestamp } from '../common.js';
import { IMPORT_SOURCES, PLAN_KINDS } from './plan.js';

export const ImportSourceParam = z.enum(IMPORT_SOURCES);

const Counts = z.object(Object.fromEntries(PLAN_KINDS.map((k) => [k, z.number().int()])) as Record<(typeof PLAN_KINDS)[number], z.ZodNumber>);

export const ImportReport = z.object({
  source: ImportSourceParam,
  dryRun: z.boolean(),
  created: Counts.meta({ description: 'Made by this run (a dry run: would be made).' }),
  existing: Counts.meta({ description: 'Made by an earlier run of the same import (found by source id): left alone.' }),
  failed: z.array(z.object({ kind: z.enum(PLAN_KINDS), sourceId: z.string(), detail: z.string() })).meta({ description: 'Items Cairn refused, with the reason.' }),
  unmapped: z.array(z.string()).meta({ description: 'What the source holds that Cairn cannot take, one line each.' }),
});

export const ImportJob = z.object({
  id: z.string(),
  source: ImportSourceParam,
  dryRun: z.boolean(),
  status: z.enum(['running', 'succeeded', 'failed']),
  done: z.number().int().meta({ description: 'Items handled so far.' }),
  total: z.number().int().meta({ description: 'Items in the file (0 until the run starts).' }),
  report: ImportReport.nullable().meta({ description: 'Once succeeded.' }),
  error: z.object({ code: z.string(), detail: z.string() }).nullable().meta({ description: 'Once failed: the problem type and its detail.' }),
  createdAt: Timestamp,
  finishedAt: Timestamp.nullable(),
});

export const GetImportInput = z.object({ id: PathId }).strict();
