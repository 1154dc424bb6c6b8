import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** IndexNow submissions (decisions S12): a per-site watermark of what was submitted, and a log row per URL. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema.alterTable('seo_settings').addColumn('index_now_submitted_until', c.timestamp).execute();
  await c
    .serialId(db.schema.createTable('indexnow_logs'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('response_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('submitted_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('indexnow_logs_site_idx').on('indexnow_logs').columns(['site_id', 'id']).execute();
  await db.schema.createIndex('indexnow_logs_submitted_idx').on('indexnow_logs').columns(['submitted_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('indexnow_logs').execute();
  await db.schema.alterTable('seo_settings').dropColumn('index_now_submitted_until').execute();
}
