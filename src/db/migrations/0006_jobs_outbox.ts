import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * The durable jobs table (scheduled work, worked by the in-process worker) and the outbox of
 * events, written in the same transaction as the change that causes them (decisions G15).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('jobs'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    // At most one pending job per key and site (e.g. "content.publish:42"), so rescheduling replaces.
    .addColumn('key', 'text')
    .addColumn('payload', c.json, (col) => col.notNull())
    .addColumn('run_at', c.timestamp, (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('locked_until', c.timestamp)
    .addColumn('last_error', 'text')
    .addColumn('failed_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('jobs_site_key_uq').on('jobs').columns(['site_id', 'key']).unique().execute();
  await db.schema.createIndex('jobs_due_idx').on('jobs').columns(['run_at']).execute();

  await c
    .serialId(db.schema.createTable('outbox_events'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('payload', c.json, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    // Set once the event has been fanned out to the site's webhooks.
    .addColumn('dispatched_at', c.timestamp)
    .execute();
  await db.schema.createIndex('outbox_site_created_idx').on('outbox_events').columns(['site_id', 'id']).execute();
  await db.schema.createIndex('outbox_pending_idx').on('outbox_events').columns(['dispatched_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outbox_events').execute();
  await db.schema.dropTable('jobs').execute();
}
