import type { Executor } from '../db/types.js';
import type { WorkerTask } from './worker.js';
import * as repo from './jobs.repository.js';

/** Rows deleted per statement: short transactions, so no request waits long on a lock. */
export const RETENTION_BATCH = 1000;
/** How often each retention task looks for old rows once it has caught up. */
export const RETENTION_INTERVAL_MS = 3_600_000;

const DAY_MS = 86_400_000;

/**
 * A worker task that deletes rows older than `days` (0 keeps them for ever), one batch per
 * worker tick (decisions H26). After a full batch it goes on at the next tick, so a backlog
 * drains at one batch per poll interval without starving the jobs; once a batch comes back
 * short it sleeps for the interval. Several processes may run it: a row deletes once.
 */
export function retentionTask(
  days: number,
  prune: (db: Executor, cutoff: string, limit: number) => Promise<number>,
  intervalMs = RETENTION_INTERVAL_MS,
): WorkerTask {
  let nextRunAt = 0;
  return async ({ db, log }) => {
    const now = Date.now();
    if (days <= 0 || now < nextRunAt) return 0;
    const deleted = await prune(db, new Date(now - days * DAY_MS).toISOString(), RETENTION_BATCH);
    nextRunAt = deleted >= RETENTION_BATCH ? 0 : now + intervalMs;
    if (deleted > 0) log.debug({ deleted, prune: prune.name }, 'retention');
    // Reported as no work: a backlog continues at the poll interval, never in a tight loop.
    return 0;
  };
}

/** The retention of the jobs module's own tables: dispatched outbox events and failed jobs. */
export function registerRetention(worker: { task(name: string, run: WorkerTask): unknown }, retention: { outboxDays: number; failedJobsDays: number }): void {
  worker.task('retention.outbox', retentionTask(retention.outboxDays, repo.deleteDispatchedEvents));
  worker.task('retention.jobs', retentionTask(retention.failedJobsDays, repo.deleteFailedJobs));
}
