// POST /v1/imports?source=cairn|todoist|things|ics[&dryRun=true][&name=…] (issue 33 item 3;
// docs/api.md "Imports", docs/import.md): the file is the raw body, up to CAIRN_MAX_IMPORT_BYTES
// (413 payload_too_large as soon as the count passes it, or up front from Content-Length). The
// file is read into a plan inside the request (a file that is not what `source` says is a 422
// here), then the import runs as a job (routers/imports/jobs.ts): 202 with the job, whose status
// GET /v1/imports/{id} reads. First-party sessions only, as GET /v1/export. A plain route
// (server/app.ts) because the body is not JSON.
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { Deps } from '../routers/deps.js';
import { invalidDetail, zodFieldErrors } from '../routers/middleware/problems.js';
import { AppError } from '../core/errors.js';
import { boolParam } from '../db/paging.js';
import { ImportSourceParam } from '../routers/imports/schema.js';
import { assertNoRunningJob, startImportJob } from '../routers/imports/jobs.js';
import { PLANNERS, planFor, type Planners } from '../routers/imports/sources/index.js';
import { plainPrincipal } from './plain-auth.js';

const ImportQuery = z
  .object({
    source: ImportSourceParam,
    dryRun: boolParam,
    name: z.string().min(1).max(200).optional().meta({ description: 'A Todoist CSV: the project\'s name (Todoist does not write it in the file).' }),
  })
  .strict();

/** The body, whole (an import is read as one file), refused past `max` as soon as the count passes it. */
function readCapped(req: Request, max: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (piece: Buffer) => {
      size += piece.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        reject(tooLarge(max));
        return;
      }
      parts.push(piece);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(parts, size)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('aborted'));
    });
  });
}

const tooLarge = (max: number) => new AppError('payload_too_large', `The file is larger than this server's import limit of ${max} bytes (CAIRN_MAX_IMPORT_BYTES).`);

/** `extra`: sources another floor reads (the process adds `.ics`: server/import-ics.ts). */
export function startImport(deps: Deps, extra: Planners = {}) {
  const planners: Planners = { ...PLANNERS, ...extra };
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const principal = await plainPrincipal(deps, req, { firstPartyOnly: true }, true);
      const q = req.url.indexOf('?');
      const raw: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1))) if (v !== '') raw[k] = v;
      const parsed = ImportQuery.safeParse(raw);
      if (!parsed.success) {
        const errors = zodFieldErrors(parsed.error.issues);
        throw new AppError('validation_failed', invalidDetail(errors), { errors });
      }
      const max = deps.config.maxImportBytes;
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > max) throw tooLarge(max);
      assertNoRunningJob(principal);
      const body = await readCapped(req, max);
      const plan = planFor(planners, parsed.data.source, body, { name: parsed.data.name });
      const job = startImportJob(deps, principal, plan, parsed.data.dryRun ?? false);
      res.status(202).setHeader('Location', `/v1/imports/${job.id}`);
      res.setHeader('Cache-Control', 'no-store');
      res.json(job);
    } catch (e) {
      if (!req.complete && !req.destroyed) {
        // Refused before the whole body was read: discard the rest once the answer is out.
        res.on('finish', () => req.resume());
      }
      next(e);
    }
  };
}
