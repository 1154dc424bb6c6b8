import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Site bundles (issue 35, decisions BN1): `bundle_id_map` remembers which record of the target
 * site each record of a bundle's source site became, so importing the same bundle again updates
 * those records instead of making copies; `site_exports` holds the export jobs started over HTTP.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('bundle_id_map')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('source_site_id', 'text', (col) => col.notNull())
    .addColumn('table_name', 'text', (col) => col.notNull())
    .addColumn('source_id', 'text', (col) => col.notNull())
    .addColumn('target_id', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('bundle_id_map_pk', ['site_id', 'source_site_id', 'table_name', 'source_id'])
    .execute();
  await db.schema
    .createTable('site_exports')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('with_submissions', c.bool, c.boolDefault(false))
    .addColumn('storage_key', 'text')
    .addColumn('bytes', c.real)
    .addColumn('error', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('finished_at', c.timestamp)
    .addColumn('expires_at', c.timestamp)
    .execute();
  await db.schema.createIndex('site_exports_site_idx').on('site_exports').columns(['site_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('site_exports').execute();
  await db.schema.dropTable('bundle_id_map').execute();
}
