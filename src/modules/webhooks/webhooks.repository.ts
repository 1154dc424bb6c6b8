import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { AutoId, Bool, Executor, Json, Timestamp } from '../../db/types.js';
import type { OutboxEventsTable } from '../../jobs/jobs.repository.js';
import { dateBound, paginate, type ListQuery } from '../../shared/pagination.js';
import { claimRows } from '../../jobs/claim.js';

export interface WebhooksTable {
  id: AutoId;
  site_id: string;
  url: string;
  description: string | null;
  events: Json<string[]>;
  is_active: Bool;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  consecutive_failures: number;
  disabled_reason: string | null;
  disabled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: AutoId;
  site_id: string;
  webhook_id: number;
  event_id: number | null;
  message_id: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  cycle_attempts: number;
  next_attempt_at: Timestamp | null;
  locked_until: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  id: AutoId;
  site_id: string;
  delivery_id: number;
  attempted_at: Timestamp;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body_excerpt: string | null;
}

declare module '../../db/types.js' {
  interface DB {
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
export type OutboxRow = Selectable<OutboxEventsTable>;

// ---- webhooks ----

export function updateWebhook(db: Executor, siteId: string, id: number, patch: Updateable<WebhooksTable>) {
  return db.updateTable('webhooks').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/** The active webhooks of these sites (the dispatcher filters them by event type). */
export function activeWebhooksOfSites(db: Executor, siteIds: string[]) {
  if (siteIds.length === 0) return Promise.resolve([] as WebhookRow[]);
  return db.selectFrom('webhooks').selectAll().where('site_id', 'in', siteIds).where('is_active', '=', true).orderBy('id').execute();
}

export function webhooksByIds(db: Executor, ids: number[]) {
  if (ids.length === 0) return Promise.resolve([] as WebhookRow[]);
  return db.selectFrom('webhooks').selectAll().where('id', 'in', ids).execute();
}

/** Resets the failure counter after a successful attempt (only writes when there is something to reset). */
export function resetFailures(db: Executor, siteId: string, id: number, at: string) {
  return db
    .updateTable('webhooks')
    .set({ consecutive_failures: 0, updated_at: at })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .where('consecutive_failures', '>', 0)
    .execute();
}

/** Counts one more delivery that failed for good; returns the new count. */
export async function incrementFailures(db: Executor, siteId: string, id: number, at: string): Promise<number> {
  const row = await db
    .updateTable('webhooks')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), updated_at: at }))
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returning('consecutive_failures')
    .executeTakeFirst();
  return Number(row?.consecutive_failures ?? 0);
}

export function disableWebhook(db: Executor, siteId: string, id: number, reason: string, at: string) {
  return db
    .updateTable('webhooks')
    .set({ is_active: false, disabled_reason: reason, disabled_at: at, updated_at: at })
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .execute();
}

// ---- outbox ----

/**
 * Claims undispatched outbox events, oldest first, and marks them dispatched inside the caller's
 * transaction (jobs/claim.ts): another instance dispatching at the same moment takes the next
 * ones; a rollback leaves them undispatched.
 */
export function claimOutboxEvents(tx: Executor, at: string, limit: number): Promise<OutboxRow[]> {
  return claimRows<OutboxRow>(tx, {
    table: 'outbox_events',
    set: sql`dispatched_at = ${at}`,
    candidates: sql`select id from outbox_events where dispatched_at is null order by id limit ${limit}`,
  });
}

// ---- deliveries ----

/** Inserts deliveries; one that exists already (same site and message id) is left alone. */
export async function insertDeliveries(db: Executor, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.columns(['site_id', 'message_id']).doNothing())
      .execute();
  }
}

export async function insertDelivery(db: Executor, row: Insertable<WebhookDeliveriesTable>): Promise<number> {
  const { id } = await db.insertInto('webhook_deliveries').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export function findDelivery(db: Executor, siteId: string, webhookId: number, id: number) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listDeliveries(db: Executor, siteId: string, webhookId: number, query: ListQuery & { status?: DeliveryStatus; eventType?: string }) {
  let base = db.selectFrom('webhook_deliveries').selectAll().where('site_id', '=', siteId).where('webhook_id', '=', webhookId);
  if (query.status) base = base.where('status', '=', query.status);
  if (query.eventType) base = base.where('event_type', '=', query.eventType);
  if (query.dateFrom) base = base.where('created_at', '>=', dateBound(query.dateFrom, false));
  if (query.dateTo) base = base.where('created_at', '<=', dateBound(query.dateTo, true));
  const column = (query.sortBy ?? 'created_at') as 'created_at' | 'updated_at';
  const order = query.sortOrder ?? (query.sortBy ? 'asc' : 'desc');
  return paginate(base, query, (qb) => qb.orderBy(column, order).orderBy('id', order));
}

export function updateDelivery(db: Executor, id: number, patch: Updateable<WebhookDeliveriesTable>) {
  return db.updateTable('webhook_deliveries').set(patch).where('id', '=', id).execute();
}

/** Gives claimed deliveries back untouched (they stay due, for the next pass). */
export function releaseDeliveries(db: Executor, ids: number[]) {
  if (ids.length === 0) return Promise.resolve();
  return db.updateTable('webhook_deliveries').set({ locked_until: null }).where('id', 'in', ids).where('status', '=', 'pending').execute();
}

/**
 * Claims up to `limit` due pending deliveries of active webhooks for `lockMs`, in one statement,
 * so no two workers ever send the same attempt: PostgreSQL skips rows another instance holds
 * (FOR UPDATE SKIP LOCKED); SQLite runs one writer at a time. A webhook that has a delivery on
 * its way (locked) gets no other one claimed meanwhile, so its deliveries go out one after the other.
 */
export function claimDueDeliveries(db: Executor, now: string, lockedUntil: string, limit: number): Promise<DeliveryRow[]> {
  return claimRows<DeliveryRow>(db, {
    table: 'webhook_deliveries',
    set: sql`locked_until = ${lockedUntil}`,
    lockAlias: 'd',
    candidates: sql`
      select d.id from webhook_deliveries d
      join webhooks w on w.id = d.webhook_id
      where d.status = 'pending' and d.next_attempt_at <= ${now}
        and (d.locked_until is null or d.locked_until < ${now})
        and w.is_active = ${true}
        and not exists (
          select 1 from webhook_deliveries o
          where o.webhook_id = d.webhook_id and o.id <> d.id and o.status = 'pending' and o.locked_until >= ${now}
        )
      order by d.next_attempt_at, d.id
      limit ${limit}`,
  });
}

// ---- attempts ----

export function insertAttempt(db: Executor, row: Insertable<WebhookAttemptsTable>) {
  return db.insertInto('webhook_attempts').values(row).execute();
}

export async function attemptsOf(db: Executor, siteId: string, deliveryIds: number[]): Promise<Map<number, AttemptRow[]>> {
  const out = new Map<number, AttemptRow[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('id')
    .execute();
  for (const r of rows) out.get(Number(r.delivery_id))?.push(r);
  return out;
}

// ---- retention ----

/**
 * Deletes up to `limit` deliveries that finished (succeeded, or failed for good) before
 * `cutoff`, with their attempts (by cascade); returns how many. A pending delivery, or one
 * scheduled again by a redelivery, is never deleted.
 */
export async function deleteFinishedDeliveries(db: Executor, cutoff: string, limit: number): Promise<number> {
  const oldest = db.selectFrom('webhook_deliveries').select('id').where('status', 'in', ['succeeded', 'failed']).where('updated_at', '<', cutoff).limit(limit);
  const result = await db.deleteFrom('webhook_deliveries').where('id', 'in', oldest).where('status', 'in', ['succeeded', 'failed']).executeTakeFirst();
  return Number(result.numDeletedRows);
}
