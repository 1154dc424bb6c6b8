import type { Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * What the retention task (jobs/retention.ts) deletes by age, it finds by index: failed jobs by
 * `failed_at`, finished deliveries by status and `updated_at`. Deleting a delivery cascades to
 * its attempts, which both databases look up by `delivery_id` for every deleted row: without an
 * index of its own that is a scan of every attempt per delivery.
 */
export async function up(db: Kysely<any>, _dialect: MigrationDialect): Promise<void> {
  await db.schema.createIndex('jobs_failed_idx').on('jobs').columns(['failed_at']).execute();
  await db.schema.createIndex('webhook_deliveries_finished_idx').on('webhook_deliveries').columns(['status', 'updated_at']).execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_attempts_delivery_idx').execute();
  await db.schema.dropIndex('webhook_deliveries_finished_idx').execute();
  await db.schema.dropIndex('jobs_failed_idx').execute();
}
