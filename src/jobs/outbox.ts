import type { Executor } from '../db/types.js';
import { toJson } from '../db/json.js';
import * as repo from './jobs.repository.js';
import { EMAIL_PREFERENCES, preferenceOf } from '../shared/notification-preferences.js';

/**
 * The event catalog (decisions G15). An event is written with `emitEvent` inside the transaction
 * of the change that causes it, so a rolled-back change emits nothing and a crash after commit
 * loses nothing; webhook delivery reads the outbox afterwards.
 */
export const EVENT_TYPES = [
  'content.published',
  'content.archived',
  'site_block.published',
  'site_block.unpublished',
  'form.submitted',
  'media.uploaded',
  'media.replaced',
  'media.deleted',
  'site.imported',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The job that e-mails an event to the site's recipients (handled by the notifications module). */
export const EMAIL_JOB = 'notify.email';

export async function emitEvent(tx: Executor, siteId: string, type: EventType, data: Record<string, unknown>, at = new Date().toISOString()): Promise<void> {
  await repo.insertOutboxEvent(tx, { siteId, type, payload: toJson(data), at });
  // An event with an e-mail preference the site has on also gets its e-mail job, in the same
  // transaction: sent by the worker, retried with backoff, never in the request path.
  const preference = preferenceOf(type);
  if (preference && (await repo.emailPreference(tx, siteId, EMAIL_PREFERENCES[preference].column, EMAIL_PREFERENCES[preference].default))) {
    await scheduleJob(tx, { siteId, type: EMAIL_JOB, payload: { event: type, data }, runAt: at });
  }
}

/** Schedules (or reschedules, by key) a job; inside the caller's transaction. */
export async function scheduleJob(
  tx: Executor,
  job: { siteId: string; type: string; key?: string; payload: Record<string, unknown>; runAt: string },
): Promise<void> {
  await repo.upsertJob(tx, {
    siteId: job.siteId,
    type: job.type,
    key: job.key ?? null,
    payload: toJson(job.payload),
    runAt: job.runAt,
    at: new Date().toISOString(),
  });
}

export async function cancelJob(tx: Executor, siteId: string, key: string): Promise<void> {
  await repo.deleteJobByKey(tx, siteId, key);
}
