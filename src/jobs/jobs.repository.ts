import { sql, type Insertable, type Selectable } from 'kysely';
import type { AutoId, Executor, Json, Timestamp } from '../db/types.js';
import { claimRows } from './claim.js';
import { prepared } from '../db/prepared.js';

export interface JobsTable {
  id: AutoId;
  site_id: string;
  type: string;
  key: string | null;
  payload: Json<Record<string, unknown>>;
  run_at: Timestamp;
  attempts: number;
  locked_until: Timestamp | null;
  last_error: string | null;
  failed_at: Timestamp | null;
  created_at: Timestamp;
}

export interface OutboxEventsTable {
  id: AutoId;
  site_id: string;
  type: string;
  payload: Json<Record<string, unknown>>;
  created_at: Timestamp;
  dispatched_at: Timestamp | null;
}

declare module '../db/types.js' {
  interface DB {
    jobs: JobsTable;
    outbox_events: OutboxEventsTable;
  }
}

export type JobRow = Selectable<JobsTable>;

const insertJobQuery = prepared((db, p: Insertable<JobsTable>) => db.insertInto('jobs').values(p));

type NewJob = { siteId: string; type: string; key: string | null; payload: string; runAt: string; at: string };

/** A new job's row: due at `runAt`, no attempts yet. */
const jobRow = (job: NewJob) => ({
  site_id: job.siteId,
  type: job.type,
  key: job.key,
  payload: job.payload,
  run_at: job.runAt,
  attempts: 0,
  locked_until: null,
  last_error: null,
  failed_at: null,
  created_at: job.at,
});

/** The keyed job's row made new again (what a conflict on `(site_id, key)` sets). */
const renewed = (job: NewJob) => ({
  type: job.type,
  payload: job.payload,
  run_at: job.runAt,
  attempts: 0,
  locked_until: null,
  last_error: null,
  failed_at: null,
});

/** Inserts a job, or replaces the pending job with the same key (rescheduling). */
export async function upsertJob(db: Executor, job: NewJob) {
  if (!job.key) return insertJobQuery.execute(db, jobRow(job));
  return db
    .insertInto('jobs')
    .values(jobRow(job))
    .onConflict((oc) => oc.columns(['site_id', 'key']).doUpdateSet(renewed(job)))
    .execute();
}

/**
 * Queues a keyed job unless one with the key is already pending or running (a second request
 * joins the first); a job with the key that failed for good is queued again.
 */
export function ensureJob(db: Executor, job: NewJob & { key: string }) {
  return db
    .insertInto('jobs')
    .values(jobRow(job))
    .onConflict((oc) => oc.columns(['site_id', 'key']).doUpdateSet(renewed(job)).where('jobs.failed_at', 'is not', null))
    .execute();
}

export function deleteJobByKey(db: Executor, siteId: string, key: string) {
  return db.deleteFrom('jobs').where('site_id', '=', siteId).where('key', '=', key).execute();
}

/** Claims up to `limit` due jobs for `lockMs` (jobs/claim.ts: no two workers claim the same job). */
export function claimDueJobs(db: Executor, now: string, lockMs: number, limit: number): Promise<JobRow[]> {
  const lockedUntil = new Date(Date.parse(now) + lockMs).toISOString();
  return claimRows<JobRow>(db, {
    table: 'jobs',
    set: sql`locked_until = ${lockedUntil}, attempts = attempts + 1`,
    candidates: sql`
      select id from jobs
      where run_at <= ${now} and failed_at is null and (locked_until is null or locked_until < ${now})
      order by run_at, id limit ${limit}`,
  });
}

export function completeJob(db: Executor, id: number) {
  return db.deleteFrom('jobs').where('id', '=', id).execute();
}

export function retryJob(db: Executor, id: number, runAt: string, error: string) {
  return db
    .updateTable('jobs')
    .set({ run_at: runAt, locked_until: null, last_error: error.slice(0, 2000) })
    .where('id', '=', id)
    .execute();
}

export function failJob(db: Executor, id: number, at: string, error: string) {
  return db
    .updateTable('jobs')
    .set({ failed_at: at, locked_until: null, last_error: error.slice(0, 2000) })
    .where('id', '=', id)
    .execute();
}

// Every event of every module is written here: prepared once (P16).
const insertEventQuery = prepared((db, p: { siteId: string; type: string; payload: string; at: string }) =>
  db.insertInto('outbox_events').values({ site_id: p.siteId, type: p.type, payload: p.payload, created_at: p.at, dispatched_at: null }),
);

export function insertOutboxEvent(db: Executor, event: { siteId: string; type: string; payload: string; at: string }) {
  return insertEventQuery.execute(db, event);
}

/** Deletes up to `limit` outbox events dispatched before `cutoff` (retention); returns how many. */
export async function deleteDispatchedEvents(db: Executor, cutoff: string, limit: number): Promise<number> {
  const oldest = db.selectFrom('outbox_events').select('id').where('dispatched_at', '<', cutoff).orderBy('dispatched_at').limit(limit);
  const result = await db.deleteFrom('outbox_events').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes up to `limit` jobs that failed for good before `cutoff` (retention); returns how many. */
export async function deleteFailedJobs(db: Executor, cutoff: string, limit: number): Promise<number> {
  const oldest = db.selectFrom('jobs').select('id').where('failed_at', '<', cutoff).orderBy('failed_at').limit(limit);
  const result = await db.deleteFrom('jobs').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Whether a site wants e-mail for a preference column of its notification settings (`fallback` when it never saved them). */
export async function emailPreference(
  db: Executor,
  siteId: string,
  column: 'form_submission' | 'content_published' | 'new_review' | 'review_approved',
  fallback: boolean,
) {
  const row = await db.selectFrom('notification_settings').select(column).where('site_id', '=', siteId).executeTakeFirst();
  return row ? Boolean((row as Record<string, unknown>)[column]) : fallback;
}
