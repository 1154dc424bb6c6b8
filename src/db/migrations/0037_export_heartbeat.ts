import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Export jobs' heartbeat (issue 35, decisions BX13): a running export writes `heartbeat_at` every
 * few seconds, so one whose process died (no heartbeat for a minute) is told apart from one that
 * is still being written, and ends `failed` instead of staying `running` forever.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema.alterTable('site_exports').addColumn('heartbeat_at', c.timestamp).execute();
  await db.schema.createIndex('site_exports_status_idx').on('site_exports').columns(['status', 'heartbeat_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('site_exports_status_idx').execute();
  await db.schema.alterTable('site_exports').dropColumn('heartbeat_at').execute();
}
