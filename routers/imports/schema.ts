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

export const ImportCounts = z.object({
  created: Counts,
  existing: Counts,
  failed: z.number().int().meta({ description: 'How many items were refused.' }),
  unmapped: z.number().int().meta({ description: 'How many lines `unmapped` holds.' }),
});

export const ImportJob = z.object({
  id: z.string(),
  source: ImportSourceParam,
  dryRun: z.boolean(),
  status: z.enum(['running', 'succeeded', 'failed', 'interrupted']).meta({
    description: '`interrupted`: the server stopped while the job ran (a crash, a restart). What it made stays; run the same import again: it makes only what is missing.',
  }),
  done: z.number().int().meta({ description: 'Items handled so far (after a restart: as last written, at most a second behind).' }),
  total: z.number().int().meta({ description: 'Items in the file (0 until the run starts).' }),
  report: ImportReport.nullable().meta({ description: 'Once succeeded, while the server that ran the job is up: it quotes the file, so it is not stored (null after a restart; `counts` stays).' }),
  counts: ImportCounts.nullable().meta({ description: "Once succeeded: the report's numbers, stored with the job (they survive a restart)." }),
  error: z.object({ code: z.string(), detail: z.string() }).nullable().meta({ description: 'Once failed: the problem type and its detail (after a restart only the type is kept).' }),
  createdAt: Timestamp,
  finishedAt: Timestamp.nullable().meta({ description: 'When it ended; for an interrupted job, when the server found it cut off at its start.' }),
});

export const GetImportInput = z.object({ id: PathId }).strict();
