// Import jobs (POST /v1/imports, GET /v1/imports/{id}; docs/api.md "Imports"). A job runs in this
// process, between other requests (routers/imports/apply.ts yields after every batch), and its
// status lives in memory: a restart forgets jobs (an interrupted import is run again; its links
// make the re-run create only what is missing). A user runs one job at a time; the last
// JOBS_KEPT finished jobs of a user stay readable for JOB_TTL_MS.
//
// The job holds the caller's principal (its data key) while it runs, which is the one thing here
// that outlives its request: the import is the request's work, continued. Every batch checks the
// credential still stands (atomic.ts runWrite), so a logout or password change stops the job; the
// principal and the uploaded body are dropped when the job ends.
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { toProblem } from '../middleware/problems.js';
import { applyPlan, type ImportReport } from './apply.js';
import type { ImportPlan, ImportSource } from './plan.js';

export const JOBS_KEPT = 10;
export const JOB_TTL_MS = 60 * 60_000;

export type ImportJobOut = {
  id: string;
  source: ImportSource;
  dryRun: boolean;
  status: 'running' | 'succeeded' | 'failed';
  done: number;
  total: number;
  report: ImportReport | null;
  error: { code: string; detail: string } | null;
  createdAt: string;
  finishedAt: string | null;
};

type Job = ImportJobOut & { userId: string; finished: number | null };

const JOBS = new Map<string, Job>();

function prune(now: number): void {
  const byUser = new Map<string, Job[]>();
  for (const j of JOBS.values()) {
    if (j.finished !== null && now - j.finished > JOB_TTL_MS) JOBS.delete(j.id);
    else if (j.finished !== null) byUser.set(j.userId, [...(byUser.get(j.userId) ?? []), j]);
  }
  for (const list of byUser.values()) for (const j of list.slice(0, Math.max(0, list.length - JOBS_KEPT))) JOBS.delete(j.id);
}

const out = ({ userId: _u, finished: _f, ...job }: Job): ImportJobOut => ({ ...job, report: job.report, error: job.error });

/** Refuses a second running job of the same user (before the body is read). */
export function assertNoRunningJob(p: Principal): void {
  for (const j of JOBS.values()) {
    if (j.userId === p.userId && j.status === 'running') throw new AppError('conflict', `An import is already running for this account (${j.id}); read GET /v1/imports/${j.id}.`);
  }
}

/** Starts the import of `plan` (read from the upload by the door) for `p`; answers the job at once, the work runs after. */
export function startImportJob(deps: Deps, p: Principal, plan: ImportPlan, dryRun: boolean): ImportJobOut {
  const source: ImportSource = plan.source;
  const now = deps.clock();
  prune(now);
  assertNoRunningJob(p);
  const job: Job = { id: newId(), userId: p.userId, source, dryRun, status: 'running', done: 0, total: 0, report: null, error: null, createdAt: iso(now), finishedAt: null, finished: null };
  JOBS.set(job.id, job);
  setImmediate(() => {
    applyPlan(deps, p, plan, {
      dryRun,
      progress: (done, total) => {
        job.done = done;
        job.total = total;
      },
    }).then(
      (report) => {
        job.status = 'succeeded';
        job.report = report;
        job.finished = deps.clock();
        job.finishedAt = iso(job.finished);
      },
      (e: unknown) => {
        const { problem, code } = toProblem(e);
        if (code === 'internal') deps.log.error({ err: e, job: job.id }, 'import job failed');
        job.status = 'failed';
        job.error = { code, detail: String((problem as { detail?: unknown }).detail ?? 'The import failed.') };
        job.finished = deps.clock();
        job.finishedAt = iso(job.finished);
      },
    );
  });
  return out(job);
}

export function getImportJob(deps: Deps, p: Principal, id: string): ImportJobOut {
  prune(deps.clock());
  const job = JOBS.get(id);
  if (!job || job.userId !== p.userId) throw notFound('Import job');
  return out(job);
}
