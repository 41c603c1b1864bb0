// Import jobs (POST /v1/imports, GET /v1/imports/{id}; docs/api.md "Imports", docs/import.md
// "Jobs and restarts"). A job runs in this process, between other requests
// (routers/imports/apply.ts yields after every batch). Its status is kept in `import_jobs`
// (db/schema/imports.ts): id, owner, source kind, status, progress, the report's numbers, a
// failure's problem code and the times; nothing of the file and no key. The full report (it quotes
// the file: what could not be mapped, what was refused) lives in this process's memory only, so
// after a restart a finished job reads with its `counts` and `report: null`. A job a restart cut
// off is marked `interrupted` when the server starts (markInterruptedImports); running the same
// import again is safe, its links make the re-run create only what is missing. A user runs one job
// at a time; the last JOBS_KEPT finished jobs of a user stay readable for JOB_TTL_MS.
//
// The job holds the caller's principal (its data key) while it runs, which is the one thing here
// that outlives its request: the import is the request's work, continued. Every batch checks the
// credential still stands (atomic.ts runWrite), so a logout, password change or key rotation stops
// the job. The job owns that principal's key from its start: it is zeroed when the job ends,
// whatever its end; the plan (the file's content) is dropped with it.
import { and, desc, eq, isNotNull, lt, notInArray } from 'drizzle-orm';
import sodium from 'sodium-native';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { importJobs } from '../../db/schema/imports.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { toProblem } from '../middleware/problems.js';
import { applyPlan, type ImportReport } from './apply.js';
import type { ImportPlan, ImportSource, PlanKind } from './plan.js';

export const JOBS_KEPT = 10;
export const JOB_TTL_MS = 60 * 60_000;
/** Progress is written to the job's row at most this often (and after the first batch). */
export const PROGRESS_WRITE_MS = 1_000;

export type ImportJobStatus = 'running' | 'succeeded' | 'failed' | 'interrupted';

/** The report's numbers: what is kept of it across a restart. */
export type ImportCounts = { created: Record<PlanKind, number>; existing: Record<PlanKind, number>; failed: number; unmapped: number };

export type ImportJobOut = {
  id: string;
  source: ImportSource;
  dryRun: boolean;
  status: ImportJobStatus;
  done: number;
  total: number;
  report: ImportReport | null;
  counts: ImportCounts | null;
  error: { code: string; detail: string } | null;
  createdAt: string;
  finishedAt: string | null;
};

type Job = ImportJobOut & { userId: string; finished: number | null };

/** This process's jobs: the running ones, and the full reports of those it finished. */
const JOBS = new Map<string, Job>();

type Row = typeof importJobs.$inferSelect;

const countsOf = (r: ImportReport): ImportCounts => ({ created: { ...r.created }, existing: { ...r.existing }, failed: r.failed.length, unmapped: r.unmapped.length });

function pruneMemory(now: number): void {
  const byUser = new Map<string, Job[]>();
  for (const j of JOBS.values()) {
    if (j.finished !== null && now - j.finished > JOB_TTL_MS) JOBS.delete(j.id);
    else if (j.finished !== null) byUser.set(j.userId, [...(byUser.get(j.userId) ?? []), j]);
  }
  for (const list of byUser.values()) for (const j of list.slice(0, Math.max(0, list.length - JOBS_KEPT))) JOBS.delete(j.id);
}

/** Finished rows past JOB_TTL_MS (of everyone, or of one user), and a user's beyond the last JOBS_KEPT. */
function pruneRows(deps: Deps, now: number, userId?: string): void {
  const old = and(isNotNull(importJobs.finishedAt), lt(importJobs.finishedAt, now - JOB_TTL_MS));
  deps.db
    .delete(importJobs)
    .where(userId === undefined ? old : and(eq(importJobs.userId, userId), old))
    .run();
  if (userId === undefined) return;
  const kept = deps.db
    .select({ id: importJobs.id })
    .from(importJobs)
    .where(and(eq(importJobs.userId, userId), isNotNull(importJobs.finishedAt)))
    .orderBy(desc(importJobs.finishedAt), desc(importJobs.createdAt))
    .limit(JOBS_KEPT)
    .all()
    .map((r) => r.id);
  deps.db
    .delete(importJobs)
    .where(and(eq(importJobs.userId, userId), isNotNull(importJobs.finishedAt), ...(kept.length ? [notInArray(importJobs.id, kept)] : [])))
    .run();
}

const out = ({ userId: _u, finished: _f, ...job }: Job): ImportJobOut => job;

function fromRow(r: Row): ImportJobOut {
  return {
    id: r.id,
    source: r.source as ImportSource,
    dryRun: r.dryRun,
    status: r.status as ImportJobStatus,
    done: r.done,
    total: r.total,
    report: null,
    counts: r.counts === null ? null : (JSON.parse(r.counts) as ImportCounts),
    error: r.errorCode === null ? null : { code: r.errorCode, detail: `The import stopped (${r.errorCode}); its detail is not kept across a restart of the server.` },
    createdAt: iso(r.createdAt),
    finishedAt: r.finishedAt === null ? null : iso(r.finishedAt),
  };
}

/** A write to a job's row that must not end the job's promise chain (the database may be closing). */
function persist(deps: Deps, job: Job, write: () => void): void {
  try {
    write();
  } catch (e) {
    deps.log.warn({ err: e, job: job.id }, 'import job: its status could not be written');
  }
}

/**
 * At start (server/main.ts), before any request: a job row still `running` belongs to a process
 * that ended without finishing it (a crash, a kill, a stop mid-import). It is marked
 * `interrupted`, finished now (so it stays readable for JOB_TTL_MS after the restart); finished
 * rows past their time go. Returns how many were marked.
 */
export function markInterruptedImports(deps: Deps): number {
  const now = deps.clock();
  const running = [...JOBS.values()].filter((j) => j.status === 'running').map((j) => j.id);
  const n = deps.db
    .update(importJobs)
    .set({ status: 'interrupted', finishedAt: now })
    .where(and(eq(importJobs.status, 'running'), ...(running.length ? [notInArray(importJobs.id, running)] : [])))
    .run().changes;
  pruneRows(deps, now);
  if (n) deps.log.info({ jobs: n }, 'import jobs cut off by the last stop are marked interrupted');
  return n;
}

/** Refuses a second running job of the same user (before the body is read). */
export function assertNoRunningJob(p: Principal): void {
  for (const j of JOBS.values()) {
    if (j.userId === p.userId && j.status === 'running') throw new AppError('conflict', `An import is already running for this account (${j.id}); read GET /v1/imports/${j.id}.`);
  }
}

/**
 * Starts the import of `plan` (read from the upload by the door) for `p`; answers the job at once,
 * the work runs after. From here the job owns `p.dek`: it is zeroed when the job ends.
 */
export function startImportJob(deps: Deps, p: Principal, plan: ImportPlan, dryRun: boolean): ImportJobOut {
  const source: ImportSource = plan.source;
  const now = deps.clock();
  pruneMemory(now);
  assertNoRunningJob(p);
  pruneRows(deps, now, p.userId);
  const job: Job = { id: newId(), userId: p.userId, source, dryRun, status: 'running', done: 0, total: 0, report: null, counts: null, error: null, createdAt: iso(now), finishedAt: null, finished: null };
  deps.db.insert(importJobs).values({ id: job.id, userId: p.userId, source, dryRun, status: 'running', done: 0, total: 0, counts: null, errorCode: null, createdAt: now, updatedAt: now, finishedAt: null }).run();
  JOBS.set(job.id, job);
  const row = and(eq(importJobs.id, job.id), eq(importJobs.userId, job.userId));
  let written = -Infinity;
  const finish = (set: Partial<typeof importJobs.$inferInsert>) => {
    job.finished = deps.clock();
    job.finishedAt = iso(job.finished);
    persist(deps, job, () =>
      deps.db
        .update(importJobs)
        .set({ status: job.status, done: job.done, total: job.total, updatedAt: job.finished!, finishedAt: job.finished!, ...set })
        .where(row)
        .run(),
    );
  };
  setImmediate(() => {
    applyPlan(deps, p, plan, {
      dryRun,
      progress: (done, total) => {
        job.done = done;
        job.total = total;
        const t = deps.clock();
        if (t - written < PROGRESS_WRITE_MS) return;
        written = t;
        persist(deps, job, () => deps.db.update(importJobs).set({ done, total, updatedAt: t }).where(and(row, eq(importJobs.status, 'running'))).run());
      },
    })
      .then(
        (report) => {
          job.status = 'succeeded';
          job.report = report;
          job.counts = countsOf(report);
          finish({ counts: JSON.stringify(job.counts) });
        },
        (e: unknown) => {
          const { problem, code } = toProblem(e);
          if (code === 'internal') deps.log.error({ err: e, job: job.id }, 'import job failed');
          job.status = 'failed';
          job.error = { code, detail: String((problem as { detail?: unknown }).detail ?? 'The import failed.') };
          finish({ errorCode: code });
        },
      )
      .finally(() => sodium.sodium_memzero(p.dek));
  });
  return out(job);
}

export function getImportJob(deps: Deps, p: Principal, id: string): ImportJobOut {
  const now = deps.clock();
  pruneMemory(now);
  const job = JOBS.get(id);
  if (job) {
    if (job.userId !== p.userId) throw notFound('Import job');
    return out(job);
  }
  // Not this process's: read from its row (a job of an earlier run of the server).
  const r = deps.db
    .select()
    .from(importJobs)
    .where(and(eq(importJobs.id, id), eq(importJobs.userId, p.userId)))
    .get();
  if (!r || (r.finishedAt !== null && now - r.finishedAt > JOB_TTL_MS)) throw notFound('Import job');
  // Still `running` with no job here: its process ended (the start marks these; this covers a
  // database opened without that step). Finished when it was last seen running.
  if (r.status === 'running') return fromRow({ ...r, status: 'interrupted', finishedAt: r.updatedAt });
  return fromRow(r);
}
