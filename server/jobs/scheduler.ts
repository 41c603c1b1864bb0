// A small in-process scheduler for periodic jobs (purges). Each job runs on a real-time interval
// but reads "now" from the injected clock; a failing job is logged and tried again next time.
// Jobs are synchronous (better-sqlite3), so two runs never overlap; the one asynchronous job (the
// scheduled backup) keeps a second run from starting while one is under way.
import { sweepUploads } from '../../routers/attachments/files.js';
import type { Deps } from '../../routers/deps.js';
import { purgeIdempotencyKeys } from './purge.js';
import { purgeTrash } from './purge-trash.js';
import { purgeCredentials } from './purge-credentials.js';
import { purgeWebhookDeliveries } from './purge-webhooks.js';
import { metricsFor } from '../metrics.js';
import { backupJobs } from './backup.js';

// A job may be asynchronous (the scheduled backup steps through SQLite's backup API between
// requests); it keeps itself from overlapping (server/jobs/backup.ts).
export type Job = { name: string; everyMs: number; run: (deps: Deps) => number | void | Promise<number | void> };

/** Every periodic job; later purges (trash, deliveries) add a line here. */
export const JOBS: Job[] = [
  { name: 'purge-idempotency-keys', everyMs: 10 * 60_000, run: purgeIdempotencyKeys },
  { name: 'purge-trash', everyMs: 60 * 60_000, run: purgeTrash },
  { name: 'purge-credentials', everyMs: 10 * 60_000, run: purgeCredentials },
  { name: 'purge-webhook-deliveries', everyMs: 60 * 60_000, run: purgeWebhookDeliveries },
  // Uploads a crash left half-staged (routers/attachments/files.ts).
  { name: 'sweep-uploads', everyMs: 10 * 60_000, run: sweepUploads },
];

/** Runs one job; an asynchronous job's promise is returned (it never rejects: failures are logged). */
export function runJob(deps: Deps, job: Job): void | Promise<void> {
  // Issue 33 item 4: runs, failures and rows count in cairn_job_* (server/metrics.ts).
  const metrics = metricsFor(deps);
  const done = (n: number | void) => {
    if (typeof n === 'number' && n > 0) deps.log.info({ job: job.name, rows: n }, 'job done');
    metrics?.observeJob(job.name, true, typeof n === 'number' ? n : 0);
  };
  const failed = (err: unknown) => {
    deps.log.error({ err, job: job.name }, 'job failed');
    metrics?.observeJob(job.name, false, 0);
  };
  try {
    const n = job.run(deps);
    if (n instanceof Promise) return n.then(done, failed);
    else done(n);
  } catch (err) {
    failed(err);
  }
}

/** Starts every job (once now, then on its interval); the returned function stops them. */
export function startJobs(deps: Deps, jobs: Job[] = [...JOBS, ...backupJobs(deps.config)]): () => void {
  const timers = jobs.map((job) => {
    runJob(deps, job);
    const t = setInterval(() => runJob(deps, job), job.everyMs);
    t.unref();
    return t;
  });
  return () => {
    for (const t of timers) clearInterval(t);
  };
}
