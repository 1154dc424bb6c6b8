import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Webhooks, their deliveries (one per event and webhook, fanned out from the outbox) and the
 * attempts of each delivery (decisions G15).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('webhooks'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    // Subscribed event types, or ["*"] for every event of the catalog.
    .addColumn('events', c.json, (col) => col.notNull())
    .addColumn('is_active', c.bool, c.boolDefault(true))
    // The signing secret `whsec_<base64>`, stored as is: signing needs the key itself, so it
    // cannot be hashed. It is shown only on create and rotation and never logged.
    .addColumn('secret', 'text', (col) => col.notNull())
    // After a rotation the previous secret signs too (a second `v1,` signature) until it expires.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', c.timestamp)
    .addColumn('consecutive_failures', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('webhooks_site_created_idx').on('webhooks').columns(['site_id', 'created_at']).execute();

  await c
    .serialId(db.schema.createTable('webhook_deliveries'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('webhook_id', 'integer', (col) => col.notNull().references('webhooks.id').onDelete('cascade'))
    // The outbox event delivered; null for test events. Not a foreign key: the outbox may be pruned.
    .addColumn('event_id', 'integer')
    // The Standard Webhooks `webhook-id`, the same at every attempt: `msg_<event id>_<webhook id>`.
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('event_type', 'text', (col) => col.notNull())
    // The exact body sent, as text on both databases (jsonb would not keep its bytes).
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    // Failed attempts since the delivery was last (re)scheduled: picks the next backoff delay.
    .addColumn('cycle_attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', c.timestamp)
    .addColumn('locked_until', c.timestamp)
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_site_message_uq').on('webhook_deliveries').columns(['site_id', 'message_id']).unique().execute();
  await db.schema.createIndex('webhook_deliveries_site_webhook_idx').on('webhook_deliveries').columns(['site_id', 'webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_webhook_lock_idx').on('webhook_deliveries').columns(['webhook_id', 'locked_until']).execute();

  await c
    .serialId(db.schema.createTable('webhook_attempts'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('delivery_id', 'integer', (col) => col.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempted_at', c.timestamp, (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (col) => col.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body_excerpt', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_site_delivery_idx').on('webhook_attempts').columns(['site_id', 'delivery_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhooks']) await db.schema.dropTable(t).execute();
}
