// A small in-process scheduler for periodic jobs (purges). Each job runs on a real-time interval
// but reads "now" from the injected clock; a failing job is logged and tried again next time.
// Jobs are synchronous (better-sqlite3), so two runs never overlap.
import { sweepUploads } from '../../routers/attachments/files.js';
import type { Deps } from '../../routers/deps.js';
import { purgeIdempotencyKeys } from './purge.js';
import { purgeTrash } from './purge-trash.js';
import { purgeCredentials } from './purge-credentials.js';
import { purgeWebhookDeliveries } from './purge-webhooks.js';

export type Job = { name: string; everyMs: number; run: (deps: Deps) => number | void };

/** Every periodic job; later purges (trash, deliveries) add a line here. */
export const JOBS: Job[] = [
  { name: 'purge-idempotency-keys', everyMs: 10 * 60_000, run: purgeIdempotencyKeys },
  { name: 'purge-trash', everyMs: 60 * 60_000, run: purgeTrash },
  { name: 'purge-credentials', everyMs: 10 * 60_000, run: purgeCredentials },
  { name: 'purge-webhook-deliveries', everyMs: 60 * 60_000, run: purgeWebhookDeliveries },
  // Uploads a crash left half-staged (routers/attachments/files.ts).
  { name: 'sweep-uploads', everyMs: 10 * 60_000, run: sweepUploads },
];

export function runJob(deps: Deps, job: Job): void {
  try {
    const n = job.run(deps);
    if (typeof n === 'number' && n > 0) deps.log.info({ job: job.name, rows: n }, 'job done');
  } catch (err) {
    deps.log.error({ err, job: job.name }, 'job failed');
  }
}

/** Starts every job (once now, then on its interval); the returned function stops them. */
export function startJobs(deps: Deps, jobs: Job[] = JOBS): () => void {
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
