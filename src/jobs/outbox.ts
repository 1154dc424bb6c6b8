import type { Executor } from '../db/types.js';
import { toJson } from '../db/json.js';
import * as repo from './jobs.repository.js';

/**
 * The event catalog (decisions G15). An event is written with `emitEvent` inside the transaction
 * of the change that causes it, so a rolled-back change emits nothing and a crash after commit
 * loses nothing; webhook delivery reads the outbox afterwards.
 */
export const EVENT_TYPES = ['content.published', 'content.archived', 'site_block.published', 'site_block.unpublished', 'form.submitted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export async function emitEvent(tx: Executor, siteId: string, type: EventType, data: Record<string, unknown>, at = new Date().toISOString()): Promise<void> {
  await repo.insertOutboxEvent(tx, { siteId, type, payload: toJson(data), at });
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
