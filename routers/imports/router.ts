// GET /v1/imports/{id}: an import job's status (docs/api.md "Imports"). The job is started by the
// raw-body route POST /v1/imports (rest/imports.ts). First-party sessions only, as the export.
import { authedProcedure, router } from '../trpc.js';
import { getImportJob } from './jobs.js';
import { GetImportInput, ImportJob } from './schema.js';

const tags = ['imports'];

export const importsRouter = router({
  get: authedProcedure
    .meta({ firstPartyOnly: true, openapi: { method: 'GET', path: '/v1/imports/{id}', tags, summary: 'An import job: its progress, then its report (first-party sessions only)' } })
    .input(GetImportInput)
    .output(ImportJob)
    .query(({ ctx, input }) => {
      // The report quotes the file (titles of what could not be mapped): never cached.
      ctx.http.headers['Cache-Control'] = 'no-store';
      return getImportJob(ctx.deps, ctx.principal, input.id);
    }),
});
